"""Benchmarks: how much the pruner saves on generated workloads, how fast, beside the reference's figures."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from pruner import PruneConfig
from pruner.bench import workloads


from dashboard import bench_recall, charts, replay_charts, tables, ui
from dashboard.controls import control
from dashboard.logic import benchmarks as logic
from dashboard.theme import AFTER_COLOUR, BEFORE_COLOUR, ORACLE_COLOUR, PRUNER_COLOUR, TRUNCATION_COLOUR

ss = st.session_state


def run_form() -> None:
    """Choose workloads, sizes, seeds and pruning settings, then run; the run is drawn over the committed one."""
    names, sizes = list(workloads.WORKLOADS), list(workloads.SIZES)
    default = PruneConfig()
    with st.expander("Run the benchmark", expanded=False):
        with st.form("bench_form"):
            c1, c2 = st.columns(2)
            chosen = c1.multiselect("Workloads", names, default=names, key="bench_workloads")
            chosen_sizes = c2.multiselect("Sizes (turns)", sizes, default=sizes[:3], key="bench_sizes",
                                          help="The large sizes take a while: each is generated and pruned "
                                               "several times for the timings.")
            c1, c2 = st.columns(2)
            seeds = c1.number_input("Seeds", min_value=1, max_value=5, value=1, key="bench_seeds")
            runs = c2.number_input("Timing runs per configuration", min_value=1, max_value=20, value=3,
                                   key="bench_timing_runs")
            st.caption("Pruning settings for this run (the committed run uses the library's defaults)")
            c1, c2, c3, c4 = st.columns(4)
            expire = c1.checkbox("Pass 1: expire", value=default.expire, key="bench_expire")
            dedupe = c2.checkbox("Pass 2: deduplicate", value=default.deduplicate, key="bench_dedupe")
            restore = c3.checkbox("Pass 3: restore", value=default.restore, key="bench_restore")
            threshold = c4.slider(**control(PruneConfig, "near_duplicate_threshold"), min_value=0.5, max_value=1.0,
                                  value=float(default.near_duplicate_threshold), step=0.05, key="bench_threshold")
            submitted = st.form_submit_button("Run benchmark", type="primary")
        if submitted:
            if not chosen or not chosen_sizes:
                st.error("Choose at least one workload and one size.")
                return
            bar = st.progress(0.0, text="Starting…")

            def progress(i: int, n: int, what: str) -> None:
                bar.progress((i - 1) / n, text=f"{i}/{n}: {what}")
            config = replace(default, expire=expire, deduplicate=dedupe, restore=restore,
                             near_duplicate_threshold=float(threshold))
            logic.run(workloads=chosen, sizes=[int(s) for s in chosen_sizes], seeds=int(seeds),
                      timing_runs=int(runs), config=config, progress=progress)
            bar.progress(1.0, text="Done: your run is drawn dotted over the committed results")


def headline(results) -> None:
    summary = results.summary
    shown = tables.bench_headline(summary)
    helps = {
        "tagged facts preserved": "Configurations in which every fact tagged DEFINE:/REF: that a later message "
                                  "needs is still in the pruned context.",
        "idempotent": "Configurations in which pruning the pruned result again changes nothing.",
        "untagged facts lost": "Facts a later message refers to only in paraphrase (\"which format did I "
                               "mention?\"), with no tag: no deterministic pass can see such a reference, so "
                               "they are counted apart. This many of them were pruned away.",
        "configurations": "Workload × size × seed combinations run.",
    }
    cols = st.columns(4)
    for col, (label, value) in zip(cols, shown.items()):
        col.metric(label, value, help=helps.get(label))
    if results.passed:
        st.success("Every configuration keeps every tagged fact and is idempotent.", icon=":material/check:")
    for failure in summary.get("failures") or []:
        st.error(ui.escape_markdown(str(failure)))


def environment_note(results, what: str) -> str:
    env = (results.meta or {}).get("environment") or {}
    machine = env.get("machine") or {}
    load = env.get("load_before")
    return (f"{what}: {env.get('command', '?')} on {env.get('date', '?')}, {machine.get('cpus', '?')} cores, "
            f"load {', '.join(f'{x:.1f}' for x in load) if load else '?'} · counter "
            f"`{(results.meta or {}).get('counter', '?')}`")


def reference_section(committed) -> None:
    st.subheader("Beside the reference design")
    with st.container(key="bench_reference_box"):
        # a wrapping HTML table, not a data grid: its cells are sentences, and a grid cuts them at 1366 px
        st.table(logic.reference_rows(committed), hide_index=True)
    st.caption(f"Reference figures: {logic.REFERENCE.source}. Its {logic.REFERENCE.measured_here_ms:.0f} ms is "
               f"{logic.REFERENCE.measured_here_note}. Its facts count comes from labels its generator derives "
               "from its own rules, so a pruner that removes nothing also scores 15/15; ours come from the "
               "generator's world model and can fail.")


def charts_section(committed, mine) -> None:
    by_size = logic.by_size_of({"committed": committed, "your run": mine})
    committed_by_size = tables.bench_by_size(committed.rows)
    left, right = st.columns(2)
    left.plotly_chart(charts.reduction_figure(by_size, logic.REFERENCE.reduction), key="bench_reduction")
    right.plotly_chart(charts.grouped_bar_figure(
        committed_by_size, x="config", ys=["tokens_before", "tokens_after"], names=["before", "after"],
        colours=[BEFORE_COLOUR, AFTER_COLOUR], title="Tokens before and after (committed run)",
        y_title="tokens (log scale)", log_y=True), key="bench_tokens")
    left, right = st.columns(2)
    left.plotly_chart(charts.prune_time_figure(by_size), key="bench_time")
    baselines = tables.baselines_frame(committed_by_size)
    right.plotly_chart(charts.grouped_bar_figure(
        tables.baselines_wide(baselines, "reduction_pct"),
        x="config", ys=["pruner", "oracle", "truncation"], names=["pruner", "oracle", "truncation"],
        colours=[PRUNER_COLOUR, ORACLE_COLOUR, TRUNCATION_COLOUR],
        title="Reduction beside the oracle and truncation", y_title="reduction %"),
        key="bench_baselines")
    st.plotly_chart(charts.facts_lost_figure(tables.baselines_wide(baselines, "tagged_facts_missing")),
                    key="bench_facts")
    st.caption("The oracle keeps exactly the messages the generator's world model says a later message needs.")


def speed_section() -> None:
    st.subheader("Scaling and per-turn re-pruning")
    try:
        report = logic.committed_scaling()
    except Exception as exc:
        st.error(ui.escape_markdown(ui.error_text(exc)), icon=":material/error:")
        return
    if report is None:
        st.info(f"No committed scaling results yet ({logic.SCALING_RESULTS.relative_to(logic.SAMPLES_DIR.parent)}). "
                "`pruner bench --scaling --json sample_sessions/bench/scaling.json` writes them.",
                icon=":material/info:")
        return
    frame = logic.scaling_frame(report)
    left, right = st.columns(2)
    left.plotly_chart(charts.scaling_figure(frame), key="bench_scaling")
    per_turn = report["per_turn"]
    right.plotly_chart(charts.per_turn_figure(logic.per_turn_bars(report), int(per_turn.get("turns", 0))),
                       key="bench_per_turn")
    env = report.get("environment") or report.get("meta", {}).get("environment") or {}
    st.caption(f"From {logic.SCALING_RESULTS.name}" + (f", measured {env.get('date')}" if env.get("date") else "")
               + f". The reference's total is {logic.REFERENCE.per_turn_note}.")


def cost_section(results) -> None:
    """Dollars per strategy across workloads and sizes: the replay of the same sessions (pruner.bench.cost)."""
    frame = replay_charts.bench_cost_frame(results.rows)
    if frame.empty:
        st.info("These results have no cost columns; run the benchmark again to price every strategy.")
        return
    meta = (results.meta or {}).get("cost", {})
    st.subheader("Cost per strategy (the replay of the same sessions)")
    note = meta.get("note", "")
    st.caption(ui.escape_markdown(f"{meta.get('model', '?')} list prices, {meta.get('prices', '?')}; "
                                  f"{meta.get('provider', '?')} prompt cache. {note[:1].upper()}{note[1:]}"))
    names = list(dict.fromkeys(frame["workload"]))
    for col, workload in zip(st.columns(len(names)), names):
        col.plotly_chart(replay_charts.bench_cost_figure(frame, workload, money_label=meta.get("model", "")),
                         key=f"bench_cost_{workload}", config={"displaylogo": False})
    summary = results.summary.get("cost") or {}
    findings = tables.cost_findings_frame(summary)
    if not findings.empty:
        within = summary.get("cache_aware_within_1pct_of_full") or {}
        st.markdown("**What the replay found**" + (f": cache_aware_prune is within 1 % of full or cheaper in "
                                                   f"{within['count']} of {within['of']} sessions."
                                                   if within.get("of") else ""))
        with st.container(key="bench_findings_box"):
            # a wrapping HTML table: in a data grid its strategy names were cut at 1366 px
            st.table(tables.cost_findings_table(findings))
        st.caption("—: no figure. Full that could not run (a request over the window) has dollars only up to "
                   "that request, so no saving is measured against it; the strategies under \"could not run\" "
                   "are never the cheapest.")


def regret_section(results) -> None:
    """Each strategy's dollars over the best possible in hindsight, per workload and size (pruner.bench.regret)."""
    if not any("bound" in r for r in results.rows):
        st.caption("These results have no hindsight bound; run the benchmark again to add it.")
        return
    st.subheader("Regret: each strategy's dollars over the best possible in hindsight")
    limit = (results.meta or {}).get("bound_turns")
    st.caption("The bound: the cheapest schedule of prunes and compactions knowing the whole session, at the "
               "same prices and recall bar (docs/explanation/hindsight-bound.md); ~: approximate (a beam "
               "search's schedule, the optimum may be lower). n/a: the strategy could not run (a request over "
               "the window)." + (f" Computed up to {limit:,} turns; larger sizes are \"not computed\" because the "
                                 "bound's search is slow on long sessions today." if limit is not None else ""))
    frame = logic.regret_frame(results.rows)
    with st.container(key="bench_regret_box"):
        # a wrapping HTML table, one column per configuration: seven strategy columns did not fit 1366 px
        st.table(logic.regret_table(frame))
    skipped = logic.not_computed(frame)
    if skipped:
        st.caption("Not computed: " + ", ".join(skipped) + ".")


def recall_section(results) -> None:
    """What each strategy's contexts kept of what the replies used, and how far that agrees with the
    generated ground truth (pruner.bench.recall_agreement)."""
    frame = bench_recall.recall_frame(results.rows)
    if frame.empty:
        return
    st.subheader("What each strategy loses: context recall")
    st.caption("Recall: the share of the terms each reply used (paths, identifiers, numbers, quoted literals "
               "it wrote that stood in the context it was given) that the strategy's context still held. "
               "Hollow points: the strategy could not have run (a request over the window). Definition and "
               "limits: docs/context-recall.md.")
    names = list(dict.fromkeys(frame["workload"]))
    for col, workload in zip(st.columns(len(names)), names):
        col.plotly_chart(bench_recall.recall_figure(frame, workload), key=f"bench_recall_{workload}",
                         config={"displaylogo": False})
    agreement = bench_recall.agreement_frame((results.summary.get("cost") or {}).get("recall") or {})
    if not agreement.empty:
        st.markdown("**Recall against the ground truth the generator knows** (ties: recall within 0.1 "
                    "percentage point)")
        st.dataframe(agreement, hide_index=True, width="stretch", key="bench_recall_agreement", column_config={
            "check": st.column_config.TextColumn("check", width=620),
            "agrees": st.column_config.NumberColumn("agrees", format="localized", width=90),
            "of": st.column_config.NumberColumn("of", format="localized", width=90)})


def render() -> None:
    st.title("Benchmarks")
    committed = logic.committed_results()
    run_form()
    mine = logic.last_run()
    if committed is None and mine is None:
        st.info("No committed results (sample_sessions/bench/results.json): run the benchmark above.")
        return
    if mine is not None:
        ran = tables.bench_headline(mine.summary)
        st.caption(environment_note(mine, "Your run (dotted)") + " · " + " · ".join(f"{k} {v}" for k, v in ran.items()))
        st.button("Clear your run", key="bench_back", on_click=logic.forget_run)
    shown = committed or mine
    if committed is not None:
        st.caption(environment_note(committed, "Committed run sample_sessions/bench/results.json"))
    headline(shown)
    if committed is not None:
        reference_section(committed)
        charts_section(committed, mine)
    speed_section()
    cost_section(mine or committed)
    regret_section(mine or committed)
    recall_section(mine or committed)
    st.subheader("Summary (computed from the rows)")
    st.dataframe(tables.bench_summary_frame(shown.summary), hide_index=True, width="stretch", key="bench_summary")
    st.subheader("Every configuration")
    for name, results in (("your run", mine), ("committed", committed)):
        if results is not None:
            st.caption(name)
            st.dataframe(tables.bench_rows_frame(results.rows), hide_index=True, width="stretch",
                         key=f"bench_rows_{name.replace(' ', '_')}")
    c1, c2 = st.columns(2)
    c1.download_button("Results (CSV)", data=shown.to_csv, file_name="bench-results.csv", mime="text/csv",
                       on_click="ignore", key="dl_bench_csv")
    c2.download_button("Results (JSON)", data=shown.to_json, file_name="bench-results.json",
                       mime="application/json", on_click="ignore", key="dl_bench_json")


ui.guarded(render)
