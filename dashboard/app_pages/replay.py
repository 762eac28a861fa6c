"""Replay: what the model receives at every request under each strategy, and what it costs."""

from __future__ import annotations

import streamlit as st

from pruner.replay import strategy_names
from pruner.replay.settings import DEFAULT_MODELS

from dashboard import cache, loading, replay_charts, session_state, ui
from dashboard.logic import replay as logic

ss = st.session_state
PREVIOUS, NEXT = "◀ Previous request", "Next request ▶"
SHOW_LAST = 30  # newest messages shown in full at a request (the table lists them all)



def apply_link() -> None:
    """``?sample=NAME`` or ``?workload=W&turns=N&seed=S``, and ``&strategy=S&request=K`` (the Guide links here)."""
    params = st.query_params
    link = tuple(sorted(params.to_dict().items()))
    if not link or ss.get("replay_link_applied") == link:
        return  # each link is applied once, so the stepper is free to move afterwards
    ss["replay_link_applied"] = link
    try:
        if "sample" in params:
            session_state.set_current(loading.load_sample(params["sample"]))
        elif "workload" in params:
            session_state.set_current(loading.load_workload(params["workload"], turns=int(params.get("turns", 200)),
                                                            seed=int(params.get("seed", 0))))
    except Exception as exc:
        ss["replay_link_error"] = ui.error_text(exc)
    if params.get("strategy") in strategy_names():
        ss["replay_strategy"] = params["strategy"]
    if str(params.get("request", "")).isdigit():
        ss["replay_request"] = int(params["request"])


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
            window = c2.number_input("Context window (0: the model's)", min_value=0, max_value=10_000_000,
                                     value=applied.context_window or 0, step=10_000, key="replay_window")
            ttl = c3.selectbox("Cache TTL (Anthropic)", ["5m", "1h"], index=["5m", "1h"].index(applied.ttl),
                               key="replay_ttl")
            strategies = st.multiselect("Strategies", strategy_names(), default=applied.names(),
                                        key="replay_strategies")
            c1, c2, c3, c4 = st.columns(4)
            reserve = c1.number_input("Reserve tokens", min_value=0, value=applied.reserve_tokens, step=1_024,
                                      key="replay_reserve", help="compact and truncate above window − reserve")
            keep = c2.number_input("Keep-recent tokens", min_value=0, value=applied.keep_recent_tokens, step=1_000,
                                   key="replay_keep")
            trigger = c3.number_input("clear_tool_uses trigger", min_value=0, value=applied.clear_trigger,
                                      step=10_000, key="replay_trigger")
            clear_keep = c4.number_input("clear_tool_uses keep", min_value=0, value=applied.clear_keep,
                                         key="replay_clear_keep")
            inherit = st.checkbox("A request the recording shows cold is cold for every strategy",
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


def totals(r) -> None:
    st.subheader("Totals per strategy")
    st.caption(f"Dollars: {ui.escape_markdown(r.money_label)}. Cache: {ui.escape_markdown(r.cache_description)}.")
    for note in r.notes:
        st.caption(ui.escape_markdown(note))
    st.dataframe(logic.totals_frame(r), hide_index=True, width="stretch", key="replay_totals")
    lines = logic.calibration_lines(r)
    if lines:
        with st.expander("Calibration against what the provider billed", expanded=True):
            st.code("\n".join(lines), language=None, wrap_lines=True)


def stepper(r, frame) -> tuple[str, int]:
    n = len(r.requests)
    names = list(r.runs)
    if ss.get("replay_strategy") not in names:
        ss["replay_strategy"] = "cache_aware_prune" if "cache_aware_prune" in names else names[0]
    ss["replay_request"] = min(max(int(ss.get("replay_request", 0)), 0), n - 1)

    def step(delta: int) -> None:
        ss["replay_request"] = logic.clamp(int(ss["replay_request"]), delta, n)

    c1, c2 = st.columns([2, 5])
    strategy = c1.selectbox("Strategy", names, key="replay_strategy")
    if n > 1:
        c2.slider("Request (model call)", 0, n - 1, key="replay_request",
                  help="Drag, or press ← / → anywhere on the page.")
    c1, c2, c3 = st.columns([1, 4, 1])
    # ← / → anywhere on the page press these (Streamlit's keyboard shortcuts, as on the Guide).
    c1.button(PREVIOUS, on_click=step, args=(-1,), key="replay_prev", width="stretch", shortcut="Left",
              disabled=ss["replay_request"] == 0, help="Previous request (← key)")
    c3.button(NEXT, on_click=step, args=(1,), key="replay_next", width="stretch", shortcut="Right",
              disabled=ss["replay_request"] >= n - 1, help="Next request (→ key)")
    return strategy, int(ss["replay_request"])


def request_view(r, strategy: str, k: int) -> None:
    s = logic.request_summary(r, strategy, k)
    st.subheader(f"Request {k:,} of {len(r.requests):,} (turn {s['turn']:,}) under {strategy}")
    c1, c2, c3, c4, c5 = st.columns(5)
    c1.metric("Messages sent", f"{s['messages']:,}")
    c2.metric("Input (provider tokens)", f"{s['input']:,}")
    c3.metric("Read from the cache", f"{s['cached']:,}")
    c4.metric("Written / fresh", f"{s['written']:,} / {s['fresh']:,}")
    c5.metric("This request", f"${s['dollars']:,.4f}")
    st.progress(min(1.0, s["input"] / s["window"]) if s["window"] else 0.0,
                text=f"context window {s['window']:,} tokens: {100 * s['input'] / s['window']:.1f} % full"
                     + (" — the API would reject this request" if s["rejected"] else ""))
    if s["miss"]:
        st.caption(f"Cache: not fully used here ({ui.escape_markdown(s['miss'])}).")
    for e in s["events"]:
        st.info(ui.escape_markdown(e), icon=":material/content_cut:")
    rows = logic.context_rows(r, strategy, k)
    st.markdown(f"**The exact messages sent** ({len(rows):,}; placeholders and summaries are marked as what "
                "they are)")
    st.dataframe([{k2: v for k2, v in row.items() if k2 not in ("content", "calls")} for row in rows],
                 hide_index=True, width="stretch", height=220, key="replay_context_table")
    shown = rows[-SHOW_LAST:]
    if len(rows) > len(shown):
        st.caption(f"The newest {len(shown)} in full below (the table lists all {len(rows):,}).")
    for row in shown:
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


def charts(r, frame, k: int) -> None:
    left, right = st.columns(2)
    left.plotly_chart(replay_charts.context_figure(frame, window=r.window, selected=k), key="replay_context_chart",
                      config={"displaylogo": False})
    right.plotly_chart(replay_charts.cost_figure(frame, money_label=r.price.model, selected=k),
                       key="replay_cost_chart", config={"displaylogo": False})
    st.plotly_chart(replay_charts.cached_share_figure(frame, selected=k), key="replay_cached_chart",
                    config={"displaylogo": False})


def events(r) -> None:
    st.subheader("Every prune, compaction, truncation and clearing")
    frame = logic.events_frame(r)
    if frame.empty:
        st.info("No strategy changed the context of this session: it never reached a trigger.")
        return
    st.dataframe(frame, hide_index=True, width="stretch", key="replay_events",
                 column_config={"why": st.column_config.TextColumn("why", width="large")})


def render() -> None:
    st.title("Replay: what the model receives at every request, and what it costs")
    apply_link()
    if ss.get("replay_link_error"):
        st.error(ui.escape_markdown(ss.pop("replay_link_error")) + "\n\nThe link's session could not be opened; "
                 "the previous session is still loaded.")
    loaded = session_state.ensure_session()
    if loaded is None:
        st.info("Load a session on the Session explorer page first.")
        return
    st.caption(f"Session: {ui.escape_markdown(loaded.label)} ({len(loaded.session.messages):,} messages). "
               "Load another on the Session explorer page; this page replays whatever is loaded.")
    choice = settings_form(loaded)
    with st.spinner("Replaying every strategy request by request…"):
        try:
            r = cache.shared("replay", (loaded.key, choice), lambda: logic.run(loaded.session, choice))
        except Exception as exc:
            ui.show_error(exc, what_to_do="Change the replay settings above; the session is still loaded.")
            return
    if not r.requests:
        st.info("This session has no assistant message, so no request was ever made to a model.")
        return
    frame = cache.shared("replay_frame", (loaded.key, choice), lambda: logic.requests_frame(r))
    totals(r)
    strategy, k = stepper(r, frame)
    charts(r, frame, k)
    request_view(r, strategy, k)
    events(r)


ui.guarded(render)
