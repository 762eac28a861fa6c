"""Benchmarks: how much the pruner saves on generated workloads, how fast, and what it never loses."""

from __future__ import annotations

import streamlit as st

from pruner.bench import run as bench, workloads

from dashboard import charts, tables, ui
from dashboard.logic import benchmarks as logic
from dashboard.theme import BEFORE_COLOUR, STATUS_COLOURS

ss = st.session_state
METHOD_COLOURS = {"pruner": STATUS_COLOURS["kept"], "oracle": STATUS_COLOURS["restored"],
                  "truncation": STATUS_COLOURS["expired"]}


def run_form() -> None:
    """Choose workloads, sizes and seeds, then run with a progress bar; the new results replace the view."""
    names = list(workloads.WORKLOADS)
    sizes = list(workloads.SIZES)
    with st.expander("Run the benchmark", expanded=False):
        with st.form("bench_form"):
            chosen = st.multiselect("Workloads", names, default=names, key="bench_workloads")
            chosen_sizes = st.multiselect("Sizes (turns)", sizes, default=sizes[:3], key="bench_sizes",
                                          help="The large sizes take a while: each is generated and pruned "
                                               "several times for the timings.")
            seeds = st.number_input("Seeds", min_value=1, max_value=5, value=1, key="bench_seeds")
            runs = st.number_input("Timing runs per configuration", min_value=1, max_value=20, value=3,
                                   key="bench_timing_runs")
            submitted = st.form_submit_button("Run benchmark", type="primary")
        if submitted:
            if not chosen or not chosen_sizes:
                st.error("Choose at least one workload and one size.")
                return
            bar = st.progress(0.0, text="Starting…")

            def progress(i: int, n: int, what: str) -> None:
                bar.progress((i - 1) / n, text=f"{i}/{n}: {what}")
            ss["bench_run"] = bench.run_benchmark(workloads=chosen, sizes=sorted(int(s) for s in chosen_sizes),
                                                  seeds=int(seeds), timing_runs=int(runs), progress=progress)
            bar.progress(1.0, text="Done")


def headline(results) -> None:
    summary = results.summary
    shown = tables.bench_headline(summary)
    cols = st.columns(4)
    for col, (label, value) in zip(cols, shown.items()):
        col.metric(label, value)
    if results.passed:
        st.success("Every configuration keeps every tagged fact and is idempotent.", icon=":material/check:")
    for failure in summary.get("failures") or []:
        st.error(ui.escape_markdown(str(failure)))


def charts_section(results) -> None:
    by_size = tables.bench_by_size(results.rows)
    left, right = st.columns(2)
    left.plotly_chart(charts.line_by_group_figure(
        by_size, x="turns", y="reduction_pct", group="workload", title="Token reduction by workload and size",
        x_title="turns", y_title="reduction %", log_x=True), key="bench_reduction")
    right.plotly_chart(charts.grouped_bar_figure(
        by_size, x="config", ys=["tokens_before", "tokens_after"], names=["before", "after"],
        colours=[BEFORE_COLOUR, STATUS_COLOURS["kept"]], title="Tokens before and after pruning",
        y_title="tokens (log scale)", log_y=True), key="bench_tokens")
    left, right = st.columns(2)
    left.plotly_chart(charts.line_by_group_figure(
        by_size, x="messages_before", y="prune_ms", group="workload", title="Prune time against size (log scale)",
        x_title="messages", y_title="ms (median of the timing runs)", log_x=True, log_y=True), key="bench_time")
    baselines = tables.baselines_frame(by_size)
    right.plotly_chart(charts.grouped_bar_figure(
        tables.baselines_wide(baselines, "reduction_pct"),
        x="config", ys=["pruner", "oracle", "truncation"], names=["pruner", "oracle", "truncation"],
        colours=[METHOD_COLOURS[m] for m in ("pruner", "oracle", "truncation")],
        title="Reduction: pruner beside the baselines", y_title="reduction %"), key="bench_baselines")
    st.plotly_chart(charts.grouped_bar_figure(
        tables.baselines_wide(baselines, "tagged_facts_missing"),
        x="config", ys=["pruner", "truncation"], names=["pruner", "truncation (same token budget)"],
        colours=[METHOD_COLOURS["pruner"], METHOD_COLOURS["truncation"]],
        title="Tagged facts lost at the same size: pruner vs truncation", y_title="facts missing"),
        key="bench_facts")
    st.caption("Truncation keeps the system prompt and the newest messages that fit the pruner's token count; "
               "the oracle keeps exactly the messages the generator's world model needs.")


def render() -> None:
    st.title("Benchmarks")
    run_form()
    results, source = ss.get("bench_run"), "the run you just made"
    if results is None:
        results = logic.committed_results()
        if results is None:
            st.info("No committed results (sample_sessions/bench/results.json): run the benchmark above.")
            return
        source = "the committed results in sample_sessions/bench/results.json"
    elif st.button("Show the committed results again", key="bench_back"):
        del ss["bench_run"]
        st.rerun()
    meta = results.meta or {}
    st.caption(f"Showing {source} · counter `{meta.get('counter', '?')}` · "
               f"sizes {meta.get('sizes', '?')} · seeds {meta.get('seeds', '?')}")
    headline(results)
    charts_section(results)
    st.subheader("Summary (computed from the rows)")
    st.dataframe(tables.bench_summary_frame(results.summary), hide_index=True, width="stretch", key="bench_summary")
    st.subheader("Every configuration")
    st.dataframe(tables.bench_rows_frame(results.rows), hide_index=True, width="stretch", key="bench_rows")
    c1, c2 = st.columns(2)
    c1.download_button("Results (CSV)", data=results.to_csv, file_name="bench-results.csv", mime="text/csv",
                       on_click="ignore", key="dl_bench_csv")
    c2.download_button("Results (JSON)", data=results.to_json, file_name="bench-results.json",
                       mime="application/json", on_click="ignore", key="dl_bench_json")


ui.guarded(render)
