"""Session explorer: pick a session, prune it, and see what was removed and why."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import streamlit as st

from pruner import ROLES, STATUSES, PruneConfig
from pruner.bench import workloads
from pruner.formats import FORMATS

from dashboard import (after_timeline, analysis, cache, charts, components, context_views, loading, session_state,
                       tables, ui)
from dashboard.controls import control, options
from dashboard.logic import explorer as logic
from dashboard.logic import explorer_answer, replay_bound
from dashboard.logic import replay as replay_logic
from dashboard.recorded import compaction_turns, recorded_context, recorded_series, sent_tokens
from dashboard.theme import STATUS_MEANINGS

AUTO_FORMAT = "detect automatically"
SOURCES = {"sample": "Sample", "upload": "Upload", "workload": "Generated workload"}
#: Up to this many matching rows the table is one page, so sorting by a column header sorts them all.
ONE_PAGE_ROWS = 2_000
PAGE_SIZES = (250, 1_000, ONE_PAGE_ROWS)
#: The timeline's width in the left column (the inspector takes the right).
TIMELINE_WIDTH_PX = 700
ss = st.session_state


# ------------------------------------------------------------------ choosing the session

def sync_sidebar(loaded) -> None:
    """Make the sidebar show the loaded session (it may come from a link, a reload or another page)."""
    if loaded is None or ss.get("sidebar_for") == loaded.key:
        return
    ss["sidebar_for"] = loaded.key
    if loaded.origin not in SOURCES:  # opened from another page (a corpus, say): the sidebar's sources stay
        return
    ss["source_kind"] = SOURCES[loaded.origin]
    if loaded.origin == "sample":
        ss["sample_choice"] = loaded.file
    elif loaded.origin == "workload":
        _, name, turns, seed = loaded.key.split(":")
        ss["workload_name"], ss["workload_turns"], ss["workload_seed"] = name, int(turns), int(seed)


def sample_picker(current) -> None:
    names = loading.list_samples()
    if not names:
        st.info("No sample sessions found in sample_sessions/.")
        return
    if ss.get("sample_choice") not in names:
        ss["sample_choice"] = names[0]
    st.selectbox("Sample session", names, key="sample_choice",
                 on_change=_open_chosen_sample,
                 help="Every loadable file in sample_sessions/: one per supported format, "
                      "the demo, and generated workloads.")
    if current is None or current.origin != "sample" or current.file != ss["sample_choice"]:
        st.button("Load this sample", on_click=_open_chosen_sample, key="load_sample")


def _open_chosen_sample() -> None:  # a callback: Streamlit ignores what it returns
    logic.open_sample(ss["sample_choice"])


def _open_uploaded() -> None:
    uploaded = ss.get("upload_file")
    if uploaded is None:
        return
    choice = ss.get("upload_format", AUTO_FORMAT)
    logic.open_upload(uploaded.name, uploaded.getvalue(), format=None if choice == AUTO_FORMAT else choice,
                      skip_bad_lines=bool(ss.get("upload_skip_bad")))


def upload_picker(current) -> None:
    st.file_uploader("Transcript file", key="upload_file", on_change=_open_uploaded,
                     help="Any supported format. It is read in memory; the server keeps the last few uploads "
                          "in memory (never on disk) so a reload or a link can reopen them.")
    st.caption(ui.upload_limit_sentence())
    st.selectbox("Format", [AUTO_FORMAT, *FORMATS], key="upload_format", on_change=_open_uploaded,
                  help="Detected from the content; choose one if detection fails or guesses wrong.")
    st.checkbox("Skip unreadable lines", key="upload_skip_bad", on_change=_open_uploaded,
                help="In JSON Lines files, skip lines that cannot be read instead of refusing the file; "
                     "the page then says how many were skipped.")
    if current is not None and current.origin == "upload" and ss.get("upload_file") is None:
        ui.inert(f"Open: {current.file} (held in this server's memory; digest {current.digest[:12]}…)")


def workload_picker() -> None:
    ss.setdefault("workload_turns", 200)  # set here, not as the widgets' value: sync_sidebar may set them too
    ss.setdefault("workload_seed", 0)
    with st.form("workload_form"):
        st.selectbox("Workload", list(workloads.WORKLOADS), key="workload_name")
        st.number_input("Workload turns", min_value=1, max_value=loading.MAX_WORKLOAD_TURNS, step=50,
                        key="workload_turns")
        st.number_input("Seed", min_value=0, max_value=1_000_000, key="workload_seed")
        st.form_submit_button("Generate", type="primary", on_click=_open_chosen_workload)


def _open_chosen_workload() -> None:  # a callback: Streamlit ignores what it returns
    logic.open_workload(ss["workload_name"], turns=int(ss["workload_turns"]), seed=int(ss["workload_seed"]))


def settings_form() -> None:
    """The pruning settings, applied only when the form is submitted."""
    current = session_state.settings()
    with st.form("prune_settings"):
        st.subheader("Pruning settings")
        # the widget keys are session_state.SETTINGS_WIDGETS (cleared when another page sets the settings)
        expire = st.checkbox(**control(PruneConfig, "expire", with_help=False), value=current.expire,
                             key="set_expire")
        dedupe = st.checkbox(**control(PruneConfig, "deduplicate", with_help=False), value=current.deduplicate,
                             key="set_deduplicate")
        restore = st.checkbox(**control(PruneConfig, "restore", with_help=False), value=current.restore,
                              key="set_restore")
        threshold = st.slider(**control(PruneConfig, "near_duplicate_threshold"), min_value=0.5, max_value=1.0,
                              step=0.05, value=float(current.near_duplicate_threshold), key="set_threshold")
        encodings = options(PruneConfig, "encoding")
        encoding = st.selectbox(**control(PruneConfig, "encoding"), options=encodings,
                                index=encodings.index(current.encoding), key="set_encoding")
        if st.form_submit_button("Apply settings", type="primary"):
            session_state.set_settings(replace(current, expire=expire, deduplicate=dedupe, restore=restore,
                                               near_duplicate_threshold=float(threshold), encoding=encoding))


def dialogue_picker(file, loaded) -> None:
    """For a file holding several dialogues: every dialogue with its size and reduction; the chosen one opens."""
    showing = loaded is not None and loaded.digest == file.digest
    with st.expander(f"{file.name} holds {len(file.sessions):,} dialogues: pick one", expanded=not showing):
        rows = logic.dialogue_rows(file, session_state.settings())
        st.caption("Click a row to open that dialogue; click a column header to sort (all dialogues are "
                   "listed). Tokens are counted as in the explorer; the reduction uses the current settings.")
        st.dataframe(rows, hide_index=True, width="stretch", key="dialogue_table", selection_mode="single-row",
                     on_select=lambda: _on_dialogue_row(rows), height=min(38 + 35 * len(rows), 420),
                     alt=f"The {len(rows):,} dialogues of {file.name}")
        c1, c2 = st.columns([1, 3], vertical_alignment="bottom")
        c1.number_input("Dialogue number", min_value=0, max_value=len(rows) - 1, step=1, key="dialogue_number",
                        value=loaded.dialogue if showing and loaded.dialogue is not None else 0)
        c2.button("Open this dialogue", key="open_dialogue",
                  on_click=_open_chosen_dialogue)


def _open_chosen_dialogue() -> None:  # a callback: Streamlit ignores what it returns
    logic.choose_dialogue(int(ss["dialogue_number"]))


def _on_dialogue_row(rows: pd.DataFrame) -> None:
    chosen = (ss.get("dialogue_table") or {}).get("selection", {}).get("rows", [])
    if chosen:
        logic.choose_dialogue(int(rows.iloc[chosen[0]]["dialogue"]))


# ------------------------------------------------------------------ what pruning did

def headline(loaded, analysed) -> None:
    s = analysed.result.stats
    ui.inert(f"{loaded.label} · {loaded.origin} · format {loaded.format} "
             f"({'detected' if loaded.detected else 'chosen'}) · {ui.plural(s.messages_before, 'message')} · "
             f"{ui.plural(loaded.session.last_turn, 'turn')}")
    messages, messages_exact = components.before_after(s.messages_before, s.messages_after)
    tokens, tokens_exact = components.before_after(s.tokens_before, s.tokens_after)
    cols = st.columns(4)
    cols[0].metric("Messages before → after", messages, help=f"{messages_exact} messages")
    cols[1].metric("Tokens before → after", tokens,
                   help=f"{tokens_exact} tokens, counted with {s.counter}: each message's text plus its tool "
                        f"calls' names and arguments. After = the kept messages plus the "
                        f"{s.placeholder_tokens:,} tokens of placeholders sent for pruned tool results. The "
                        "compaction page and the Guide use the same count.")
    cols[2].metric("Token reduction", f"{100 * s.reduction:.1f} %",
                   help=f"{s.tokens_before - s.tokens_after:,} of {s.tokens_before:,} tokens")
    cols[3].metric("Prune time, with tokenising", f"{s.elapsed_ms:,.1f} ms",
                   help=f"What prune() took the first time it ran on this session: indexing and tokenising the "
                        f"messages, then {s.rounds} round(s) of the three passes (reading the file is not "
                        "included). The Benchmarks page times the passes only, with token counts already cached, "
                        "so its figures are smaller.")
    counts = " · ".join(f"{status} {s.by_status.get(status, 0):,}" for status in STATUSES)
    st.caption(f"Messages per status: {counts} · token counter `{s.counter}`",
               help=" ".join(f"{status}: {STATUS_MEANINGS[status]}." for status in STATUSES))
    recorded = recorded_context(loaded.session)
    if recorded is not None:
        st.caption(ui.escape_markdown(recorded.sentence(s.tokens_before, s.counter)) + " The figures above are "
                   "for the whole conversation; the Replay and Compaction pages show the same recorded context.")
    why = logic.why_nothing_pruned(loaded.session, analysed.result)
    if why:
        st.info(why, icon=":material/info:")


def timeline(loaded, analysed, position: int | None) -> None:
    st.subheader("Timeline", help="Every message at its turn, in its role's lane, coloured by status. Click a "
                 "mark to inspect it: arrows go from a removed message to the one that replaced it, and from a "
                 "restored message to the one that needed it. On a long session each bar counts the messages of "
                 "a stretch of turns; click one to zoom in.")
    components.timeline(analysed.frame, key=logic.TIMELINE_KEY, cache_key=(loaded.key, session_state.settings()),
                        selected=position, width_px=TIMELINE_WIDTH_PX, on_position=logic.select)


def context_charts(loaded, settings, analysed) -> None:
    st.subheader("Context per turn")
    # the unpruned context depends on the token counts only: the session and the encoding
    before = cache.shared("context_before", (loaded.key, settings.encoding),
                          lambda: tables.context_before_frame(analysed.frame))
    request = (loaded.key, settings)
    cheap = analysis.context_is_cheap(loaded, settings)
    series = None
    if cheap or ss.get("context_requested") == request:
        limit = analysis.MAX_CONTEXT_SAMPLES if cheap else analysis.LARGE_CONTEXT_SAMPLES
        with st.spinner("Pruning the conversation as it stood at each turn…"):
            series = analysis.context_series(loaded, settings, analysed, limit=limit)

    def figures():
        totals = tables.context_totals_frame(before, series.totals if series else ())
        composition = tables.context_frame(series.by_role) if series else before
        return (charts.context_figure(totals, sampled=series is not None and not series.every_turn,
                                      recorded=recorded_series(loaded.session),
                                      compactions=compaction_turns(loaded.session)),
                charts.composition_figure(composition if series else before, stage="after" if series else "before"))
    sizes, composition = cache.shared("context_figures", (loaded.key, settings, series is not None), figures)
    st.plotly_chart(sizes, key="context_chart", config={"displaylogo": False})
    st.plotly_chart(composition, key="composition_chart", config={"displaylogo": False})
    note = ""
    if series is not None and not series.every_turn:
        note = f" The pruned context is shown at {len(series.totals)} evenly spaced turns."
    elif series is not None and len(series.by_role) < len(series.totals):
        note = f" Its make-up by role is shown at {len(series.by_role)} evenly spaced turns."
    st.caption("The tokens the model receives when it answers at each turn: the conversation so far, "
               "pruned as it stood then (not a running total over turns)." + note)
    if series is None:
        where = "every turn" if analysis.carries(settings) else f"{analysis.LARGE_CONTEXT_SAMPLES} sampled turns"
        st.button(f"Compute the pruned context at {where}",
                  on_click=lambda: ss.update(context_requested=request), key="context_go",
                  help="Long session, or settings the incremental pruner cannot carry: this prunes the "
                       "conversation as it stood at each sampled turn, which takes a while, so it runs only when "
                       "asked (and is cached).")


def _on_table_select() -> None:
    rows = (ss.get("message_table") or {}).get("selection", {}).get("rows", [])
    positions = ss.get("table_positions") or []
    if rows and rows[0] < len(positions):
        logic.select(int(positions[rows[0]]))


def message_table(analysed) -> None:
    st.subheader("Messages")
    frame = analysed.frame
    last_turn = int(frame["turn"].max()) if len(frame) else 0
    c1, c2, c3 = st.columns(3)
    statuses = c1.multiselect("Status", STATUSES, key="filter_status")
    roles = c2.multiselect("Role", ROLES, key="filter_role")
    rules = c3.multiselect("Rule", tables.rule_options(frame), key="filter_rule")
    c1, c2, c3 = st.columns([5, 4, 3])
    turns = c1.slider("Turns in the table", 0, max(last_turn, 1), (0, max(last_turn, 1)), key="filter_turns")
    text = c2.text_input("Search text or id", key="filter_text")
    changed_only = c3.toggle("Changed only", key="filter_changed")
    shown = tables.filter_messages(frame, statuses=statuses, roles=roles, rules=rules, turns=turns,
                                   text=text, changed_only=changed_only)
    c1, c2, c3 = st.columns([2, 1, 1])
    sort_by = c1.selectbox("Sort by", tables.SORT_COLUMNS, key="sort_by",
                           help="Orders every matching row, across all pages.")
    descending = c2.toggle("Descending", key="sort_descending")
    if ss.get("page_size_for") != len(frame):  # one page when the whole session fits, so header sorts sort all
        ss["page_size_for"], ss["page_size"] = len(frame), ONE_PAGE_ROWS if len(frame) <= ONE_PAGE_ROWS else 250
    page_size = c3.selectbox("Rows per page", PAGE_SIZES, key="page_size")
    shown = tables.sort_messages(shown, sort_by, descending=descending)
    pages = tables.page_count(len(shown), page_size)
    note = ("Clicking a column header sorts this page only; use Sort by to order all of them."
            if pages > 1 else "Click a column header to sort them.")
    st.caption(f"{len(shown):,} of {ui.plural(len(frame), 'message')} match. {note} Select a row to inspect it.")
    page = st.pagination(pages, key=f"table_page_{pages}") if pages > 1 else 1
    rows = tables.page_of(shown, page, page_size)
    ss["table_positions"] = rows["position"].tolist()
    # Statuses carry their timeline marker (● ✖ ◆ ★) rather than a colour: a styled table costs
    # the server most of a second per run at 2,000 rows.
    st.dataframe(tables.with_status_marks(rows[tables.TABLE_COLUMNS]), hide_index=True, width="stretch",
                 key="message_table", on_select=_on_table_select,
                 selection_mode="single-row", alt="Messages matching the filters",
                 column_config={"status": st.column_config.TextColumn("status", width="small"),
                                "rule": st.column_config.TextColumn("rule", width="medium"),
                                "preview": st.column_config.TextColumn("preview", width="large"),
                                "reason": st.column_config.TextColumn("reason", width="large",
                                                                      help="Select the row: the inspector "
                                                                           "shows the whole reason")})


#: The "messages point at this one" buttons shown at once; the rest are one click away.
POINTING_SHOWN = 8


def inspector(loaded, analysed, position: int | None) -> None:
    frame = analysed.frame
    count = len(frame)
    st.subheader("Message inspector")
    c1, c2 = st.columns(2, vertical_alignment="bottom")
    c1.number_input("Message # (position in the session)", min_value=0, max_value=max(count - 1, 0),
                    key="inspect_pos", on_change=logic.on_number, placeholder="none selected")
    c2.text_input("Jump to a message id", key="find_id",
                  on_change=lambda: logic.find_id(frame[["position", "id"]], ss.get("find_id", "")))
    c1, c2 = st.columns(2)
    c1.button("Previous", key="inspect_prev", on_click=logic.step, args=(-1, count),
              disabled=position is None or position <= 0, width="stretch", icon=":material/arrow_back:",
              help="← key")
    c2.button("Next", key="inspect_next", on_click=logic.step, args=(1, count),
              disabled=position is not None and position >= count - 1, width="stretch",
              icon=":material/arrow_forward:", icon_position="right", help="→ key")
    if ss.get("find_id_error"):
        st.warning(ui.escape_markdown(ss["find_id_error"]), icon=":material/search_off:")
    if position is None:
        st.info("No message selected yet: click a mark on the timeline or a row of the table, type a message "
                "number or id above, or press → for the first message.", icon=":material/touch_app:")
        return
    row = frame.iloc[position]
    message = loaded.session.messages[position]
    st.markdown(f"**#{position:,} · {row['status']}** · rule: {row['rule'] or 'none'}")
    st.caption("id")
    ui.text_block(message.id)
    ui.inert(f"turn {message.turn:,} · {message.role} · {ui.plural(int(row['tokens']), 'token')}")
    sent = sent_tokens(message.metadata.get("usage")) if message.role == "assistant" and \
        hasattr(message.metadata, "get") else None
    if sent is not None:
        ui.inert(f"recorded context at this request: {sent:,} tokens (the provider's count of what it was sent)")
    st.caption("why")
    ui.inert(row["reason"] or "no pruning rule applies to it")
    related = int(row["related_position"])
    if related >= 0:
        st.button(f"Go to the related message #{related:,}", on_click=logic.select, args=(related,),
                  key="go_related")
    pointing = frame[frame["related_position"] == position]["position"].astype(int).tolist()
    if pointing:
        st.caption(f"{ui.plural(len(pointing), 'message')} point at this one")
        shown = pointing if ss.get("pointing_all_for") == (loaded.key, position) else pointing[:POINTING_SHOWN]
        cols = st.columns(4)
        for k, p in enumerate(shown):
            cols[k % 4].button(f"#{p:,}", on_click=logic.select, args=(p,), key=f"go_from_{p}")
        if len(shown) < len(pointing):
            st.button(f"and {len(pointing) - len(shown):,} more", key="pointing_more",
                      on_click=lambda: ss.update(pointing_all_for=(loaded.key, position)))
    placeholder = analysed.result.placeholders.get(message.tool_call_id or "")
    if placeholder:
        st.caption("the model receives instead")
        ui.text_block(placeholder)
    st.caption("content (shown as plain text)")
    ui.text_block(message.content or "(empty)", height=320 if len(message.content) > 600 else None)
    if message.tool_calls:
        st.caption("tool calls")
        ui.text_block(json.dumps([{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls],
                                 indent=2, ensure_ascii=False, default=str))
    if message.tool_call_id:
        ui.inert(f"answers call {message.tool_call_id}" + (f" ({message.tool_name})" if message.tool_name else ""))
    if message.metadata:
        with st.expander("metadata"):
            ui.text_block(json.dumps(dict(message.metadata), indent=2, ensure_ascii=False, default=str))


def downloads(loaded, analysed) -> None:
    st.subheader("Downloads")
    stem = logic.file_stem(loaded.label)
    files = logic.exports(loaded, session_state.settings(), analysed)
    cols = st.columns(len(files))
    for col, export in zip(cols, files):
        if export.error:
            col.error(f"{export.label}: cannot be written: {ui.escape_markdown(export.error)}",
                      icon=":material/error:")
            continue
        assert export.data is not None  # an export without an error has its bytes (logic.exports)
        col.download_button(export.label, data=export.data, file_name=f"{stem}{export.suffix}", mime=export.mime,
                            on_click="ignore", key=export.key)


# ------------------------------------------------------------------ the answer, first

#: The session whose lead the visitor asked for (a long session is replayed for it on a click).
LEAD_ASKED = "explorer_lead_asked"


def answer_lead(loaded, box) -> None:
    """The verdict's three lines and the visibility warning, drawn into ``box`` at the top of the page once
    everything below it is on screen (the replay behind them is the Replay page's, cached for both)."""
    with box.container(key="explorer_answer"):
        refusal = cache.shared("explorer_refusal", loaded.key, lambda: explorer_answer.refused(loaded.session))
        if refusal is not None:
            st.info(ui.escape_markdown(refusal.lines[0]), icon=":material/gavel:")
            return
        choice = explorer_answer.choice(loaded.session, ss.get("replay_choice"), ss.get("replay_choice_for"),
                                        loaded.key)
        key = (loaded.key, choice)
        at_once = cache.shared("explorer_at_once", loaded.key,
                               lambda: explorer_answer.answers_at_once(loaded.session))
        if not (at_once or ss.get(LEAD_ASKED) == key):
            st.button("Would pruning or compaction have saved money here? Replay every strategy",
                      key="explorer_lead_button", icon=":material/gavel:",
                      on_click=lambda: ss.update({LEAD_ASKED: key}),
                      help="A long session: its replay takes a while, so it runs when you ask (the Replay page "
                           "shows the same answer with its table and charts).")
            return
        try:
            with st.spinner("Replaying every strategy request by request…"):
                r = cache.shared("replay", key, lambda: replay_logic.run(loaded.session, choice))
        except Exception as exc:  # the explorer stands without its answer; the message says what went wrong
            st.caption(f"No answer: replaying this session failed ({ui.escape_markdown(ui.error_text(exc))}).")
            return
        if not r.requests:
            return  # no request was ever made to a model: nothing was billed, nothing to answer
        bound = replay_bound.Bound("pending")
        if explorer_answer.bound_now(len(r.requests), asked=ss.get(replay_bound.ASKED) == key):
            try:
                with st.spinner("Computing the hindsight bound…"):
                    bound = replay_bound.Bound("done", cache.shared("replay_limits", key,
                                                                    lambda: replay_bound.limits(r)))
            except Exception as exc:  # the answer stands without its bound, and says why
                bound = replay_bound.Bound("failed", error=ui.error_text(exc))
        said = cache.shared("explorer_answer", (key, bound.state, bound.error),
                            lambda: explorer_answer.answer(r, bound))
        lead = explorer_answer.lead(said)
        # one paragraph, a line each (markdown hard breaks): at 1366 x 768 the inspector beside the timeline stays
        # in view when a mark is clicked, which three paragraphs' margins pushed below the fold
        st.info("  \n".join(ui.escape_markdown(line) for line in lead.lines), icon=":material/gavel:")
        if lead.warning:
            st.warning(ui.escape_markdown(lead.warning), icon=":material/visibility_off:")
        st.page_link("app_pages/replay.py", label="How this answer is reached, request by request: the Replay page",
                     icon=":material/arrow_forward:")


# ------------------------------------------------------------------ the page

def render() -> None:
    st.title("Session explorer")
    loading_note = st.empty()
    first_run = not session_state.link_was_read()  # a visit's first run
    slow = first_run and logic.link_needs_pruning()
    if first_run:
        # The browser fetches and compiles plotly.js (several MB) only when a first chart
        # arrives; sending a tiny one first lets it start while the session is loaded and
        # pruned and the rest of the page arrives, instead of after. While a linked workload
        # is generated and pruned it says so; otherwise it is ten pixels high and empty.
        text = "Loading and pruning the session…" if slow else ""
        loading_note.plotly_chart(cache.shared("loading_figure", text, lambda: charts.loading_figure(
                                      text, height=80 if slow else 10)),
                                  key="loading_chart", config={"displayModeBar": False, "staticPlot": True})
    loaded = session_state.ensure_session(check=logic.check)
    if slow:
        loading_note.empty()
    try:
        page(loaded)
    finally:
        if first_run:  # mounted long enough to start the download; gone before anyone reads the page
            loading_note.empty()


def page(loaded) -> None:
    """Everything below the title, for the session ``loaded`` (or none)."""
    sync_sidebar(loaded)
    with st.sidebar:
        st.header("Session")
        source = st.radio("Source", list(SOURCES.values()), key="source_kind")
        if source == SOURCES["sample"]:
            sample_picker(loaded)
        elif source == SOURCES["upload"]:
            upload_picker(loaded)
        else:
            workload_picker()
        settings_form()
    problem = session_state.load_error()
    if problem is not None:
        st.error(problem.text(still_loaded=loaded is not None), icon=":material/error:")
    file = session_state.dialogue_file()
    if file is not None:
        dialogue_picker(file, loaded)
    if loaded is None:
        if file is None:
            st.info("No session loaded: upload a transcript or pick a sample in the sidebar.")
        session_state.write_link(page_keys=logic.PAGE_KEYS)
        return
    lead_box = st.empty()  # the answer leads the page; it is drawn last, so the timeline does not wait for it
    settings = session_state.settings()
    with st.spinner("Pruning…"):
        analysed = analysis.analyse(loaded, settings)
    headline(loaded, analysed)
    notice = logic.repairs_notice(loaded.session)
    if notice:
        st.warning(ui.escape_markdown(notice), icon=":material/build:")
    counted = logic.bookkeeping_note(loaded.session)
    if counted:
        st.caption(ui.escape_markdown(counted))
    if not loaded.session.messages:
        st.info("This session has no messages: there is nothing to prune. Pick or upload another one.")
        session_state.write_link(page_keys=logic.PAGE_KEYS)
        return
    logic.apply_link(loaded, analysed.frame, session_state.linked_view("explorer", logic.PAGE_KEYS))
    position = logic.inspected(loaded, analysed.frame)
    left, right = st.columns([3, 2], gap="medium")
    below = after_timeline.draw_now(loaded.key, len(analysed.frame))  # a long session's first view: not yet
    with left:
        timeline(loaded, analysed, position)
        if below:
            context_charts(loaded, settings, analysed)
            message_table(analysed)
        else:
            after_timeline.later(logic.TIMELINE_KEY, "the context charts, the message table and the downloads")
    with right:
        components.sticky("inspector_panel")
        with st.container(key="inspector_panel"):
            inspector(loaded, analysed, position)
    if below:
        context_views.chains_section(loaded)
        context_views.recorded_composition_section(loaded, settings.encoding)
        downloads(loaded, analysed)
    session_state.write_link(page=logic.view_params(position), page_keys=logic.PAGE_KEYS, name="explorer")
    answer_lead(loaded, lead_box)


ui.guarded(render)
