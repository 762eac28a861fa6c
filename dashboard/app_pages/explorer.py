"""Session explorer: pick a session, prune it, and see what was removed and why."""

from __future__ import annotations

import json

from dataclasses import replace

import pandas as pd
import streamlit as st

from pruner import ENCODINGS, ROLES, STATUSES
from pruner.bench import workloads
from pruner.formats.export.openai import to_openai_messages
from pruner.formats import FORMATS
from pruner.formats.native import dumps as native_dumps

from dashboard import analysis, cache, charts, loading, session_state, tables, ui
from dashboard.logic import explorer as logic
from dashboard.theme import STATUS_MEANINGS, status_cell_style

AUTO_FORMAT = "detect automatically"
SOURCES = ("Sample", "Upload", "Generated workload")
PAGE_SIZES = (50, 100, 250)
ss = st.session_state


# ------------------------------------------------------------------ choosing the session

def on_sample_chosen() -> None:
    logic.try_load(lambda: loading.load_sample(ss["sample_choice"]))


def sample_picker(current) -> None:
    names = loading.list_samples()
    if not names:
        st.info("No sample sessions found in sample_sessions/.")
        return
    if ss.get("sample_choice") not in names:
        ss["sample_choice"] = current.label if current and current.origin == "sample" and \
            current.label in names else names[0]
    st.selectbox("Sample session", names, key="sample_choice", on_change=on_sample_chosen,
                 help="Every loadable file in sample_sessions/: one per supported format, "
                      "the demo, and generated workloads.")
    if current is None or current.origin != "sample" or current.label != ss["sample_choice"]:
        st.button("Load this sample", on_click=on_sample_chosen, key="load_sample")


def upload_picker() -> None:
    uploaded = st.file_uploader("Transcript file", key="upload_file",
                                help="Any supported format; it is read in memory and never stored. "
                                     f"Limit: {loading.max_upload_bytes():,} bytes.")
    choice = st.selectbox("Format", [AUTO_FORMAT, *FORMATS], key="upload_format",
                          help="Detected from the content; choose one if detection fails or guesses wrong.")
    if uploaded is None:
        return
    token = (uploaded.file_id, choice)
    if ss.get("upload_token") != token:  # load once per file and format, not on every rerun
        ss["upload_token"] = token
        fmt = None if choice == AUTO_FORMAT else choice
        logic.try_load(lambda: loading.load_file_bytes(uploaded.getvalue(), file=uploaded.name, origin="upload",
                                               format=fmt))


def workload_picker() -> None:
    with st.form("workload_form"):
        name = st.selectbox("Workload", list(workloads.WORKLOADS), key="workload_name")
        turns = st.number_input("Turns", min_value=1, max_value=5000, value=200, step=50, key="workload_turns")
        seed = st.number_input("Seed", min_value=0, max_value=1_000_000, value=0, key="workload_seed")
        if st.form_submit_button("Generate", type="primary"):
            logic.try_load(lambda: loading.load_workload(name, turns=int(turns), seed=int(seed)))


def settings_form() -> None:
    """The pruning settings, applied only when the form is submitted."""
    current = session_state.settings()
    with st.form("prune_settings"):
        st.subheader("Pruning settings")
        expire = st.checkbox("Pass 1: expire superseded, stale and timed-out messages",
                             value=current.expire, key="set_expire")
        dedupe = st.checkbox("Pass 2: remove exact and near duplicates", value=current.deduplicate,
                             key="set_deduplicate")
        restore = st.checkbox("Pass 3: restore what kept messages depend on", value=current.restore,
                              key="set_restore")
        threshold = st.slider("Near-duplicate threshold", min_value=0.5, max_value=1.0, step=0.05,
                              value=float(current.near_duplicate_threshold), key="set_threshold",
                              help="Share of a text's word 3-grams already in one kept text.")
        encoding = st.selectbox("Token counter encoding", ENCODINGS, index=ENCODINGS.index(current.encoding),
                                key="set_encoding")
        if st.form_submit_button("Apply settings", type="primary"):
            session_state.set_settings(replace(current, expire=expire, deduplicate=dedupe, restore=restore,
                                                   near_duplicate_threshold=float(threshold),
                                                   encoding=encoding))


# ------------------------------------------------------------------ what pruning did

def headline(loaded, analysed) -> None:
    s = analysed.result.stats
    ui.inert(f"{loaded.label} · {loaded.origin} · format {loaded.format} "
             f"({'detected' if loaded.detected else 'chosen'}) · {s.messages_before:,} messages · "
             f"{loaded.session.last_turn:,} turns")
    cols = st.columns(4)
    cols[0].metric("Messages before → after", f"{s.messages_before:,} → {s.messages_after:,}")
    cols[1].metric("Tokens before → after", f"{s.tokens_before:,} → {s.tokens_after:,}",
                   help="After = kept messages plus the short placeholders sent for pruned tool results.")
    cols[2].metric("Token reduction", f"{100 * s.reduction:.1f} %")
    cols[3].metric("Prune time", f"{s.elapsed_ms:,.1f} ms", help=f"{s.rounds} round(s) of the three passes")
    cols = st.columns(4)
    for col, status in zip(cols, STATUSES):
        col.metric(status, f"{s.by_status.get(status, 0):,}", help=STATUS_MEANINGS[status])
    st.caption(f"Token counter: `{s.counter}`")


def on_timeline_select() -> None:
    position = charts.selected_position(ss.get("timeline_chart"))
    if position is not None:
        ss["inspect_pos"] = position


def timeline(loaded, analysed) -> None:
    st.subheader("Timeline")
    st.caption("Every message at its turn, in its role's lane, coloured by status. Click a mark to inspect "
               "it: arrows go from a removed message to the one that replaced it, and from a restored "
               "message to the one that needed it.")
    selected = ss.get("inspect_pos")
    fig = cache.shared("timeline", (loaded.key, session_state.settings(), selected),
                       lambda: charts.timeline_figure(analysed.frame, selected=selected, revision=loaded.key))
    st.plotly_chart(fig, key="timeline_chart", on_select=on_timeline_select, selection_mode="points",
                    config={"displaylogo": False})


def context_charts(loaded, settings, analysed) -> None:
    st.subheader("Context per turn")
    # the unpruned context depends on the token counts only: the session and the encoding
    before = cache.shared("context_before", (loaded.key, settings.encoding),
                          lambda: tables.context_before_frame(analysed.frame))
    request = (loaded.key, settings)
    if analysis.context_is_cheap(loaded) or ss.get("context_requested") == request:
        limit = analysis.MAX_CONTEXT_SAMPLES if analysis.context_is_cheap(loaded) else analysis.LARGE_CONTEXT_SAMPLES
        with st.spinner("Pruning the conversation as it stood at each turn…"):
            samples = analysis.context_samples(loaded, settings, analysed, limit=limit)
    else:
        samples = []
    sampled = 0 < len(samples) < loaded.session.last_turn + 1

    def figures():
        context = pd.concat([before, tables.context_frame(samples)], ignore_index=True)
        return (charts.context_figure(tables.context_totals(context), sampled=sampled),
                charts.composition_figure(context, stage="after" if samples else "before"))
    sizes, composition = cache.shared("context_figures", (loaded.key, settings, len(samples)), figures)
    left, right = st.columns(2)
    left.plotly_chart(sizes, key="context_chart", config={"displaylogo": False})
    right.plotly_chart(composition, key="composition_chart", config={"displaylogo": False})
    st.caption("The tokens the model receives when it answers at each turn: the conversation so far, "
               "pruned as it stood then (not a running total over turns)."
               + (f" The pruned context is shown at {len(samples)} evenly spaced turns." if sampled else ""))
    if not samples:
        st.button(f"Compute the pruned context at {analysis.LARGE_CONTEXT_SAMPLES} turns",
                  on_click=lambda: ss.update(context_requested=request), key="context_go",
                  help="Long session: this prunes the conversation as it stood at each sampled turn, "
                       "which takes a while, so it runs only when asked (and is cached).")


def on_table_select() -> None:
    rows = (ss.get("message_table") or {}).get("selection", {}).get("rows", [])
    positions = ss.get("table_positions") or []
    if rows and rows[0] < len(positions):
        ss["inspect_pos"] = int(positions[rows[0]])


def message_table(analysed) -> None:
    st.subheader("Messages")
    frame = analysed.frame
    last_turn = int(frame["turn"].max()) if len(frame) else 0
    c1, c2, c3 = st.columns(3)
    statuses = c1.multiselect("Status", STATUSES, key="filter_status")
    roles = c2.multiselect("Role", ROLES, key="filter_role")
    rules = c3.multiselect("Rule", tables.rule_options(frame), key="filter_rule")
    c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
    turns = c1.slider("Turns", 0, max(last_turn, 1), (0, max(last_turn, 1)), key="filter_turns")
    text = c2.text_input("Search text or id", key="filter_text")
    changed_only = c3.toggle("Changed only", key="filter_changed")
    page_size = c4.selectbox("Rows per page", PAGE_SIZES, key="page_size")
    shown = tables.filter_messages(frame, statuses=statuses, roles=roles, rules=rules, turns=turns,
                                   text=text, changed_only=changed_only)
    pages = tables.page_count(len(shown), page_size)
    st.caption(f"{len(shown):,} of {len(frame):,} messages match. Select a row to inspect it.")
    page = st.pagination(pages, key=f"table_page_{pages}") if pages > 1 else 1
    rows = tables.page_of(shown, page, page_size)
    ss["table_positions"] = rows["position"].tolist()
    styled = rows[tables.TABLE_COLUMNS].style.map(status_cell_style, subset=["status"])
    st.dataframe(styled, hide_index=True, width="stretch", key="message_table", on_select=on_table_select,
                 selection_mode="single-row",
                 column_config={"preview": st.column_config.TextColumn("preview", width="large"),
                                "reason": st.column_config.TextColumn("reason", width="large")})


def go_to(position: int) -> None:
    ss["inspect_pos"] = position


def on_find_id() -> None:
    frame = ss.get("inspect_frame")
    position = logic.position_of_id(frame, ss.get("find_id", "")) if frame is not None else None
    if position is not None:
        ss["inspect_pos"] = position


def inspector(loaded, analysed) -> None:
    st.subheader("Message inspector")
    frame = analysed.frame
    ss["inspect_frame"] = frame[["position", "id"]]
    c1, c2 = st.columns(2)
    position = c1.number_input("Message # (position in the session)", min_value=0,
                               max_value=max(len(frame) - 1, 0), key="inspect_pos")
    c2.text_input("…or jump to a message id", key="find_id", on_change=on_find_id)
    row = frame.iloc[int(position)]
    message = loaded.session.messages[int(position)]
    left, right = st.columns([1, 2])
    with left:
        st.markdown(f"**Status:** {row['status']} · **rule:** {row['rule'] or 'none'}")
        st.caption("id")
        st.code(message.id, language=None)
        ui.inert(f"turn {message.turn} · {message.role} · {row['tokens']:,} tokens")
        st.caption("why")
        ui.inert(row["reason"] or "no pruning rule applies to it")
        related = int(row["related_position"])
        if related >= 0:
            st.button(f"Go to the related message #{related}", on_click=go_to, args=(related,), key="go_related")
        pointing = frame[frame["related_position"] == int(position)]
        if len(pointing):
            st.caption(f"{len(pointing):,} message(s) point at this one")
            for p in pointing["position"].head(8):
                st.button(f"Go to #{int(p)}", on_click=go_to, args=(int(p),), key=f"go_from_{int(p)}")
        placeholder = analysed.result.placeholders.get(message.tool_call_id or "")
        if placeholder:
            st.caption("the model receives instead")
            st.code(placeholder, language=None)
    with right:
        st.caption("content (shown as plain text)")
        st.code(message.content or "(empty)", language=None, wrap_lines=True, height=320)
        if message.tool_calls:
            st.caption("tool calls")
            st.code(json.dumps([{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls],
                               indent=2, ensure_ascii=False, default=str), language="json", wrap_lines=True)
        if message.tool_call_id:
            ui.inert(f"answers call {message.tool_call_id}" + (f" ({message.tool_name})" if message.tool_name else ""))
        if message.metadata:
            with st.expander("metadata"):
                st.code(json.dumps(dict(message.metadata), indent=2, ensure_ascii=False, default=str),
                        language="json", wrap_lines=True)


def downloads(loaded, analysed) -> None:
    st.subheader("Downloads")
    result, stem = analysed.result, logic.file_stem(loaded.label)
    c1, c2, c3 = st.columns(3)
    c1.download_button("Pruned session (native JSONL)", data=lambda: native_dumps(result.kept),
                       file_name=f"{stem}.pruned.jsonl", mime="application/jsonl", on_click="ignore",
                       key="dl_native")
    c2.download_button("Pruned messages (OpenAI JSON)",
                       data=lambda: json.dumps(to_openai_messages(result), indent=2, ensure_ascii=False),
                       file_name=f"{stem}.openai.json", mime="application/json", on_click="ignore",
                       key="dl_openai")
    c3.download_button("Decisions (CSV)", data=lambda: tables.decisions_frame(analysed.frame).to_csv(index=False),
                       file_name=f"{stem}.decisions.csv", mime="text/csv", on_click="ignore", key="dl_csv")


# ------------------------------------------------------------------ the page

def render() -> None:
    st.title("Session explorer")
    loading = st.empty()
    if logic.link_needs_pruning():
        # The browser fetches and compiles plotly.js (several MB) only when a first chart
        # arrives; sending a tiny one now lets it do that while the session is generated and
        # pruned (seconds for a long one), instead of after. It is removed before anything
        # else is drawn. (Not when the result is cached: then it only delays the timeline.)
        loading.plotly_chart(charts.loading_figure("Loading and pruning the session…"),
                             key="loading_chart", config={"displayModeBar": False, "staticPlot": True})
    logic.load_from_link()
    loading.empty()
    current = session_state.ensure_session()
    with st.sidebar:
        st.header("Session")
        source = st.radio("Source", SOURCES, key="source_kind", horizontal=False)
        if source == "Sample":
            sample_picker(current)
        elif source == "Upload":
            upload_picker()
        else:
            workload_picker()
        settings_form()
    if ss.get("load_error"):
        st.error(ui.escape_markdown(ss["load_error"]) + "\n\n" + ui.format_hint(ss["load_error"])
                 + ("\n\nThe previous session is still loaded." if session_state.current() else ""),
                 icon=":material/error:")
    loaded = session_state.current()
    if loaded is None:
        st.info("No session loaded: upload a transcript or pick a sample in the sidebar.")
        return
    if ss.get("inspect_for") != loaded.key:  # a new session: inspect its first pruned message with a link
        ss["inspect_pos"] = logic.first_to_inspect(analysis.analyse(loaded, session_state.settings()).frame)
        ss["inspect_for"] = loaded.key
    settings = session_state.settings()
    with st.spinner("Pruning…"):
        analysed = analysis.analyse(loaded, settings)
    headline(loaded, analysed)
    if not loaded.session.messages:
        st.info("This session has no messages: there is nothing to prune. Pick or upload another one.")
        return
    timeline(loaded, analysed)
    context_charts(loaded, settings, analysed)
    message_table(analysed)
    inspector(loaded, analysed)
    downloads(loaded, analysed)


ui.guarded(render)
