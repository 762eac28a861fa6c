"""The README's "At scale" table: ``pruner bench-batch`` throughput with 1 and 2 local Dask workers."""

from __future__ import annotations

from typing import Any

from . import register_table


def _load(r: dict[str, Any]) -> str:
    return f"{r['load_before']:.1f} → {r['load_after']:.1f}"


@register_table("batch", source="sample_sessions/bench/batch.json", command="pruner bench-batch")
def render(results: dict[str, Any]) -> str:
    serial, runs = results["serial"], results["runs"]
    one = next((r for r in runs if r["workers"] == 1), None)
    out = ["| run | sessions/s | wall time | CPU time | speed-up over 1 worker | 1-minute load during the run |",
           "|---|---|---|---|---|---|",
           f"| serial loop in one process (no Dask, no Parquet) | {serial['sessions'] / serial['wall_s']:,.0f} "
           f"| {serial['wall_s']:.1f} s | {serial['cpu_s']:.1f} s | | |"]
    for r in runs:
        speedup = f"{one['wall_s'] / r['wall_s']:.2f}×" if one else "n/a"
        out.append(f"| {r['workers']} worker{'s' if r['workers'] != 1 else ''} ({r['partitions']} partitions) "
                   f"| {r['sessions_per_s']:,.0f} | {r['wall_s']:.1f} s | {r['worker_cpu_s']:.1f} s workers, "
                   f"{r['client_cpu_s']:.1f} s client | {speedup} | {_load(r)} |")
    corpus = results["meta"].get("corpus", {})
    made = "a reused corpus"
    if "generated" in corpus:
        made = (f"{corpus['tau_copies']} copies of the 200 tau-bench dialogues and "
                f"{corpus['generated']:,} generated workload sessions")
    n = results["corpus_sessions"]
    runs_per_count = results["meta"].get("runs_per_count", 1)
    out += ["", f"Corpus: {n:,} sessions in {results['meta']['files']:,} files ({made}). Wall time runs from "
                "submitting the tasks to the last result; starting the cluster is not in it. "
                + (f"Each worker count ran {runs_per_count} times, alternating; the table shows the fastest run "
                   "of each." if runs_per_count > 1 else "")]
    by_workers = {str(r["workers"]): r for r in runs}
    for w, bound in sorted(results.get("cpu_speedup_bound", {}).items()):
        assert one is not None  # pruner bench-batch computes the bound against the 1-worker run
        r = by_workers[w]
        walls = results.get("wall_s_range", {})
        spread = (f" Over all runs, 1 worker took {walls['1'][0]:.1f}–{walls['1'][1]:.1f} s and {w} workers "
                  f"{walls[w][0]:.1f}–{walls[w][1]:.1f} s." if "1" in walls and w in walls else "")
        out += ["", f"CPU time: the {w}-worker run used {r['worker_cpu_s'] + r['client_cpu_s']:.1f} s of CPU "
                    f"(workers, client and scheduler) where one worker used {one['worker_cpu_s']:.1f} s. Spread "
                    f"over {w} cores that nobody else uses, that allows a speed-up of {bound:.2f}× over one "
                    f"worker. The wall-clock speed-up in the table depends on what else the machine ran.{spread}"]
    if "overhead_cpu_ms_per_session" in results:
        per_session = 1000 * serial["cpu_s"] / n
        overhead = results["overhead_cpu_ms_per_session"]
        out += ["", f"Engine overhead per session, in CPU time (1 worker minus the serial loop): {overhead:.2f} ms, "
                    f"against {per_session:.2f} ms to read and prune a session ({100 * overhead / per_session:.0f}% "
                    "more): Dask's task handling, building the rows and writing Parquet. (In wall time the two "
                    "runs are minutes apart on a shared machine, so their difference is not a measurement.)"]
    hours = results["million_core_hours"]
    out += ["", f"Throughput per core: {results['sessions_per_cpu_s']:,.0f} sessions per CPU-second, counting "
                "the CPU time of the workers, the client and the scheduler. In wall time this machine gave "
                f"{results['sessions_per_s_per_core']:,.0f} sessions/s per worker at the load shown. A million "
                f"such sessions take {hours:.1f} core-hours of CPU: about {60 * hours / 2:,.0f} minutes on "
                f"2 free cores, or {60 * hours / 64:,.1f} minutes on 64."]
    return "\n".join(out)
