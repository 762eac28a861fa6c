"""Corpus: what pruning saves across a whole batch (the folder `pruner batch --out DIR` wrote)."""

from __future__ import annotations

import os
from typing import cast
from datetime import date

import pandas as pd
import streamlit as st

from dashboard import cache, components, context_views, corpus_charts, corpus_live, links, session_state, ui
from dashboard import corpus_money_charts as money_charts
from dashboard import rollup_charts
from dashboard.logic import corpus as logic
from dashboard.logic import corpus_bound as bound_logic
from dashboard.logic import corpus_money as money_logic
from dashboard.logic import corpus_rollup as rollup_logic
from pruner.money import money

ss = st.session_state
FOLDER_ENV = "PRUNER_CORPUS_DIR"
EXPLORER_PAGE = session_state.EXPLORER_PAGE


def open_folder(folder: str) -> None:
    """Read the folder; on failure keep the corpus already shown and remember the error."""
    try:
        ss["corpus"] = logic.read_corpus(folder)
        ss["corpus_error"] = None
    except Exception as exc:
        ss["corpus_error"] = ui.error_text(exc)


def folder_form(link: dict[str, str] | None) -> None:
    folder_named = (link or {}).get("corpus")
    shown = ss.get("corpus")
    if folder_named and (shown is None or shown.folder != folder_named):  # a reload's or a link's folder
        open_folder(folder_named)
    shown = ss.get("corpus")
    default = shown.folder if shown else os.environ.get(FOLDER_ENV, "")
    with st.form("corpus_folder"):
        folder = st.text_input("Batch folder", value=default, key="corpus_folder_input",
                               help="The folder you gave `pruner batch` or `pruner logs` as --out (a path on "
                                    "the machine that runs this dashboard).", placeholder="/path/to/batch-out")
        if st.form_submit_button("Open", type="primary") and folder.strip():
            open_folder(folder.strip())
    if ss.get("corpus_error"):
        st.error(ui.escape_markdown(ss["corpus_error"]) + "\n\n" + (
            "The batch shown before is still open." if ss.get("corpus") else
            "Run `pruner batch INPUT... --out DIR`, then enter DIR here."), icon=":material/error:")


def request_open(session_id: str | None) -> None:
    if session_id:
        ss["corpus_open"] = session_id


def on_table_select() -> None:
    rows = (ss.get("corpus_table") or {}).get("selection", {}).get("rows", [])
    ids = ss.get("corpus_table_ids") or []
    if rows and rows[0] < len(ids):
        request_open(ids[rows[0]])


def open_requested(shown) -> None:
    """Open the session the user clicked in the Session explorer (with the batch's settings)."""
    session_id = ss.pop("corpus_open", None)
    if not session_id:
        return
    try:
        session_state.open_in_explorer(shown, session_id, ss)
    except Exception as exc:
        ss["corpus_open_error"] = ui.error_text(exc)
        return
    ss["corpus_open_error"] = None
    st.switch_page(EXPLORER_PAGE)


def headline(shown) -> None:
    t = logic.totals(shown.sessions)
    tokens, tokens_exact = components.before_after(t["tokens_before"], t["tokens_after"])
    cols = st.columns(4)
    cols[0].metric("Sessions", f"{t['sessions']:,}", help=f"from {ui.plural(t['files'], 'file')}")
    cols[1].metric("Failed", f"{t['failed']:,}", help="Files or dialogues that could not be read or pruned; "
                                                        "their errors are in the table (filter: errors only).")
    cols[2].metric("Tokens before → after", tokens, help=f"{tokens_exact} tokens. After = the kept messages plus "
                                                           "the placeholders sent for pruned tool results.")
    cols[3].metric("Token reduction", f"{100 * t['reduction']:.1f} %")
    config = shown.settings.get("config", {})
    st.caption(f"Folder {ui.escape_markdown(shown.folder)} · counter `{config.get('encoding', '?')}` · "
               f"passes: expire {config.get('expire')}, dedupe {config.get('deduplicate')}, "
               f"restore {config.get('restore')} · near-duplicate threshold {config.get('near_duplicate_threshold')}")


def charts(shown) -> None:
    frame = shown.sessions
    key = (shown.folder, len(frame), shown.manifest.get("last_run", {}).get("elapsed_s"))
    left, right = st.columns(2)
    left.plotly_chart(cache.shared("corpus_hist", key, lambda: corpus_charts.reduction_histogram(frame)),
                      key="corpus_hist")
    right.plotly_chart(cache.shared("corpus_tokens", key, lambda: corpus_charts.tokens_figure(logic.totals(frame))),
                       key="corpus_tokens")
    if shown.replay is not None and len(shown.replay):
        st.plotly_chart(corpus_charts.dollars_figure(logic.replay_totals(shown.replay)), key="corpus_dollars")
        st.caption("Prices: " + ui.escape_markdown(str(shown.replay["prices"].iloc[0])))
    left, right = st.columns(2)
    left.plotly_chart(corpus_charts.format_figure(logic.by_format(frame)), key="corpus_formats")
    right.plotly_chart(corpus_charts.rule_figure(logic.by_rule(frame, shown.rule_statuses)), key="corpus_rules")
    most, least = logic.extremes(frame)
    st.caption("Click a bar to open that session in the Session explorer.")
    left, right = st.columns(2)
    left.plotly_chart(corpus_charts.extremes_figure(most, title="Sessions that gain most"), key="corpus_most",
                      on_select=lambda: request_open(corpus_charts.clicked_session(ss.get("corpus_most"))),
                      selection_mode="points")
    right.plotly_chart(corpus_charts.extremes_figure(least, title="Sessions that gain least"), key="corpus_least",
                       on_select=lambda: request_open(corpus_charts.clicked_session(ss.get("corpus_least"))),
                       selection_mode="points")


#: The table's filter widgets (their values outlive a visit to another page, and go into the URL).
FILTERS = ("corpus_filter_format", "corpus_filter_reduction", "corpus_filter_errors", "corpus_filter_text")


def table(shown, link: dict[str, str] | None) -> None:
    st.subheader("Sessions")
    frame = shown.sessions
    names = sorted(frame["format"].dropna().unique())
    low = float(min(0.0, frame["reduction_pct"].min())) if frame["reduction_pct"].notna().any() else 0.0
    for key in FILTERS:
        session_state.restore_widget(key)
    if link:
        values, problems = links.corpus_filters(link, formats=names, choices=logic.ERROR_CHOICES, low=low)
        for key, value in values.items():
            ss[key] = ss[f"{key}__kept"] = value
        if problems:
            st.warning(ui.escape_markdown("; ".join(problems)) + ".", icon=":material/link_off:")
    # kept from another batch: only what this one can show
    ss["corpus_filter_format"] = [f for f in ss.get("corpus_filter_format") or [] if f in names]
    kept = ss.get("corpus_filter_reduction")
    if kept is not None and not low <= kept[0] <= kept[1] <= 100.0:
        ss["corpus_filter_reduction"] = (low, 100.0)
    c1, c2, c3, c4 = st.columns([2, 2, 1, 2])
    remember = session_state.remember_widget
    formats = c1.multiselect("Format", names, key="corpus_filter_format",
                             on_change=remember, args=("corpus_filter_format",))
    if "corpus_filter_reduction" not in ss:
        ss["corpus_filter_reduction"] = (low, 100.0)
    # its key holds a (low, high) pair (set above), which makes it a range slider: it answers a pair
    reduction = cast(tuple[float, float], c2.slider(
        "Reduction %", min_value=low, max_value=100.0, step=0.5, key="corpus_filter_reduction",
        on_change=remember, args=("corpus_filter_reduction",)))
    errors = c3.selectbox("Show", logic.ERROR_CHOICES, key="corpus_filter_errors",
                          on_change=remember, args=("corpus_filter_errors",))
    text = c4.text_input("Search path or name", key="corpus_filter_text",
                         on_change=remember, args=("corpus_filter_text",))
    session_state.write_link(page=links.corpus_params(shown.folder, formats=formats, reduction=reduction,
                                                      full=(low, 100.0), show=errors,
                                                      default_show=logic.ERROR_CHOICES[0], text=text),
                             page_keys=links.CORPUS_KEYS, name="corpus")
    shown_rows = logic.filter_sessions(frame, formats=formats, reduction=reduction, errors=errors, text=text)
    rows = logic.table_frame(shown_rows)
    ss["corpus_table_ids"] = shown_rows["session_id"].head(len(rows)).tolist()
    st.caption(f"{len(shown_rows):,} of {len(frame):,} rows match"
               + (f"; the first {len(rows):,} are shown" if len(rows) < len(shown_rows) else "")
               + ". Select a row to open it in the Session explorer.")
    st.dataframe(rows, hide_index=True, width="stretch", key="corpus_table", on_select=on_table_select,
                 selection_mode="single-row",
                 column_config={"error": st.column_config.TextColumn("error", width="large"),
                                "reduction_pct": st.column_config.NumberColumn("reduction %", format="%.1f")})
    st.download_button("Matching rows (CSV)", data=lambda: shown_rows.to_csv(index=False),
                       file_name="corpus-sessions.csv", mime="text/csv", on_click="ignore", key="corpus_dl")


def render() -> None:
    st.title("Corpus")
    st.caption("What pruning saves across many sessions, or what your own agent logs cost: open the folder "
               "`pruner batch` or `pruner logs` wrote.")
    link = session_state.linked_view("corpus", links.CORPUS_KEYS)
    folder_form(link)
    shown = ss.get("corpus")
    if isinstance(shown, money_logic.LogsCorpus):
        logs_view(shown, link)
        return
    if shown is not None and not shown.sessions.empty and (link or {}).get("corpus") not in (None, shown.folder):
        link = None  # the linked folder did not open: its filters belong to it, not to the batch still shown
    if shown is None:
        st.info("No batch open yet. Run `pruner batch sample_sessions --out /tmp/batch`, then open /tmp/batch.")
        return
    open_requested(shown)
    if ss.get("corpus_open_error"):
        st.error(ui.escape_markdown(ss["corpus_open_error"]), icon=":material/error:")
    headline(shown)
    if shown.sessions.empty:
        st.info("This batch folder holds no sessions yet.")
        return
    charts(shown)
    table(shown, link)


# -- a logs folder (pruner logs): what was paid, what each strategy would cost, which sessions matter --

REPLAY_PAGE = "app_pages/replay.py"


def _logs_filters(shown) -> pd.DataFrame:
    frame = shown.sessions
    c1, c2, c3 = st.columns([1, 2, 2])
    agents = c1.multiselect("Agent", sorted(frame["agent"].unique()), key="logs_filter_agent")
    projects = c2.multiselect("Project", sorted(frame["project"].unique()), key="logs_filter_project")
    days = sorted(d for d in frame["day"].dropna().unique())
    picked = None
    if days:
        low, high = (date.fromisoformat(d) for d in (days[0], days[-1]))
        chosen = c3.date_input("Days (session start, UTC)", value=(low, high), min_value=low, max_value=high,
                               key="logs_filter_days")
        if isinstance(chosen, (tuple, list)) and len(chosen) == 2:
            picked = (chosen[0], chosen[1])
    return money_logic.filter_rows(frame, agents=agents, projects=projects, days=picked)


def _open_logs_session(shown, key: str, request) -> None:
    try:
        loaded = logic.open_session(shown, key)
    except Exception as exc:
        ss["corpus_open_error"] = ui.error_text(exc)
        return
    params = {"batch": shown.folder, "batch_session": key}
    if request is not None and not pd.isna(request):
        params["request"] = str(int(request))
    session_state.set_current(money_logic.replace_link(loaded, params))
    st.switch_page(REPLAY_PAGE, query_params=params)


def _on_matter_select() -> None:
    rows = (ss.get("logs_matter") or {}).get("selection", {}).get("rows", [])
    shown_rows = ss.get("logs_matter_rows") or []
    if rows and rows[0] < len(shown_rows):
        ss["logs_open"] = shown_rows[rows[0]]


def hindsight(frame) -> None:
    """The best possible in hindsight across the selection, by project and model, and the largest gaps."""
    st.subheader("The best possible in hindsight")
    bound = bound_logic.answer(frame)
    with st.container(key="logs_bound_box"):
        st.markdown(ui.escape_markdown(bound.text()))
        if not bound.sessions:
            return
        left, right = st.columns(2)
        for column, group in zip(st.columns(2), ("project", "model")):
            column.dataframe(bound_logic.by_frame(frame, group), hide_index=True, width="stretch",
                             key=f"logs_bound_{group}")
        st.caption(f"Where {ui.escape_markdown(bound.online)} is furthest above the best possible in hindsight "
                   "(its dollars minus the bound's), largest first:")
        st.dataframe(bound_logic.gaps_frame(frame), hide_index=True, width="stretch", key="logs_bound_gaps")


def rollups(shown, frame, link: dict[str, str] | None) -> None:
    """``pruner logs report``'s groupings over the filtered rows; the grouping is in the URL (``?by=``)."""
    st.subheader("Roll-ups")
    linked = rollup_logic.grouping_from_link(link)
    if linked is not None:
        ss["logs_rollup_by"] = linked
    with st.form("logs_rollup"):
        chosen = st.selectbox("Roll up by", rollup_logic.CHOICES, key="logs_rollup_by",
                              help="As pruner logs report --by: a session counts whole in the group of its start "
                                   "(block: ccusage's 5-hour window); every grouping sums to the bill above.")
        st.form_submit_button("Roll up")
    by = chosen if chosen in rollup_logic.CHOICES else rollup_logic.CHOICES[0]
    named = {} if by == rollup_logic.CHOICES[0] else {rollup_logic.PARAM: by}  # the default leaves links as they were
    session_state.write_link(page={"corpus": shown.folder, **named}, page_keys=links.CORPUS_KEYS, name="corpus")
    rolled = rollup_logic.rollup(frame, by)
    if by in rollup_logic.CHARTED:
        st.plotly_chart(rollup_charts.rollup_figure(rollup_logic.chart_frame(rolled), by), key="logs_rollup_chart")
    st.dataframe(rollup_logic.table(rolled), hide_index=True, width="stretch", key="logs_rollup_table")
    st.caption(f"best: the strategy with the largest measurable saving keeping ≥ {100 * rolled.min_recall:g} % "
               "context recall (the verdict's rule); each strategy's dollars (mean recall) count only the sessions "
               "where it is feasible and applicable.")


def logs_view(shown, link: dict[str, str] | None = None) -> None:
    """The three questions, in order, over the rows the filters keep."""
    requested = ss.pop("logs_open", None)
    if requested:
        _open_logs_session(shown, *requested)
    if ss.get("corpus_open_error"):
        st.error(ui.escape_markdown(ss.pop("corpus_open_error")), icon=":material/error:")
    corpus_live.live_panel()  # looks at the table every few seconds; reruns the page when it is newer
    frame = _logs_filters(shown)
    if frame.empty:
        st.info("No session matches these filters.")
        return
    if shown.prices:
        st.caption("Prices: " + "; ".join(ui.escape_markdown(p) for p in shown.prices) + ".")

    st.header("1. What did I pay, and where did it go?")
    paid = money_logic.where_it_went(frame)
    causes = paid["causes"].set_index("cause")
    unseen = causes.loc["no_visible_cause"] if "no_visible_cause" in causes.index else None
    cols = st.columns(4)
    cols[0].metric("Billed", money(paid["billed"]), help="Every request of every chain (subagents "
                   "included) at list prices, each at its own recorded model.")
    cols[1].metric("Sessions", f"{paid['sessions']:,}")
    cols[2].metric("On cache writes", f"{100 * paid['cache_write_share']:.1f} %",
                   help=money(paid["cache_writes"]))
    missed = float(paid["causes"]["dollars"].sum())
    cols[3].metric("Paid above a hit on misses", money(missed),
                   help=f"{100 * missed / paid['billed']:.1f} % of the bill" if paid["billed"] else None)
    if unseen is not None:
        st.markdown(f"Misses with no visible cause: **{money(float(unseen['dollars']))}**, "
                    f"{100 * float(unseen['share']):.1f} % of the bill ({int(unseen['misses']):,} misses).")
    if paid["unpriced_requests"]:
        st.caption(f"{paid['unpriced_requests']:,} requests are unpriced (their model has no price row): $0 here.")
    stack = st.radio("Stack days by", ("project", "model"), horizontal=True, key="logs_stack")
    st.plotly_chart(money_charts.stacked_days(money_logic.dollars_by_day(frame, stack), f"Dollars by day, by {stack}"),
                    key="logs_days")
    left, right = st.columns(2)
    left.plotly_chart(money_charts.bars(money_logic.dollars_by(frame, "project"), "project", "Dollars by project"),
                      key="logs_projects")
    right.plotly_chart(money_charts.bars(money_logic.dollars_by(frame, "model"), "model", "Dollars by model"),
                       key="logs_models")
    st.plotly_chart(money_charts.causes_figure(paid["causes"]), key="logs_causes")
    rollups(shown, frame, link)

    st.header("2. What would each strategy have cost, and what would it have lost?")
    points = money_logic.strategy_points(shown, frame)
    st.info("\n\n".join(ui.escape_markdown(line) for line in money_logic.verdict_lines(shown, frame)),
            icon=":material/gavel:")
    if not points.empty:
        st.caption(ui.escape_markdown("Each sum counts only the sessions where the strategy is feasible and "
                                      "applicable: " + "; ".join(p for p in points["label"] if p) + "."))
        st.plotly_chart(money_charts.strategy_figure(points), key="logs_strategies")
        if points["recall"].isna().all():
            st.caption("Context recall is not in this table, so the points are placed by strategy.")
    context_views.corpus_lost_section(frame, shown.strategies)
    hindsight(frame)

    st.header("3. Which sessions matter?")
    matter = money_logic.sessions_that_matter(shown, frame)
    ss["logs_matter_rows"] = list(zip(matter["session_key"], matter["costliest_miss_request"]))
    st.caption("Where the cheapest feasible strategy saves most. Select a row to open the session in the Replay "
               "page at its costliest miss.")
    # money as the verdict writes it ("-$0.01", never "$-0.01"; "-" where there is none, never "None"),
    # and the money columns first, where a 1366-pixel screen shows them
    shown_matter = money_logic.matter_table(matter)
    st.dataframe(shown_matter, hide_index=True, width="stretch", key="logs_matter",
                 on_select=_on_matter_select, selection_mode="single-row",
                 column_config={"costliest_miss_request": st.column_config.NumberColumn("at request",
                                                                                        format="localized")})


ui.guarded(render)
