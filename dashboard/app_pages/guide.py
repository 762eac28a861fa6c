"""Guide: step through pruning and compaction on the open session, one pass at a time."""

from __future__ import annotations

import streamlit as st

from dashboard import analysis, components, session_state, tables, ui
from dashboard.logic import guide as logic
from dashboard.theme import STATUS_MARKS, STATUS_MEANINGS

ss = st.session_state


def step_by(delta: int) -> None:
    ss["guide_step"] = logic.moved(ss.get("guide_step"), delta)
    session_state.remember_widget("guide_step")


def navigation(link: dict[str, str] | None) -> int:
    linked = (link or {}).get("step", "")
    if linked.isdigit() and 1 <= int(linked) <= len(logic.TITLES):  # a reload's or a link's step
        ss["guide_step__kept"] = logic.TITLES[int(linked) - 1]
    session_state.restore_widget("guide_step")
    if ss.get("guide_step") not in logic.TITLES:
        linked = st.query_params.get("step", "")
        ss["guide_step"] = logic.TITLES[int(linked) - 1] if linked.isdigit() and \
            1 <= int(linked) <= len(logic.TITLES) else logic.TITLES[0]
    index = logic.TITLES.index(ss["guide_step"])
    # one row: the steps, then Previous and Next (a row each took 100 px of the presenter's screen)
    steps, c1, c2 = st.columns([7, 1.3, 1.3], vertical_alignment="center")
    with steps:
        title = st.segmented_control("Step", logic.TITLES, key="guide_step", label_visibility="collapsed",
                                     on_change=session_state.remember_widget, args=("guide_step",))
    c1.button("◀ Previous", on_click=step_by, args=(-1,), key="guide_prev", width="stretch",
              disabled=index == 0, help="Previous step (← key)")
    c2.button("Next ▶", on_click=step_by, args=(1,), key="guide_next", width="stretch",
              disabled=index == len(logic.TITLES) - 1, help="Next step (→ key)")
    return logic.TITLES.index(title or logic.TITLES[0])


def window_picker(loaded) -> tuple[int, int] | None:
    """For a long session, the window of turns the guide steps through (the passes see only these turns)."""
    if not logic.needs_window(loaded):
        return None
    if ss.get("guide_window_for") != loaded.key:
        ss["guide_window_for"] = loaded.key
        linked = logic.parse_window(st.query_params.get("window"))
        ss["guide_window"] = logic.clamp_window(loaded, *linked) if linked else logic.default_window(loaded)
    lo, hi = loaded.session.messages[0].turn, loaded.session.last_turn
    first, last = st.slider(f"Guide window (at most {logic.MAX_TURNS} turns)", lo, hi, key="guide_window")
    window = logic.clamp_window(loaded, first, last)
    if window != (first, last):
        st.caption(f"Using turns {window[0]:,}–{window[1]:,}: the guide shows at most {logic.MAX_TURNS} turns.")
    st.caption("The passes run on these turns only, as if the conversation were just them; the explorer "
               "prunes the whole session.")
    return window


#: The step's chart: short enough that a step fits one 1366 x 768 screen, drawn in the wider of two columns.
CHART_HEIGHT, CHART_WIDTH_PX = 320, 540
#: A step is one screen at 1366 x 768: a smaller title, metrics and gaps on this page only.
COMPACT_CSS = ("<style>.st-key-guide_head h1 { font-size: 2rem; padding: 0 0 0.2rem 0; }"
               ".st-key-guide_step_box [data-testid='stMetricValue'] { font-size: 1.55rem; }"
               ".st-key-guide_step_box h3 { padding-top: 0.4rem; }"
               ".st-key-guide_step_box [data-testid='stCaptionContainer'] p { margin-bottom: 0.3rem; }</style>")


#: Presenter mode: the step alone on the screen (no sidebar, header or page title) and no focus frame on
#: whatever a click or a key press focused; ← and → still step, the toggle beside Next leaves it.
PRESENTER_CSS = ("<style>[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], "
                 "[data-testid='stHeader'], .st-key-guide_head, .st-key-guide_sidebar { display: none !important; }"
                 "[data-testid='stMainBlockContainer'] { padding-top: 1.2rem; }"
                 "[data-testid='stMain'] *:focus, [data-testid='stMain'] *:focus-visible, [data-testid='stMain']:focus "
                 "{ outline: none !important; box-shadow: none !important; }</style>")


def heading_and_metrics(title: str):
    """The step's heading beside its three metrics (one row, where they took two)."""
    head, *cells = st.columns([1.25, 1, 1, 1], vertical_alignment="top")
    with head:
        st.subheader(title)
    return cells


def pruning_step(session, index: int):
    """The step inside its box (one screen); returns the messages that changed, listed under the box."""
    title, config, text = logic.STEPS[index]
    assert config is not None  # only the pruning steps come here; the compaction step has compaction_step
    previous = logic.STEPS[index - 1][1] if index > 0 else None  # every step before a pruning one prunes
    now = analysis.analyse(session, config)
    before = analysis.analyse(session, previous) if previous is not None else None
    s = now.result.stats
    c1, c2, c3 = heading_and_metrics(title)
    c1.metric("Messages sent", f"{s.messages_after:,} of {s.messages_before:,}")
    # each step's own effect: against the step before it, not against the session as it arrives
    change = s.tokens_after - (before.result.stats.tokens_after if before is not None else s.tokens_before)
    # step 1 is the session as it arrives: nothing to compare with, so no "+0" in red
    c2.metric("Tokens sent", f"{s.tokens_after:,}", f"{change:+,} in this step" if index and change else None,
              delta_color="inverse",
              help=f"Counted with {s.counter}, as in the explorer: kept messages plus the "
                   f"{s.placeholder_tokens:,} tokens of placeholders for pruned tool results.")
    changes = tables.status_changes(before.frame, now.frame) if before is not None else now.frame.iloc[0:0]
    c3.metric("Changed in this step", ui.plural(len(changes), "message"))
    chart, words = st.columns([3, 2])
    with chart:
        components.timeline(now.frame, key=f"guide_timeline_{index}", cache_key=(session.key, config),
                            highlight=changes["position"].tolist() if len(changes) else (),
                            height=CHART_HEIGHT, width_px=CHART_WIDTH_PX, describe=False)
    with words:
        st.caption(text)
        if len(changes):
            for status in sorted(set(changes["status"])):
                n = int((changes["status"] == status).sum())
                st.caption(f"{STATUS_MARKS[status]} {ui.plural(n, 'message')} {status}: {STATUS_MEANINGS[status]}")
        elif index > 0:
            st.info("This pass changes nothing in this session with these settings.")
    return changes


def changes_table(changes, index: int) -> None:
    """Under the step's box: each message that changed, and why (the presenter scrolls to it when asked)."""
    st.markdown("**What changed, and why**")
    st.dataframe(changes, hide_index=True, width="stretch", key=f"guide_changes_{index}",
                 column_config={"reason": st.column_config.TextColumn("reason", width="large")})


def compaction_step(session):
    """Step 5 inside its box (one screen); returns the compaction, whose details are shown under the box."""
    step = logic.compaction_step(session)
    result, pruned = step.result, step.pruned
    c1, c2, c3 = heading_and_metrics("5. Compaction")
    c1.metric("Context compacted", f"{result.tokens_before:,} → {result.tokens_after:,}",
              f"{result.tokens_after - result.tokens_before:+,} in this step", delta_color="inverse",
              help=f"Tokens of the messages the model sees, counted with {result.counter}, before and after the "
                   "oldest are replaced by the summary.")
    c2.metric("Messages summarised", f"{len(result.to_summarize) + len(result.turn_prefix):,}")
    c3.metric("Prompt-cache cost (tokens)", f"{result.cache_invalidated_tokens:,}",
              help="Tokens of the previous prompt a prefix cache can no longer reuse: processed again once.")
    kept_rows = analysis.analyse(step.source, logic.STEPS[3][1]).frame
    kept_rows = kept_rows[kept_rows["status"].isin(["kept", "restored"])]
    frame = tables.messages_frame(pruned.kept, pruned.decisions, kept_rows["tokens"].tolist())
    chart, words = st.columns([1, 1])
    with chart:
        components.timeline(frame, key="guide_timeline_compaction", cache_key=(step.source.key, "compaction"),
                            cut=result.cut_index, split_turn=result.split_turn, height=CHART_HEIGHT,
                            width_px=CHART_WIDTH_PX * 0.8, describe=False, summarised=step.replaced,
                            earlier=step.earlier)
    with words:
        st.caption(logic.STEPS[4][2])
        for note in logic.compaction_notes(step):
            st.caption(note)
    return result


def compaction_details(result) -> None:
    ui.inert(result.cut_reason)
    st.page_link("app_pages/replay.py", label="What every request of this session sends, and costs, under each "
                 "strategy: open the Replay page", query_params={"strategy": "compact"})
    st.markdown("**The summary that replaces them, section by section**")
    for name, body in result.sections.items():
        with st.expander(ui.escape_markdown(name), expanded=True):
            st.code(body.strip() or "(empty)", language=None, wrap_lines=True)


def render() -> None:
    st.html(COMPACT_CSS)
    head_row, toggle = st.columns([6, 1], vertical_alignment="top")
    head = head_row.container(key="guide_head")
    head.title("Guide: how pruning works, step by step")
    loaded = session_state.ensure_session()
    if loaded is None or not loaded.session.messages:
        session_state.show_no_session("Open a session with messages on the Session explorer page; the guide "
                                      "steps through it.")
        return
    head.caption(f"The guide runs on the session open in the explorer: {loaded.label}. "
                 "Step with ← and → (or the buttons); ringed marks changed in the step.")
    with st.sidebar, st.container(key="guide_sidebar"):
        st.page_link("app_pages/explorer.py", label="Open another session", icon=":material/arrow_back:",
                     help="The Guide steps through the session open on the Session explorer page")
        window = window_picker(loaded)
    session = logic.windowed(loaded, window)
    link = session_state.linked_view("guide", logic.PAGE_KEYS)
    ss["guide_present"] = logic.presenting(link, bool(ss.get("guide_present")))
    # above the steps, at the right: in presenter mode it stays, alone in the row, to leave the mode
    toggle.toggle("Present", key="guide_present", help="Presenter mode: only the step on the screen, no focus "
                  "frame; ← and → step. The link keeps it (present=1).")
    if ss["guide_present"]:
        st.html(PRESENTER_CSS)
    index = navigation(link)
    with st.container(key="guide_step_box"):  # one screen: the browser test measures this box
        if logic.STEPS[index][1] is not None:
            changes = pruning_step(session, index)
        else:
            result = compaction_step(session)
    if logic.STEPS[index][1] is not None:
        if len(changes):
            changes_table(changes, index)
    else:
        compaction_details(result)
    session_state.write_link(page={"step": str(index + 1),
                                   "window": f"{window[0]}-{window[1]}" if window else None,
                                   "present": "1" if ss.get("guide_present") else None},
                             page_keys=logic.PAGE_KEYS, name="guide")


ui.guarded(render)
