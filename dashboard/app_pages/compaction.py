"""Compaction preview: where the cut falls, what the summary says, and what it saves and costs."""

from __future__ import annotations

import json
import time

import streamlit as st

from pruner.compaction import CompactionSettings
from pruner.formats.export.openai import to_openai_messages
from pruner.formats.native import dumps as native_dumps

from dashboard import charts, components, session_state, tables, ui
from dashboard.controls import control
from dashboard.logic import compaction as logic
from dashboard.logic import compaction_value as value_logic
from pruner.money import money
from dashboard.recorded import recorded_context

OFFLINE = "Offline (deterministic, no network)"
ENDPOINT = "OpenAI-compatible endpoint"
ss = st.session_state


def settings_form(loaded, compact_input) -> logic.PreviewSettings:
    """Window, reserve and keep-recent tokens, applied on submit (the cut is redrawn then)."""
    applied = logic.applied_settings(loaded, compact_input)
    with st.form(f"compaction_settings_{loaded.key}"):
        st.subheader("Compaction settings")
        c1, c2, c3 = st.columns(3)
        window = c1.number_input(**control(CompactionSettings, "context_window"), min_value=1_000,
                                 max_value=10_000_000, step=1_000, value=applied.context_window, key="cmp_window")
        reserve = c2.number_input(**control(CompactionSettings, "reserve_tokens"), min_value=0, max_value=9_999_999,
                                  step=1_024, value=applied.reserve_tokens, key="cmp_reserve")
        keep = c3.number_input(**control(CompactionSettings, "keep_recent_tokens"), min_value=0,
                               max_value=10_000_000, step=500, value=applied.keep_recent_tokens, key="cmp_keep")
        c1, c2 = st.columns(2)
        pruned_first = c1.toggle("Prune first (current pruning settings)", value=applied.pruned_first,
                                 key="cmp_pruned_first")
        force = c2.toggle("Compact even when under the threshold", value=applied.force, key="cmp_force",
                          help="Small sessions never reach the trigger; this previews the cut anyway.")
        if st.form_submit_button("Apply settings"):
            logic.apply_settings(loaded, logic.PreviewSettings(
                context_window=int(window), reserve_tokens=int(reserve), keep_recent_tokens=int(keep),
                pruned_first=bool(pruned_first), force=bool(force)))
    return logic.applied_settings(loaded, compact_input)


def summarizer_choice() -> logic.SummarizerChoice:
    """Offline by default; an endpoint needs base URL, model and a key kept only in this browser session."""
    for key, default in (("cmp_summarizer", OFFLINE), ("cmp_base_url", "https://api.openai.com/v1"),
                         ("cmp_model", "gpt-4o-mini")):
        session_state.restore_widget(key, default)
    kind = st.radio("Summariser", [OFFLINE, ENDPOINT], key="cmp_summarizer", horizontal=True,
                    on_change=lambda: session_state.remember_widget("cmp_summarizer"))
    if kind == OFFLINE:
        return logic.SummarizerChoice(kind="offline")
    c1, c2, c3 = st.columns(3)
    base_url = c1.text_input("Base URL", key="cmp_base_url",
                             on_change=lambda: session_state.remember_widget("cmp_base_url"))
    model = c2.text_input("Model", key="cmp_model", on_change=lambda: session_state.remember_widget("cmp_model"))
    # The key lives only in this user's session state: never shown, logged, cached or written.
    c3.text_input("API key", type="password", key="cmp_api_key",
                  help="Kept only in this browser session's state; never shown, logged or saved.")
    c1, c2, c3 = st.columns(3)
    timeout = c1.number_input("Timeout per attempt (seconds)", min_value=1.0, max_value=600.0,
                              value=logic.DEFAULT_TIMEOUT_S, step=5.0, key="cmp_timeout")
    retries = c2.number_input("Retries after a failed attempt", min_value=0, max_value=5,
                              value=logic.DEFAULT_RETRIES, key="cmp_retries")
    choice = logic.SummarizerChoice(kind="endpoint", base_url=base_url.strip(), model=model.strip(),
                                    timeout_s=float(timeout), retries=int(retries))
    c3.caption(f"A silent endpoint holds this page for at most about {choice.longest_wait_s():,.0f} s; "
               "you can cancel while it waits, and the offline summary is shown instead.")
    return choice


def cut_preview(plan_view: logic.PlanView, loaded, preview) -> None:
    st.subheader("Where the cut falls")
    ui.inert(plan_view.trigger_sentence())
    if plan_view.cut_reason:
        ui.inert(plan_view.cut_reason)
    budget = plan_view.budget_sentence()
    if budget:
        st.warning(ui.escape_markdown(budget), icon=":material/straighten:")
    recorded_cut = plan_view.recorded_cut if not preview.pruned_first else None
    components.timeline(plan_view.frame, key="compaction_timeline", cache_key=plan_view.key,
                        cut=plan_view.cut_index, recorded_cut=recorded_cut, split_turn=plan_view.split_turn,
                        summarised=plan_view.replaced, earlier=plan_view.earlier)
    c1, c2, c3, c4 = st.columns(4)
    recorded = recorded_context(loaded.session) if not preview.pruned_first else None
    if recorded is not None:
        c1.metric("Recorded context (tokens)", f"{recorded.tokens:,}",
                  help=f"At the last request (message #{recorded.position:,}), the provider's count of what it was "
                       "sent: the same figure the explorer and the Replay page show. The trigger adds the reply and "
                       f"later messages: {plan_view.context_tokens:,} against the threshold {plan_view.threshold:,}.")
    else:
        c1.metric("Context now (tokens)", f"{plan_view.context_tokens:,}",
                  help=f"Counted with {plan_view.counted_with}; compaction triggers above {plan_view.threshold:,} = "
                       "window − reserve.")
    c2.metric("Summarised", ui.plural(plan_view.summarised, "message"))
    c3.metric("Split-turn prefix", ui.plural(plan_view.prefix, "message"),
              help="When the cut falls inside a turn, the turn's start is summarised separately.")
    c4.metric("Kept verbatim", ui.plural(plan_view.kept, "message"))
    st.caption(logic.token_basis(plan_view))


def recorded_compactions(loaded, preview) -> None:
    rows = logic.recorded_rows(loaded.session, preview)
    if not rows:
        return
    st.subheader("Recorded compactions")
    st.caption(f"This session records compactions its agent made ({ui.escape_markdown(loaded.format)} format). "
               "Each recorded cut is shown beside "
               "the cut computed here for the same history; the dashed line on the timeline is the "
               "latest recorded cut.")
    st.dataframe(tables.recorded_compactions_frame(rows), hide_index=True, width="stretch",
                 key="recorded_table")


def show_result(outcome: logic.Outcome, loaded) -> None:
    result = outcome.result
    if outcome.error:
        left, right = st.columns(2)
        left.error("The summariser endpoint failed: " + ui.escape_markdown(outcome.error) + "\n\n"
                   + logic.endpoint_hint(outcome.error), icon=":material/error:")
        right.info("The offline summary below is still available: it needs no network and was made "
                   "from the same cut.", icon=":material/info:")
    if not result.compacted_any:
        st.info("Nothing to compact with these settings: " + ui.escape_markdown(result.cut_reason
                                                                                or result.trigger_reason))
        return
    st.subheader("Result")
    ui.inert(f"summariser: {result.summarizer_name} · counter: {result.counter}")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Context after (tokens)", f"{result.tokens_after:,}",
              help=f"The compacted context counted with {result.counter} (as the explorer counts, without its "
                   f"placeholders): {result.tokens_before:,} tokens of messages before, {result.tokens_after:,} after.")
    saved = 100 * result.tokens_saved / result.tokens_before if result.tokens_before else 0.0
    # counts in the label, figures bare: "126,676 tokens" was cut to "126,676 tok…" at 1366 pixels
    c2.metric("Saved (tokens)", f"{result.tokens_saved:,}", f"{saved:.1f} % of the context", delta_color="off",
              delta_arrow="off")
    c3.metric("Prompt-cache cost (tokens)", f"{result.cache_invalidated_tokens:,}",
              help="Tokens of the previous prompt a prefix cache can no longer reuse: everything after the "
                   "pinned system messages is processed again once.")
    c4.metric("Re-written prompt (tokens)", f"{result.cache_rewrite_tokens:,}",
              help="Tokens of the new prompt after the unchanged prefix.")
    value(loaded, outcome)
    st.plotly_chart(charts.compaction_tokens_figure(result.tokens_before, result.tokens_after,
                                                    result.cache_invalidated_tokens),
                    key="compaction_tokens", config={"displaylogo": False})

    st.subheader("Summary, section by section")
    for name, body in result.sections.items():
        st.markdown(f"#### {ui.escape_markdown(name)}")
        st.code(body.strip() or "(empty)", language=None, wrap_lines=True)
    if result.read_files or result.modified_files:
        c1, c2 = st.columns(2)
        c1.caption("files read")
        c1.code("\n".join(result.read_files) or "(none)", language=None, wrap_lines=True)
        c2.caption("files modified")
        c2.code("\n".join(result.modified_files) or "(none)", language=None, wrap_lines=True)

    with st.expander("The exact request sent to the summariser"):
        for title, request in (("history", result.request), ("split-turn prefix", result.prefix_request)):
            if request is None:
                continue
            st.caption(f"{title}: system prompt")
            st.code(request.system_prompt, language=None, wrap_lines=True)
            st.caption(f"{title}: user message")
            st.code(request.user_message, language=None, wrap_lines=True, height=400)

    st.subheader("Compacted conversation")
    st.dataframe(logic.compacted_frame(result), hide_index=True, width="stretch", key="compacted_table",
                 column_config={"preview": st.column_config.TextColumn("preview", width="large")})
    c1, c2 = st.columns(2)
    c1.download_button("Compacted session (native JSONL)", data=lambda: native_dumps(result.compacted),
                       file_name="compacted.jsonl", mime="application/jsonl", on_click="ignore",
                       key="dl_compacted")
    c2.download_button("Compacted messages (OpenAI JSON)",
                       data=lambda: json.dumps(to_openai_messages(result.compacted), indent=2,
                                               ensure_ascii=False),
                       file_name="compacted.openai.json", mime="application/json", on_click="ignore",
                       key="dl_compacted_openai")


def value(loaded, outcome: logic.Outcome) -> None:
    """What the previewed compaction costs around it and what its summary keeps."""
    recall, dollars = value_logic.value(loaded, outcome)
    with st.container(key="compaction_value_box"):
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Next request, compacted", money(dollars.next_compacting),
                  help="Its input: the unchanged prefix read from the cache, the rest of the new prompt written")
        c2.metric("Next request, as is", money(dollars.next_not_compacting),
                  help="Its input without compacting: the previous prompt read from the cache")
        c3.metric("Each later request saves", money(dollars.per_request),
                  help="Reading the compacted prompt instead of the whole one from the cache")
        c4.metric("Summary recall", "none to score" if recall.recall is None else f"{100 * recall.recall:.1f} %",
                  help="The share of the terms the replies kept after the cut used, that only the summarised "
                       "messages held, which the summary holds (as the Replay page scores a compaction)")
        ui.inert(value_logic.value_caption(recall, dollars))


def wait_for(job, compact_input, preview, choice) -> None:
    """Poll the running compaction; the Cancel button stops waiting (Streamlit reruns at the next poll)."""
    if not job.future.done():
        waiting = st.empty()
        with waiting.container():
            st.button("Cancel", key="cmp_cancel", on_click=logic.cancel, args=(compact_input, preview, choice),
                      icon=":material/cancel:")
            status = st.empty()
        while not job.future.done():
            waited = time.monotonic() - job.started
            bound = f" (at most about {job.longest_wait_s:,.0f} s)" if job.longest_wait_s else ""
            status.caption(f"Summarising… {waited:,.0f} s{bound}")
            time.sleep(0.25)
        waiting.empty()
    logic.finish(job)


def apply_link(loaded, link: dict[str, str] | None) -> None:
    """A reload's, a shared link's settings and summariser (never a key: none is ever in the URL)."""
    if not link:
        return
    preview, problems = logic.settings_from_link(logic.applied_settings(loaded, None), link)
    logic.apply_settings(loaded, preview)
    for key in ("cmp_window", "cmp_reserve", "cmp_keep", "cmp_pruned_first", "cmp_force"):
        ss.pop(key, None)  # the form shows the linked settings
    if link.get("summariser") in ("offline", "endpoint"):
        ss["cmp_summarizer__kept"] = ENDPOINT if link["summariser"] == "endpoint" else OFFLINE
    if link.get("base_url"):
        ss["cmp_base_url__kept"] = link["base_url"]
    if link.get("sum_model"):
        ss["cmp_model__kept"] = link["sum_model"]
    if problems:
        st.warning(ui.escape_markdown("; ".join(problems)) + " The page uses its own settings there.",
                   icon=":material/link_off:")


def write_link(preview, choice) -> None:
    page = logic.settings_params(preview) | {"summariser": choice.kind}
    if choice.kind == "endpoint":
        page |= {"base_url": choice.base_url, "sum_model": choice.model}
    session_state.write_link(page=page, page_keys=logic.PAGE_KEYS, name="compaction")


def render() -> None:
    st.title("Compaction preview")
    loaded = session_state.ensure_session()
    if loaded is None:
        session_state.show_no_session("No session loaded: pick or upload one on the Session explorer page.")
        return
    apply_link(loaded, session_state.linked_view("compaction", logic.PAGE_KEYS))
    ui.inert(f"Session: {loaded.label} ({ui.plural(loaded.session.last_turn, 'turn')}, "
             f"{ui.plural(len(loaded.session.messages), 'message')})")
    st.page_link("app_pages/explorer.py", label="Change the session on the Session explorer page",
                 icon=":material/arrow_back:")
    if not loaded.session.messages:
        st.info("This session has no messages: there is nothing to compact.")
        return
    preview = logic.applied_settings(loaded, None)
    compact_input = logic.compaction_input(loaded, preview)
    preview = settings_form(loaded, compact_input)
    compact_input = logic.compaction_input(loaded, preview)
    plan_view = logic.plan(loaded, compact_input, preview)
    cut_preview(plan_view, loaded, preview)
    recorded_compactions(loaded, preview)

    st.subheader("Compact")
    choice = summarizer_choice()
    write_link(preview, choice)
    if st.button("Compact", type="primary", key="compact_button"):
        logic.start_compaction(compact_input, preview, choice, api_key=ss.get("cmp_api_key") or "")
    job = logic.running_job()
    if job is not None:
        wait_for(job, compact_input, preview, choice)
    outcome = logic.outcome_for(loaded, preview, choice)
    if outcome is not None:
        show_result(outcome, loaded)
    elif ss.get("cmp_outcome") is not None:
        st.caption("Settings changed since the last run: press Compact again.")


ui.guarded(render)
