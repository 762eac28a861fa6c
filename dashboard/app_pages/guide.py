"""Guide: step through pruning and compaction on a small demo session, one pass at a time."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, state, tables, ui
from dashboard.state import PruneSettings
from dashboard.theme import STATUS_MEANINGS

DEMO = state.DEFAULT_SAMPLE
ss = st.session_state

#: (title, settings for that step or None for compaction, what the step does and why)
STEPS = (
    ("1. As it arrives", PruneSettings(expire=False, deduplicate=False, restore=False),
     "The conversation as the agent recorded it: every message is sent to the model at every turn. "
     "The marks show each message at its turn, in its role's lane. Nothing is removed yet."),
    ("2. Pass 1: expire", PruneSettings(expire=True, deduplicate=False, restore=False),
     "Pass 1 removes what newer messages have made stale: a tool result superseded by a newer call with "
     "the same arguments, a file read made stale by a later write to that file, and a message whose "
     "time-to-live (expires_after_turn) has run out. Each removal points at what replaced it."),
    ("3. Pass 2: deduplicate", PruneSettings(expire=True, deduplicate=True, restore=False),
     "Pass 2 removes text the model has already seen: exact repeats, and near-duplicates whose word "
     "3-grams mostly appear in one kept message. Each removal points at the kept original."),
    ("4. Pass 3: restore", PruneSettings(expire=True, deduplicate=True, restore=True),
     "Pass 3 checks that nothing kept now refers to something removed. A kept message that refers to a "
     "key (REF:key) needs the message that defines it (DEFINE:key); a kept tool result needs the call "
     "that asked for it. Such messages are brought back, marked restored, pointing at who needed them."),
    ("5. Compaction", None,
     "When the pruned conversation still outgrows the context window, compaction replaces the oldest "
     "turns with a structured summary and keeps the newest ones verbatim. Here it is forced on the "
     "pruned demo, keeping about its newest third."),
)
TITLES = [s[0] for s in STEPS]


def step_by(delta: int) -> None:
    index = TITLES.index(ss.get("guide_step", TITLES[0]))
    ss["guide_step"] = TITLES[min(max(index + delta, 0), len(TITLES) - 1)]


def navigation() -> int:
    c1, c2, c3 = st.columns([1, 6, 1])
    c1.button("◀ Previous", on_click=step_by, args=(-1,), key="guide_prev", width="stretch")
    c3.button("Next ▶", on_click=step_by, args=(1,), key="guide_next", width="stretch")
    ss.setdefault("guide_step", TITLES[0])
    with c2:
        title = st.segmented_control("Step", TITLES, key="guide_step", label_visibility="collapsed")
    return TITLES.index(title or TITLES[0])


def pruning_step(demo, index: int) -> None:
    title, settings, text = STEPS[index]
    now = state.analyse(demo, settings)
    before = state.analyse(demo, STEPS[index - 1][1]) if index > 0 else None
    s = now.result.stats
    c1, c2, c3 = st.columns(3)
    c1.metric("Messages sent", f"{s.messages_after:,} of {s.messages_before:,}")
    c2.metric("Tokens sent", f"{s.tokens_after:,}", f"{s.tokens_after - s.tokens_before:+,} vs as it arrives",
              delta_color="inverse")
    changes = tables.status_changes(before.frame, now.frame) if before is not None else now.frame.iloc[0:0]
    c3.metric("Changed in this step", f"{len(changes):,} messages")
    st.subheader(title)
    fig = charts.timeline_figure(now.frame, highlight=changes["position"].tolist() if len(changes) else (),
                                 revision="guide")
    st.plotly_chart(fig, key=f"guide_timeline_{index}", config={"displaylogo": False})
    if len(changes):
        st.markdown("**What changed, and why**")
        for status in sorted(set(changes["status"])):
            st.caption(f"{status}: {STATUS_MEANINGS[status]}")
        st.dataframe(changes, hide_index=True, width="stretch", key=f"guide_changes_{index}",
                     column_config={"reason": st.column_config.TextColumn("reason", width="large")})
    elif index > 0:
        st.info("This pass changes nothing in the demo with these settings.")


def compaction_step(demo) -> None:
    module = state.compaction_module()
    if module is None:
        st.info("Compaction needs the `pruner.compaction` module, which is not installed yet.")
        return
    from dashboard import compaction_view as view

    pruned = state.analyse(demo, STEPS[3][1]).result
    counter_tokens = pruned.stats.tokens_after
    preview = view.default_settings(counter_tokens)

    def build():
        return module.compact(pruned.kept, preview.library(state.settings().encoding), force=True,
                              use_usage=False)
    result = state.memoised("guide_compaction", (demo.key, preview), build)
    kept_frame = state.analyse(demo, STEPS[3][1]).frame
    kept_frame = kept_frame[kept_frame["status"].isin(["kept", "restored"])]
    frame = tables.messages_frame(pruned.kept, pruned.decisions, kept_frame["tokens"].tolist())
    st.subheader("5. Compaction (of the pruned demo)")
    fig = charts.timeline_figure(frame, cut=result.cut_index, split_turn=result.split_turn, revision="guide")
    st.plotly_chart(fig, key="guide_timeline_compaction", config={"displaylogo": False})
    c1, c2, c3 = st.columns(3)
    c1.metric("Tokens before → after", f"{result.tokens_before:,} → {result.tokens_after:,}")
    c2.metric("Messages summarised", f"{len(result.to_summarize) + len(result.turn_prefix):,}")
    c3.metric("Prompt-cache cost", f"{result.cache_invalidated_tokens:,} tokens")
    ui.inert(result.cut_reason)
    st.markdown("**The summary that replaces them, section by section**")
    for name, body in result.sections.items():
        with st.expander(ui.escape_markdown(name)):
            st.code(body.strip() or "(empty)", language=None, wrap_lines=True)


def render() -> None:
    st.title("Guide: how pruning works, step by step")
    try:
        demo = state.load_sample(DEMO)
    except Exception as exc:
        st.error(f"The guide's demo session {DEMO} could not be loaded: {ui.escape_markdown(ui.error_text(exc))}")
        return
    st.caption(f"The demo: {DEMO}, a short support-agent conversation written to trigger every rule. "
               "Use Next to step through the passes; ringed marks are the messages that changed in the step.")
    index = navigation()
    st.markdown(STEPS[index][2])
    if STEPS[index][1] is not None:
        pruning_step(demo, index)
    else:
        compaction_step(demo)


ui.guarded(render)
