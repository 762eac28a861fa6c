"""Throughput of ``pruner batch``: sessions per second with 1 and 2 local workers, and the engine's overhead.

Run: ``pruner bench-batch`` (``--help`` for options). It builds a
corpus of at least 10,000 sessions: the 200 tau-bench dialogues of
``../shared/data/real`` repeated (when that folder is there) plus generated
workload sessions (``pruner.bench.workloads``: plain_chat, rag_assistant and
tool_agent at 10 to 60 turns), then for each worker count starts a
LocalCluster, loads the tokenizer on every worker (counted as start-up), and
runs the batch into a fresh folder. It also times a serial loop of
``loads_all`` + ``prune`` in this process over the same files.

Printed per run: wall time from submitting the tasks to the last result,
sessions per second, CPU seconds the workers used, and the machine's load
average before and after (the machine may be shared, so the CPU figures are
the steadier ones). The per-session overhead of the engine is the 1-worker
time minus the serial loop's, per session: scheduling, moving the task, and
writing Parquet.
"""

from __future__ import annotations

import hashlib
import logging
import os
import resource
import tempfile
import time
from pathlib import Path

from ..bench import environment
from ..engine.prune import collector_paused, prune
from ..files import write_atomic
from ..formats import decode_bytes, loads_all, save_session
from ..tokens import get_counter
from .inputs import expand_inputs
from .run import run_batch

TAU = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real" / "tau-bench" / "gpt-4o-airline.json"
WORKLOADS = ("plain_chat", "rag_assistant", "tool_agent")


def build_corpus(folder: Path, *, sessions: int, tau_copies: int, tau: Path = TAU) -> dict:
    """Write the corpus into ``folder``: ``tau_copies`` copies of the tau-bench file, the rest generated."""
    from ..bench.workloads import generate

    folder.mkdir(parents=True, exist_ok=True)
    copies = tau_copies if tau.exists() else 0
    tau_bytes = tau.read_bytes() if copies else b""
    for n in range(copies):
        write_atomic(folder / f"tau-bench-{n:03d}.json", tau_bytes, follow_symlinks=False)  # the corpus's own file
    per_copy = 200 if copies else 0
    generated = max(0, sessions - copies * per_copy)
    for n in range(generated):
        workload = WORKLOADS[n % len(WORKLOADS)]
        save_session(generate(workload, turns=10 + (n * 7) % 51, seed=n),
                     folder / f"{workload}-{n:05d}.jsonl")
    return {"tau_copies": copies, "generated": generated}


def serial_loop(files: list[str]) -> dict:
    """The same work without Dask or Parquet: read, parse and prune each session in this process."""
    get_counter("o200k_base")
    wall, cpu = time.perf_counter(), time.process_time()
    n = 0
    with collector_paused():  # as the workers run a partition
        for path in files:
            with open(path, "rb") as fh:
                data = fh.read()
            hashlib.sha256(data).hexdigest()
            for session in loads_all(decode_bytes(data, file=path), file=path):
                prune(session)
                n += 1
    return {"sessions": n, "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _warm(encoding: str) -> str:
    return get_counter(encoding).name


def timed_batch(corpus: Path, out: Path, workers: int) -> dict:
    from distributed import Client, LocalCluster

    load_before = os.getloadavg()
    started = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    try:
        with Client(cluster) as client:
            client.wait_for_workers(workers)
            client.run(_warm, "o200k_base")
            startup_s = time.perf_counter() - started
            cpu_before = client.run(_cpu_seconds)
            here_before = _cpu_seconds()
            summary = run_batch([str(corpus)], out, client=client)
            worker_cpu = sum(client.run(_cpu_seconds).values()) - sum(cpu_before.values())
            client_cpu = _cpu_seconds() - here_before
    finally:
        cluster.close()
    return {"workers": workers, "sessions": summary.sessions, "failed": summary.failed,
            "partitions": summary.partitions, "startup_s": startup_s, "wall_s": summary.compute_s,
            "sessions_per_s": summary.sessions / summary.compute_s, "worker_cpu_s": worker_cpu,
            "client_cpu_s": client_cpu, "load_before": load_before[0], "load_after": os.getloadavg()[0]}


def run_bench(*, sessions: int = 10_000, tau_copies: int = 40, workers: tuple[int, ...] = (1, 2), runs: int = 1,
              corpus: Path | None = None, command: str = "pruner bench-batch", say=print) -> dict:
    """Build (or reuse) the corpus, time the serial loop and each worker count; the figures as a dict."""
    env = environment.start(command)
    with tempfile.TemporaryDirectory(prefix="pruner-batch-bench-") as tmp:
        folder = corpus or Path(tmp) / "corpus"
        if folder.is_dir() and any(folder.iterdir()):
            made = {"reused": True}
        else:
            made = build_corpus(folder, sessions=sessions, tau_copies=tau_copies)
        files = [f.path for f in expand_inputs([str(folder)]).files]
        serial = serial_loop(files)
        say(f"corpus: {serial['sessions']:,} sessions in {len(files):,} files ({made})")
        say(f"serial loop in one process (no Dask, no Parquet): {serial['wall_s']:.1f} s, "
            f"{serial['sessions'] / serial['wall_s']:,.0f} sessions/s, CPU {serial['cpu_s']:.1f} s")
        best: dict[int, dict] = {}
        every: list[dict] = []
        for attempt in range(runs):
            for n in workers:  # alternate, so a change in the machine's load hits every count alike
                r = timed_batch(folder, Path(tmp) / f"out-{n}-{attempt}", n)
                say(f"{n} worker(s): {r['wall_s']:.1f} s, {r['sessions_per_s']:,.0f} sessions/s "
                    f"({r['partitions']} partitions; start-up {r['startup_s']:.1f} s; worker CPU "
                    f"{r['worker_cpu_s']:.1f} s, client+scheduler CPU {r['client_cpu_s']:.1f} s; "
                    f"load {r['load_before']:.2f} -> {r['load_after']:.2f})")
                every.append(r)
                if n not in best or r["wall_s"] < best[n]["wall_s"]:
                    best[n] = r
    results = {"meta": {"environment": environment.finish(env), "corpus": made, "files": len(files),
                        "runs_per_count": runs},
               "corpus_sessions": serial["sessions"], "serial": serial, "runs": [best[n] for n in sorted(best)],
               "every_run": every}
    results.update(derived(results))
    for line in conclusions(results):
        say(line)
    return results


def derived(results: dict) -> dict:
    """Overhead per session, speed-up over one worker, throughput per core, a million sessions."""
    serial, runs = results["serial"], {r["workers"]: r for r in results["runs"]}
    out: dict = {}
    n = serial["sessions"]
    if 1 in runs:
        one = runs[1]
        out["overhead_ms_per_session"] = 1000 * (one["wall_s"] - serial["wall_s"]) / n
        out["overhead_cpu_ms_per_session"] = 1000 * (one["worker_cpu_s"] - serial["cpu_s"]) / n
        out["speedup"] = {str(w): one["wall_s"] / r["wall_s"] for w, r in runs.items()}
        # What the CPU time allows on w cores nobody else uses: one worker's CPU time against
        # the whole CPU time of the w-worker run (workers, client and scheduler) spread over w cores.
        # Unlike wall time, CPU time hardly depends on the machine's load.
        out["cpu_speedup_bound"] = {str(w): w * one["worker_cpu_s"] / (r["worker_cpu_s"] + r["client_cpu_s"])
                                    for w, r in runs.items() if w > 1}
    every = results.get("every_run") or []
    for w in sorted({r["workers"] for r in every}):
        walls = [r["wall_s"] for r in every if r["workers"] == w]
        out.setdefault("wall_s_range", {})[str(w)] = [min(walls), max(walls)]
    fastest = max(runs.values(), key=lambda r: r["sessions_per_s"])
    # Wall-clock rate per worker: what this machine gave, load included.
    out["sessions_per_s_per_core"] = fastest["sessions_per_s"] / fastest["workers"]
    # CPU time (workers, client and scheduler) per session: what a core that is not shared gives,
    # and the basis of the estimate for a million sessions.
    out["sessions_per_cpu_s"] = fastest["sessions"] / (fastest["worker_cpu_s"] + fastest["client_cpu_s"])
    out["million_core_hours"] = 1e6 / out["sessions_per_cpu_s"] / 3600
    return out


def conclusions(results: dict) -> list[str]:
    serial = results["serial"]
    lines = []
    if "overhead_ms_per_session" in results:
        lines.append(f"engine overhead per session (1 worker minus the serial loop): "
                     f"{results['overhead_ms_per_session']:.2f} ms wall, {results['overhead_cpu_ms_per_session']:.2f} "
                     f"ms CPU (the serial loop takes {1000 * serial['cpu_s'] / serial['sessions']:.2f} ms CPU)")
        for w, ratio in sorted(results["speedup"].items()):
            if w != "1":
                lines.append(f"{w} workers vs 1: {ratio:.2f}x in wall time (fastest runs); the CPU time allows "
                             f"{results['cpu_speedup_bound'][w]:.2f}x on {w} cores nobody else uses")
    lines.append(f"throughput per core: {results['sessions_per_cpu_s']:,.0f} sessions per CPU-second (workers, "
                 f"client and scheduler); {results['sessions_per_s_per_core']:,.0f} sessions/s per worker in wall "
                 f"time on this machine at its load; a million sessions: {results['million_core_hours']:.1f} "
                 "core-hours of CPU")
    return lines
