"""Replay: what the model receives at every request under each strategy, and what it costs."""

from __future__ import annotations

import streamlit as st

from pruner.replay import ReplaySettings, strategy_names, verdict
from pruner.replay.verdict import DOCS
from pruner.replay.wire import TokenBook
from pruner.replay.settings import DEFAULT_MODELS

from dashboard import analysis, cache, charts, context_views, deferred, links, replay_charts, session_state, ui
from dashboard.controls import control, options
from dashboard import replay_answers as answers
from dashboard.recorded import recorded_context
from dashboard.logic import replay as logic
from dashboard.logic import explorer_answer, replay_bound
from dashboard.logic.replay_bound import Bound
from pruner.money import money

ss = st.session_state
#: The request and strategy shown: kept outside the widgets' own state, which Streamlit drops on another page.
REQUEST, STRATEGY = "replay_k", "replay_s"
HIGHLIGHT = "replay_broke"  # (request, id of the message that broke the cached prefix) from a ledger click
PREVIOUS, NEXT = "◀ Previous request", "Next request ▶"
#: The charts' container (the browser's script waits for them), the button drawing the rest, its flag.
CHARTS_BOX, BELOW_KEY, BELOW_DRAWN_FOR = "replay_charts_box", "replay_draw_below", "replay_below_drawn_for"
SHOW_LAST = 12  # newest messages shown in full at a request (the table lists them all; fewer: a faster step)
#: The replay whose hindsight bound the visitor asked for (a long session's is computed on a click).
BOUND_ASKED = replay_bound.ASKED



def apply_link(loaded, link: dict[str, str] | None) -> None:
    """Apply the page's own URL parameters (a reload, a shared link, the Guide's link): once each."""
    if link is None:
        return
    if link.get("strategy") in strategy_names():
        ss[STRATEGY] = link["strategy"]
    if str(link.get("request", "")).isdigit():
        ss[REQUEST] = int(link["request"])
    if any(k in link for k in ("strategies", "provider", "model")):
        base = logic.choice_for(loaded.session, ss.get("replay_choice"))
        choice, problems = logic.choice_from_link(base, link)
        ss["replay_choice_for"], ss["replay_choice"] = loaded.key, choice
        for key in ("replay_provider", "replay_model", "replay_strategies"):
            ss.pop(key, None)  # the form's widgets show the linked choice
        if problems:
            ss["replay_link_error"] = "; ".join(problems) + "."


def settings_form(loaded) -> logic.ReplayChoice:
    """Provider, model, prices and strategy knobs, applied on submit (the replay reruns then). A newly
    loaded session starts from the provider and model it records."""
    if ss.get("replay_choice_for") != loaded.key:
        ss["replay_choice_for"] = loaded.key
        ss["replay_choice"] = logic.choice_for(loaded.session, ss.get("replay_choice"))
    applied: logic.ReplayChoice = ss.get("replay_choice") or logic.ReplayChoice()
    with st.expander("Replay settings and prices", expanded=False):
        provider = st.radio("Provider (prompt cache and prices)", sorted(DEFAULT_MODELS), horizontal=True,
                            index=sorted(DEFAULT_MODELS).index(applied.provider), key="replay_provider")
        names = logic.models(provider)
        model_index = names.index(applied.model) if applied.model in names else names.index(DEFAULT_MODELS[provider])
        with st.form("replay_settings"):
            c1, c2, c3 = st.columns(3)
            model = c1.selectbox("Model", names, index=model_index, key="replay_model")
            window = c2.number_input(**control(ReplaySettings, "context_window"), min_value=0, max_value=10_000_000,
                                     value=applied.context_window or 0, step=10_000, key="replay_window")
            ttls = options(ReplaySettings, "ttl")
            ttl = c3.selectbox(**control(ReplaySettings, "ttl"), options=ttls, index=ttls.index(applied.ttl),
                               key="replay_ttl")
            strategies = st.multiselect("Strategies", strategy_names(), default=applied.names(),
                                        key="replay_strategies")
            c1, c2, c3, c4 = st.columns(4)
            reserve = c1.number_input(**control(ReplaySettings, "reserve_tokens"), min_value=0,
                                      value=applied.reserve_tokens, step=1_024, key="replay_reserve")
            keep = c2.number_input(**control(ReplaySettings, "keep_recent_tokens"), min_value=0,
                                   value=applied.keep_recent_tokens, step=1_000, key="replay_keep")
            trigger = c3.number_input(**control(ReplaySettings, "clear_trigger"), min_value=0,
                                      value=applied.clear_trigger, step=10_000, key="replay_trigger")
            clear_keep = c4.number_input(**control(ReplaySettings, "clear_keep"), min_value=0,
                                         value=applied.clear_keep, key="replay_clear_keep")
            inherit = st.checkbox(**control(ReplaySettings, "inherit_cold", with_help=False),
                                  value=applied.inherit_cold, key="replay_inherit")
            st.markdown("**Prices** (USD per million tokens; leave as they are to use the dated table)")
            row = logic.default_prices().get(model, provider)
            same_model = applied.model == model
            c1, c2, c3, c4 = st.columns(4)
            p_in = c1.number_input("input", min_value=0.0, format="%.4f", key="replay_p_in",
                                   value=float(applied.input_price if same_model and applied.input_price is not None
                                               else row.input))
            p_cached = c2.number_input("cached input", min_value=0.0, format="%.4f", key="replay_p_cached",
                                       value=float(applied.cached_price if same_model and applied.cached_price
                                                   is not None else row.cached_input))
            p_write = c3.number_input("cache write (5 min)", min_value=0.0, format="%.4f", key="replay_p_write",
                                      value=float(applied.write_price if same_model and applied.write_price
                                                  is not None else row.write_price()))
            p_out = c4.number_input("output", min_value=0.0, format="%.4f", key="replay_p_out",
                                    value=float(applied.output_price if same_model and applied.output_price
                                                is not None else row.output))
            if st.form_submit_button("Apply", type="primary"):
                if not strategies:
                    st.error("Choose at least one strategy; the previous settings are still applied.")
                else:
                    def edited(value: float, table_value: float) -> float | None:
                        return None if abs(value - table_value) < 1e-9 else float(value)
                    ss["replay_choice"] = logic.ReplayChoice(
                        provider=provider, model=model, strategies=tuple(strategies),
                        context_window=int(window) or None, ttl=ttl, reserve_tokens=int(reserve),
                        keep_recent_tokens=int(keep), clear_trigger=int(trigger), clear_keep=int(clear_keep),
                        inherit_cold=bool(inherit), input_price=edited(p_in, row.input),
                        cached_price=edited(p_cached, row.cached_input), write_price=edited(p_write, row.write_price()),
                        output_price=edited(p_out, row.output))
    return ss.get("replay_choice") or applied


def totals(r, key, bound: Bound, said) -> None:
    st.subheader("Totals per strategy")
    aborted = cache.shared("replay_aborted", key, lambda: logic.aborted_note(r))
    if aborted:
        st.caption(aborted)
    uncached = cache.shared("replay_uncached", key, lambda: logic.nothing_cached_note(r, frame_of(r, key)))
    if uncached:
        st.info(ui.escape_markdown(uncached), icon=":material/info:")
    regret = None if bound.state != "done" else cache.shared(
        "replay_regret", key, lambda: replay_bound.regret_column(r, bound.limits))
    frame = cache.shared("replay_totals_bound" if regret is not None else "replay_totals", key,
                         lambda: logic.totals_frame(r, regret))
    with st.container(key="replay_totals_box"):  # the browser test measures that every column shows
        st.dataframe(logic.styled_totals(frame), hide_index=True, width="stretch", key="replay_totals",
                     column_config=logic.totals_columns(frame))
    for name in logic.infeasible(r):  # never an amount: "n/a: over the window from request N ($X up to there)"
        st.caption(f":grey[**{ui.escape_markdown(name)}**: {ui.escape_markdown(said.figures.na_of(name))}]")
    with st.expander("Every figure, and what each strategy sends"):
        detail = cache.shared("replay_detail", key, lambda: logic.detail_frame(r))
        st.dataframe(detail, hide_index=True, width="stretch", key="replay_totals_detail",
                     column_config=logic.totals_columns(detail))
        for name, text in cache.shared("replay_summaries", key, lambda: logic.summaries(r)):
            st.caption(f"**{ui.escape_markdown(name)}**: {ui.escape_markdown(text)}")


def frame_of(r, key):
    return cache.shared("replay_frame", key, lambda: logic.requests_frame(r))


def go_to(k: int, strategy: str | None = None) -> None:
    """Show request ``k`` (and ``strategy``): for the stepper, a chart click, an event or ledger row."""
    ss[REQUEST] = int(k)
    ss[REQUEST_WIDGET] = int(k)
    if strategy is not None:
        ss[STRATEGY] = strategy


REQUEST_WIDGET, STRATEGY_WIDGET = "replay_request", "replay_strategy"


def stepper(r, key) -> tuple[str, int]:
    n = len(r.requests)
    names = list(r.runs)
    if ss.get(STRATEGY) not in names:  # the strategy the verdict names, as the page's answer says
        named = cache.shared("replay_verdict", key, lambda: verdict(r)).strategy  # the bound does not change it
        ss[STRATEGY] = named if named in names else names[0]
    ss[REQUEST] = min(max(int(ss.get(REQUEST, 0)), 0), n - 1)
    ss[STRATEGY_WIDGET], ss[REQUEST_WIDGET] = ss[STRATEGY], ss[REQUEST]  # the widgets show what is kept

    def step(delta: int) -> None:
        go_to(logic.clamp(int(ss[REQUEST]), delta, n))

    c1, c2 = st.columns([2, 5])
    c1.selectbox("Strategy", names, key=STRATEGY_WIDGET, on_change=lambda: ss.update({STRATEGY: ss[STRATEGY_WIDGET]}))
    if n > 1:
        c2.slider("Request (model call)", 0, n - 1, key=REQUEST_WIDGET,
                  on_change=lambda: go_to(ss[REQUEST_WIDGET]),
                  help="Drag, press ← / → anywhere on the page, or click a point on a chart or a row of a table.")
    c1, c2, c3 = st.columns([1, 4, 1])
    # ← / → anywhere on the page press these (dashboard/early_keys.py: one listener, drawn by the app).
    c1.button(PREVIOUS, on_click=step, args=(-1,), key="replay_prev", width="stretch",
              disabled=ss[REQUEST] == 0, help="Previous request (← key)")
    c3.button(NEXT, on_click=step, args=(1,), key="replay_next", width="stretch",
              disabled=ss[REQUEST] >= n - 1, help="Next request (→ key)")
    return ss[STRATEGY], int(ss[REQUEST])


def request_view(r, key, strategy: str, k: int) -> None:
    s = logic.request_summary(r, strategy, k)
    st.subheader(f"Request {k:,} of {len(r.requests):,} (turn {s['turn']:,}) under {strategy}")
    if s["aborted"]:
        st.caption("The recording shows this request aborted (no usage recorded): it is billed $0 for every "
                   "strategy and not counted among the billed requests.")
    c1, c2, c3, c4, c5 = st.columns(5)
    c1.metric("Messages sent", f"{s['messages']:,}")
    c2.metric("Input (provider tokens)", f"{s['input']:,}",
              help="Everything sent at this request, in the provider's tokens (under as_recorded: the recorded "
                   "input + cache read + cache write)")
    c3.metric("Read from the cache", ui.compact_number(s["cached"]), help=f"{s['cached']:,} tokens")
    c4.metric("Written / fresh", f"{ui.compact_number(s['written'])} / {ui.compact_number(s['fresh'])}",
              help=f"{s['written']:,} written to the cache / {s['fresh']:,} fresh")
    c5.metric("This request", money(s["dollars"]), help=f"${s['dollars']:,.6f}")
    st.progress(min(1.0, s["input"] / s["window"]) if s["window"] else 0.0,
                text=f"context window {s['window']:,} tokens: {100 * s['input'] / s['window']:.1f} % full"
                     + (" — the API would reject this request" if s["rejected"] else ""))
    if s["miss"]:
        st.caption(f"Cache: not fully used here ({ui.escape_markdown(s['miss'])}).")
    for e in s["events"]:
        st.info(ui.escape_markdown(e), icon=":material/content_cut:")
    book = cache.shared("replay_book", key, lambda: TokenBook(r.settings.prune.encoding))
    rows = cache.memoised("replay_context_rows", (key, strategy, k),
                          lambda: logic.context_rows(r, strategy, k, book), keep=64)
    st.markdown(f"**The exact messages sent** ({len(rows):,}; placeholders and summaries are marked as what "
                "they are)")
    st.dataframe(logic.context_table(rows), hide_index=True, width="stretch", height=220,
                 key="replay_context_table")
    broke = ss.get(HIGHLIGHT) or (None, "")
    broke_id = broke[1] if broke[0] == k and strategy == "as_recorded" else ""
    shown = rows[-SHOW_LAST:]
    if broke_id and all(row["id"] != broke_id for row in shown):
        shown = [row for row in rows if row["id"] == broke_id] + shown
    if len(rows) > len(shown):
        st.caption(f"The newest {len(shown)} in full below (the table lists all {len(rows):,}).")
    for row in shown:
        if row["id"] == broke_id:
            st.error(f"Message #{row['position']} ({ui.escape_markdown(row['id'])}) differs from what the previous "
                     "request sent: it broke the cached prefix.", icon=":material/link_off:")
        head = f"#{row['position']} · {row['role']} · {row['id']}"
        if row["answers"]:
            head += f" · result of {row['answers']}"
        if row["kind"]:
            head += f" · [{row['kind']}]"
        head += f" · {row['tokens']:,} tokens"
        with st.container(border=True):
            ui.inert(head)
            text = row["content"] + (("\n" + row["calls"]) if row["calls"] else "")
            st.code(text or "(empty)", language=None, wrap_lines=True)


def _on_chart_click(chart_key: str) -> None:
    k = logic.clicked_request(ss.get(chart_key))
    if k is not None:
        go_to(k)


def overview_charts(r, key, frame, bound: Bound) -> None:
    with st.container(key=CHARTS_BOX):
        _charts(r, key, frame, bound)


def _charts(r, key, frame, bound: Bound) -> None:
    def build():
        line = marks = None
        if bound.limits is not None:
            line = cache.shared("replay_bound_frame", key, lambda: replay_bound.bound_frame(r, bound.limits))
            marks = replay_bound.schedule_marks(bound.limits, line)
        return replay_charts.overview_figure(
            frame, window=r.window, money_label=r.price.model, greyed=logic.infeasible(r),
            context_extra=answers.miss_markers(r, frame), bound=line, bound_marks=marks)

    overview = cache.shared("replay_overview_bound" if bound.limits is not None else "replay_overview", key, build)
    st.plotly_chart(overview, key="replay_overview_chart", on_select=lambda: _on_chart_click("replay_overview_chart"),
                    selection_mode="points",
                    config={"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]})
    st.caption("Markers: ▼ prune, ◆ compaction, ✕ truncation, ■ clearing; red hollow marks: the recording's cache "
               "misses, one legend entry per cause. Click a point to open that request below; click a legend "
               "entry to hide or show a strategy (double-click: only that one)."
               + (" Dashed: the cheapest schedule found in hindsight, its actions marked on it (| drop, "
                  "▽ prune, ◇ compact)." if bound.limits is not None else ""))
    strip = cache.shared("replay_strip", key, lambda: replay_charts.cached_strip_figure(frame))
    st.plotly_chart(strip, key="replay_cached_chart", on_select=lambda: _on_chart_click("replay_cached_chart"),
                    selection_mode="points", config={"displaylogo": False, "displayModeBar": False})


def _on_event_row(frame) -> None:
    rows = (ss.get("replay_events") or {}).get("selection", {}).get("rows", [])
    if rows and rows[0] < len(frame):
        go_to(int(frame.iloc[rows[0]]["request"]), str(frame.iloc[rows[0]]["strategy"]))


def events(r, key) -> None:
    st.subheader("Every prune, compaction, truncation and clearing")
    frame = cache.shared("replay_events", key, lambda: logic.events_frame(r))
    if frame.empty:
        st.info("No strategy changed the context of this session: it never reached a trigger.")
        return
    st.caption("Select a row to open that request under that strategy.")
    with st.container(key="replay_events_box"):
        st.dataframe(frame, hide_index=True, width="stretch", key="replay_events",
                     on_select=lambda: _on_event_row(frame), selection_mode="single-row",
                     column_config={"why": st.column_config.TextColumn("why", width="large"),
                                    "request dollars": st.column_config.NumberColumn("request dollars",
                                                                                     format="$%.4f")})


def _on_miss_row(frame) -> None:
    rows = (ss.get("replay_misses") or {}).get("selection", {}).get("rows", [])
    if rows and rows[0] < len(frame):
        row = frame.iloc[rows[0]]
        go_to(int(row["request"]), "as_recorded")
        ss[HIGHLIGHT] = (int(row["request"]), str(row["broke the prefix"]))


def ledger(r, key) -> None:
    """The recording's cache misses by cause with what they re-billed; a click on a miss opens it."""
    misses = cache.shared("replay_misses", key, lambda: answers.ledger_frame(r))
    if misses.empty:
        return
    st.subheader("Where the recording's cache broke, and what it cost")
    causes = cache.shared("replay_causes", key, lambda: answers.causes_frame(r))
    with st.container(key="replay_ledger_box"):
        st.dataframe(causes, hide_index=True, width="stretch", key="replay_ledger", column_config={
            "cause": st.column_config.TextColumn("cause", width=200),
            "misses": st.column_config.NumberColumn("misses", format="localized", width=90),
            "partial hits": st.column_config.NumberColumn("partial hits", format="localized", width=110),
            "re-billed": st.column_config.NumberColumn("re-billed", format="dollar", width=110,
                                                       help="Paid above the same requests served from the cache")})
    st.caption("Select a miss to open that request under as_recorded, the message that broke the prefix marked.")
    with st.container(key="replay_misses_box"):
        st.dataframe(misses, hide_index=True, width="stretch", key="replay_misses", selection_mode="single-row",
                     on_select=lambda: _on_miss_row(misses), height=min(38 + 35 * len(misses), 300),
                     column_config={"re-billed": st.column_config.NumberColumn("re-billed", format="$%.4f"),
                                    "detail": st.column_config.TextColumn("detail", width="large")})


def _on_recall_click() -> None:
    name = answers.clicked_strategy(ss.get("replay_recall_chart"))
    if name is not None:
        ss[STRATEGY] = name


def cost_against_recall(r, key, bound: Bound) -> None:
    points = cache.shared("replay_recall_points", key, lambda: answers.recall_points(r))
    if points.empty:
        return
    fig = answers.cost_recall_figure(points, title=answers.COST_RECALL_TITLE, selected=ss.get(STRATEGY),
                                     bound=replay_bound.bound_point(bound.limits))
    st.plotly_chart(fig, key="replay_recall_chart", on_select=_on_recall_click, selection_mode="points",
                    config={"displaylogo": False, "displayModeBar": False})
    st.caption("One point per strategy: what it costs against the share of the terms the replies used that its "
               "context still held (★ the recording; ◆ the cheapest schedule in hindsight, when computed; a strategy "
               "over the window is not plotted: see the table). Click a point to step through that strategy below.")


def losses(r, loaded, strategy: str, k: int) -> None:
    """At request k: the used terms the strategy's context lacked, each with a link to the message that held it."""
    lost = answers.recall_losses(r, strategy, k)
    if not lost:
        return
    st.markdown(f"**What {ui.escape_markdown(strategy)} lacks here**: {ui.plural(len(lost), 'term')} the replies "
                "used that its context no longer held")
    source = links.source_params(loaded)
    for loss in lost[:12]:
        c1, c2 = st.columns([3, 2], vertical_alignment="center")
        c1.text(f"{loss['term']} — held by {loss['held by']}"
                + (f" (sent instead: {loss['sent instead'][:80]})" if loss["sent instead"] else ""))
        if loss["chain"] == "main" and loss["position"] is not None and source:
            c2.page_link("app_pages/explorer.py", label=f"open #{loss['position']:,} in the explorer",
                         query_params=source | {"msg": str(loss["position"])}, icon=":material/open_in_new:")
    if len(lost) > 12:
        st.caption(f"and {len(lost) - 12:,} more terms.")


@st.fragment
def request_part(r, key, loaded, choice) -> None:
    """The stepper and the request it shows: a step reruns only this part (the charts stay as drawn)."""
    strategy, k = stepper(r, key)
    request_view(r, key, strategy, k)
    losses(r, loaded, strategy, k)
    page = logic.choice_params(choice, logic.choice_for(loaded.session, None)) | {"strategy": strategy,
                                                                                  "request": str(k)}
    session_state.write_link(page=page, page_keys=logic.PAGE_KEYS, name="replay")


def render() -> None:
    st.title("Replay: what the model receives at every request, and what it costs")
    loading_note = st.empty()
    if not session_state.link_was_read():
        # As on the explorer: a tiny chart first, so the browser fetches and compiles plotly.js while the
        # replay runs, and the charts are drawn when they arrive instead of standing as empty boxes.
        loading_note.plotly_chart(charts.loading_figure("Loading the session and replaying every strategy…"),
                                  key="replay_loading", config={"displayModeBar": False, "staticPlot": True})
    try:
        page(loading_note)
    finally:
        loading_note.empty()


def page(loading_note) -> None:
    loaded = session_state.ensure_session()
    if loaded is None:
        session_state.show_no_session("Load a session on the Session explorer page first.")
        return
    apply_link(loaded, session_state.linked_view("replay", logic.PAGE_KEYS))
    if ss.get("replay_link_error"):
        st.warning(ui.escape_markdown(ss.pop("replay_link_error")) + " The page uses its own choice there.",
                   icon=":material/link_off:")
    st.caption(f"Session: {ui.escape_markdown(loaded.label)} ({len(loaded.session.messages):,} messages). "
               "Load another on the Session explorer page; this page replays whatever is loaded.")
    recorded = recorded_context(loaded.session)
    if recorded is not None:
        stats = analysis.analyse(loaded, session_state.settings()).result.stats
        st.caption(ui.escape_markdown(recorded.sentence(stats.tokens_before, stats.counter)))
    refusal = cache.shared("explorer_refusal", loaded.key, lambda: explorer_answer.refused(loaded.session))
    if refusal is not None:  # as pruner replay: a counterfactual priced from the transcript alone would read as a bill
        st.info(ui.escape_markdown(refusal.lines[0]), icon=":material/gavel:")
        return
    choice = settings_form(loaded)
    key = (loaded.key, choice)
    progress = st.empty()
    if not cache.has("replay", key):
        progress.info("Replaying every strategy request by request…", icon=":material/hourglass_top:")
    try:
        r = cache.shared("replay", key, lambda: logic.run(loaded.session, choice))
    except Exception as exc:
        progress.empty()
        ui.show_error(exc, what_to_do="Change the replay settings above; the session is still loaded.")
        return
    progress.empty()
    if not r.requests:
        st.info("This session has no assistant message, so no request was ever made to a model.")
        return
    frame = frame_of(r, key)
    bound = hindsight(r, key)
    said = told(r, key, bound)
    with st.container(key="replay_verdict_box"):
        # the verdict: the one Answer's three lines, each a paragraph (transcript terms in them made inert)
        st.info("\n\n".join(ui.escape_markdown(line) for line in said.lines()), icon=":material/gavel:")
        bound_status(r, key, bound)
        seen = said.figures.visibility
        if seen is not None and seen.warn:
            st.warning(ui.escape_markdown(seen.sentence()), icon=":material/visibility_off:")
        explain(r, key, said)
    totals(r, key, bound, said)
    overview_charts(r, key, frame, bound)
    below_charts(r, key, loaded, choice, said, bound)


def told(r, key, bound: Bound):
    """The replay's ``Answer`` with the bound as the page has it (``replay_bound.answer``): rendered, never
    recomposed."""
    pending = f"not yet: on a session of {len(r.requests):,} requests it runs when you press the button below"
    state = bound.state if bound.state != "done" or bound.limits is not None else "none"
    return cache.shared("replay_answer", (key, state), lambda: replay_bound.answer(r, bound, pending=pending))


def explain(r, key, said) -> None:
    """The method, the calibration and the caveats, folded under the verdict, with where each is documented."""
    with st.expander("How this answer is reached: method, calibration, caveats"):
        for line in said.explain()[:-1]:  # the last is the list of pages, as links below
            st.caption(ui.escape_markdown(line))
        st.caption(f"Dollars: {ui.escape_markdown(r.money_label)}. Cache: {ui.escape_markdown(r.cache_description)}.")
        for note in r.notes:
            st.caption(ui.escape_markdown(note))
        lines = cache.shared("replay_calibration", key, lambda: logic.calibration_lines(r))
        if lines:
            st.markdown("**Calibration against what the provider billed**")
            st.code("\n".join(lines), language=None, wrap_lines=True)
        # the pages ship with the project (docs/); the dashboard serves nothing beyond itself, so their paths
        st.markdown("Read more: " + " · ".join(f"{title} (`{path}`)" for title, path in DOCS))


def hindsight(r, key) -> Bound:
    """The bound of this replay: computed with it up to ``replay_bound.AT_ONCE_MAX_REQUESTS`` requests,
    above that once the visitor clicks (the search is slow on long sessions today); cached per replay."""
    if not replay_bound.computes_at_once(len(r.requests)) and ss.get(BOUND_ASKED) != key:
        return Bound("pending")
    note = st.empty()
    if not cache.has("replay_limits", key):
        note.info("Computing the hindsight bound…", icon=":material/hourglass_top:")
    try:
        limits = cache.shared("replay_limits", key, lambda: replay_bound.limits(r))
    except Exception as exc:  # the replay stands without its bound; the message says what to do
        return Bound("failed", error=ui.error_text(exc))
    finally:
        note.empty()
    return Bound("done", limits)


def bound_status(r, key, bound: Bound) -> None:
    """Under the verdict (whose third line says whether the bound is computed): the button that computes a long
    session's, or why it failed."""
    if bound.state == "pending":
        st.button("Compute the hindsight bound", key="replay_bound_button",
                  help=f"Its search is slow on long sessions today, so above {replay_bound.AT_ONCE_MAX_REQUESTS:,} "
                       "requests it runs when you ask; the verdict, the strategies table and the charts then show it.",
                  on_click=lambda: ss.update({BOUND_ASKED: key}))
    elif bound.state == "failed":
        st.warning(f"The hindsight bound could not be computed ({ui.escape_markdown(bound.error)}). "
                   "The rest of the page stands; change the replay settings above to try again.",
                   icon=":material/warning:")


@st.fragment
def below_charts(r, key, loaded, choice, said, bound: Bound) -> None:
    """The ledger, the cost against recall, the stepper and the events. A long replay's first view draws them
    once the browser drew the charts above (its 10,000-row events table, 1.5 MB, arrived while plotly
    drew them and held them back by a second); the click reruns only this part."""
    if not deferred.draw_now(BELOW_DRAWN_FOR, key, logic.defers_below(len(r.requests))):
        deferred.later(CHARTS_BOX, BELOW_KEY, "the rest of the page",
                       caption="Long session: the cache ledger, the cost against recall, the request stepper and "
                               "the events are drawn as soon as the charts above are on screen.",
                       marks=(".legendtext", ".heatmaplayer image"))
        return
    ledger(r, key)
    cost_against_recall(r, key, bound)
    context_views.lost_section(r, key, said.best, said.closest)
    context_views.composition_section(r, key, said.best)
    request_part(r, key, loaded, choice)
    events(r, key)


ui.guarded(render)
