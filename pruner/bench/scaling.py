"""``pruner bench --scaling``: does prune time stay linear, and what does pruning every turn cost?

Two measurements:

* **Sizes**: the passes (``stats.elapsed_ms``) on tool_agent sessions of 2,000 to 100,000
  turns, median after a warm-up, and the time per 1,000 messages, which stays flat when
  the cost is linear.
* **Every turn, as an agent loop runs it**: for each turn, append its messages to one
  ``IncrementalPruner`` and take ``context()``, the kept messages and placeholders to send;
  the total wall-clock and CPU time over the whole conversation. Against it: a full
  ``prune()`` of the conversation so far, as a new session, after every turn. That one is
  timed on evenly spaced sample turns and summed over every turn by the trapezoid rule
  (the report says how many turns were sampled), because timing it on every turn takes
  minutes. At each sample turn the incremental context is also compared with the full
  prune's, and at the end every decision. Run on the 2,000-turn tool_agent session, and on
  the reference design's 2,000-turn tool-agent corpus when it is present, beside the
  reference's own full re-prune every turn (``REFERENCE_PER_TURN_SECONDS``).

>>> report = run_scaling(sizes=(20,), per_turn_turns=10, per_turn_samples=3, runs=1, corpus=None)
>>> report["sizes"][0]["turns"], report["per_turn"]["turns"]
(20, 10)
"""

from __future__ import annotations

import gc
import itertools
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from ..engine.incremental import IncrementalPruner
from ..engine.prune import PruneConfig, prune
from .speed import CORPORA, WORKLOAD
from .workloads import generate

SCALING_SIZES = (2_000, 10_000, 50_000, 100_000)
PER_TURN_TURNS = 2_000
#: The reference pruner re-pruning its 2,000-turn tool-agent corpus in full after every turn:
#: about 10 s, measured once on this machine class (issue 13); not measured by this command.
REFERENCE_PER_TURN_SECONDS = 10.0
REFERENCE_PER_TURN_SOURCE = ("the reference pruner, a full re-prune after every turn of its 2,000-turn tool-agent "
                             "corpus, measured once on this machine class (issue 13); not measured in this run")
REFERENCE_CORPUS = CORPORA / "tool_agent-2000.jsonl"
CACHE_LIMIT = 800_000  # messages; below the 1,000,000-entry token and feature caches


def turn_groups(session) -> list[int]:
    """End index (exclusive) of each turn's messages, in order (a turn: consecutive messages with one
    ``turn`` number; what comes before the first user message joins the first turn)."""
    ends, i = [], 0
    for turn, group in itertools.groupby(session.messages, key=lambda m: m.turn):
        i += sum(1 for _ in group)
        if turn == 0 and i < len(session.messages):
            continue
        ends.append(i)
    return ends


def measure_size(turns: int, *, seed: int = 0, runs: int = 3, config: PruneConfig | None = None) -> dict[str, Any]:
    config = config or PruneConfig()
    t0 = time.perf_counter()
    session = generate(WORKLOAD, turns=turns, seed=seed)
    generate_s = time.perf_counter() - t0
    gc.collect()
    gc.freeze()  # keep the collector from rescanning the session during the timings
    n = len(session.messages)
    # The token and feature caches hold 1,000,000 texts; past that a warm-up cannot warm
    # anything, so a second run would only double the wait: the first run is the figure.
    warm = n <= CACHE_LIMIT
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        first = prune(session, config)  # warm-up: features, token counts and the index, once
        first_s, first_cpu = time.perf_counter() - t0, time.process_time() - c0
        times, cpus = [], []
        for _ in range(runs if warm else 0):
            c = time.process_time()
            times.append(prune(session, config).stats.elapsed_ms)
            cpus.append(1000 * (time.process_time() - c))
        if not times:
            times, cpus = [first.stats.elapsed_ms], [1000 * first_cpu]
    finally:
        gc.unfreeze()
    median = statistics.median(times)
    return {"turns": turns, "messages": n, "tokens": first.stats.tokens_before, "warm": warm,
            "prune_ms": round(median, 1), "prune_cpu_ms": round(statistics.median(cpus), 1), "runs": len(times),
            "ms_per_1000_messages": round(1000 * median / n, 2),
            "reduction_pct": round(100 * first.stats.reduction, 2),
            "generate_s": round(generate_s, 2), "first_prune_s": round(first_s, 2)}


def measure_per_turn(session, *, samples: int = 40, config: PruneConfig | None = None) -> dict[str, Any]:
    """Append + ``context()`` every turn, against a full ``prune()`` every turn (sampled)."""
    config = config or PruneConfig()
    ends = turn_groups(session)
    msgs = session.messages
    prune(session, config)  # fills the token and feature caches, as a long-running agent would have
    k = max(2, min(samples, len(ends)))
    picks = sorted({round(i * (len(ends) - 1) / (k - 1)) for i in range(k)})
    gc.collect()
    gc.freeze()
    try:
        p = IncrementalPruner(config, name=session.name, source_format=session.source_format)
        contexts = {}
        wall = cpu = 0.0
        start = 0
        for t, end in enumerate(ends):
            w, c = time.perf_counter(), time.process_time()
            p.append(msgs[start:end])
            ctx = p.context()
            cpu += time.process_time() - c
            wall += time.perf_counter() - w
            if t in picks:
                contexts[t] = ctx
            start = end
        same_decisions = p.result().decisions == prune(session, config).decisions
        full_wall, full_cpu, same_context = [], [], True
        for t in picks:
            prefix = session.with_messages(msgs[:ends[t]])  # a new session, as a loop would build it
            w, c = time.perf_counter(), time.process_time()
            r = prune(prefix, config)
            full_cpu.append(time.process_time() - c)
            full_wall.append(time.perf_counter() - w)
            ctx = contexts[t]
            same_context = same_context and (ctx.messages == r.kept.messages and ctx.tokens == r.stats.tokens_after
                                             and dict(ctx.placeholders) == dict(r.placeholders))
    finally:
        gc.unfreeze()

    def integrate(values):  # trapezoid over turn indices: the sum over every turn, estimated
        if len(picks) == 1:
            return values[0] * len(ends)
        total = 0.0
        for (a, va), (b, vb) in zip(zip(picks, values), zip(picks[1:], values[1:])):
            total += (va + vb) / 2 * (b - a)
        return total + values[0]

    inc = {"total_s": round(wall, 3), "cpu_s": round(cpu, 3), "ms_per_turn": round(1000 * wall / len(ends), 3),
           "full_recomputes": p.full_recomputes, "equals_full_prune": same_decisions,
           "context_equals_full_prune": same_context, "timed": "append() and context() after every turn"}
    full = {"total_s": round(integrate(full_wall), 2), "cpu_s": round(integrate(full_cpu), 2),
            "sampled_turns": len(picks), "estimated": len(picks) < len(ends)}
    out = {"session": session.name or WORKLOAD, "turns": len(ends), "messages": len(msgs),
           "incremental": inc, "full_reprune": full}
    if inc["total_s"]:
        out["speedup_vs_full"] = round(full["total_s"] / inc["total_s"], 1)
    return out


def run_scaling(*, sizes=SCALING_SIZES, per_turn_turns: int = PER_TURN_TURNS, per_turn_samples: int = 40,
                runs: int = 3, progress: Callable[[int, int, str], None] | None = None,
                on_row: Callable[[dict], None] | None = None, corpus: Path | None = REFERENCE_CORPUS) -> dict[str, Any]:
    """Measure every size, then the per-turn cost; ``on_row`` sees each size's figures as soon as
    they exist (a long run shows its results as it goes)."""
    has_corpus = corpus is not None and corpus.exists()
    steps = len(sizes) + 1 + has_corpus
    rows = []
    for i, turns in enumerate(sizes, start=1):
        if progress:
            progress(i, steps, f"prune time at {turns:,} turns of {WORKLOAD}")
        rows.append(measure_size(turns, runs=runs))
        if on_row:
            on_row(rows[-1])
    if progress:
        progress(len(sizes) + 1, steps, f"append + context after every turn of {per_turn_turns:,} turns")
    per_turn = measure_per_turn(generate(WORKLOAD, turns=per_turn_turns, seed=0), samples=per_turn_samples)
    flat = [r["ms_per_1000_messages"] for r in rows]
    report: dict[str, Any] = {
        "schema": "pruner.bench.scaling/1", "workload": WORKLOAD, "sizes": rows,
        "ms_per_1000_messages_spread": round(max(flat) / min(flat), 2) if flat and min(flat) else None,
        "per_turn": per_turn, "reference_per_turn_s": REFERENCE_PER_TURN_SECONDS,
        "reference_per_turn_source": REFERENCE_PER_TURN_SOURCE}
    if corpus is not None and has_corpus:
        from ..formats import load_session

        if progress:
            progress(steps, steps, f"append + context after every turn of {corpus.name}")
        on_corpus = measure_per_turn(load_session(corpus), samples=per_turn_samples)
        on_corpus["speedup_vs_reference"] = round(REFERENCE_PER_TURN_SECONDS / on_corpus["incremental"]["total_s"], 1)
        report["per_turn_reference_corpus"] = on_corpus
    return report
