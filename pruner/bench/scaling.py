"""``pruner bench --scaling``: does prune time stay linear, and what does re-pruning every turn cost?

Two measurements on the tool-agent workload:

* prune time (the passes only, ``stats.elapsed_ms``, median after a warm-up) at each size,
  and the time per 1,000 messages, which must stay flat if the cost is linear;
* the total cost of re-pruning after every turn of one conversation, the way an
  agent loop runs it: with ``IncrementalPruner`` (when ``pruner.engine.incremental``
  exists), and with a full ``prune()`` of the whole history each turn. The full
  re-prune is timed on evenly spaced sample turns and the total is integrated
  from them (the report says how many were sampled), so the run stays short.

>>> report = run_scaling(sizes=(20,), per_turn_turns=10, per_turn_samples=3, runs=1)
>>> report["sizes"][0]["turns"], report["per_turn"]["turns"]
(20, 10)
"""

from __future__ import annotations

import gc
import importlib
import statistics
import time
from typing import Any, Callable

from ..engine.prune import PruneConfig, prune
from .workloads import generate

SCALING_SIZES = (2_000, 10_000, 50_000, 100_000)
PER_TURN_TURNS = 2_000
REFERENCE_PER_TURN_SECONDS = 10.0  # the reference implementation, same machine class (issue 4)
WORKLOAD = "tool_agent"
CACHE_LIMIT = 800_000  # messages; below the 1,000,000-entry token and feature caches


def _turn_slices(session) -> list[int]:
    """End index (exclusive) of each turn's messages; turn 0 (the system prompt) joins turn 1."""
    ends = []
    for i, m in enumerate(session.messages):
        if m.role == "user" and i > 1:
            ends.append(i)
    ends.append(len(session.messages))
    return ends


def _incremental_class():
    try:
        return importlib.import_module("pruner.engine.incremental").IncrementalPruner
    except (ImportError, AttributeError):
        return None


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
        t0 = time.perf_counter()
        first = prune(session, config)  # warm-up: counts every text's tokens once
        first_s = time.perf_counter() - t0
        times = ([prune(session, config, validate=False).stats.elapsed_ms for _ in range(runs)] if warm
                 else [first.stats.elapsed_ms])
    finally:
        gc.unfreeze()
    median = statistics.median(times)
    return {"turns": turns, "messages": n, "tokens": first.stats.tokens_before, "warm": warm,
            "prune_ms": round(median, 1), "runs": len(times), "ms_per_1000_messages": round(1000 * median / n, 2),
            "reduction_pct": round(100 * first.stats.reduction, 2),
            "generate_s": round(generate_s, 2), "first_prune_s": round(first_s, 2)}


def measure_per_turn(turns: int = PER_TURN_TURNS, *, seed: int = 0, samples: int = 40,
                     config: PruneConfig | None = None) -> dict[str, Any]:
    config = config or PruneConfig()
    session = generate(WORKLOAD, turns=turns, seed=seed)
    ends = _turn_slices(session)
    prune(session, config)  # fills the token and feature caches, as a long-running agent would have
    out: dict[str, Any] = {"turns": len(ends), "messages": len(session.messages)}
    gc.collect()
    gc.freeze()
    try:
        Incremental = _incremental_class()
        if Incremental is not None:
            p = Incremental(config)
            start, t0 = 0, time.perf_counter()
            for end in ends:
                p.append(session.messages[start:end])
                start = end
            total = time.perf_counter() - t0
            final = p.result()
            full = prune(session, config)
            same = ([(d.id, d.status, d.rule) for d in final.decisions]
                    == [(d.id, d.status, d.rule) for d in full.decisions])
            out["incremental"] = {"total_s": round(total, 3), "ms_per_turn": round(1000 * total / len(ends), 3),
                                  "full_recomputes": getattr(p, "full_recomputes", None),
                                  "equals_full_prune": same}
        else:
            out["incremental"] = None
        # Full re-prune of the whole history after a turn: timed on evenly spaced sample turns.
        k = max(2, min(samples, len(ends)))
        picks = sorted({round(i * (len(ends) - 1) / (k - 1)) for i in range(k)})
        wall, passes = [], []
        for ti in picks:
            sub = session.with_messages(session.messages[:ends[ti]])
            t0 = time.perf_counter()
            r = prune(sub, config)
            wall.append(time.perf_counter() - t0)
            passes.append(r.stats.elapsed_ms / 1000)
    finally:
        gc.unfreeze()

    def integrate(values):  # trapezoid over turn indices: the sum over every turn, estimated
        if len(picks) == 1:
            return values[0] * len(ends)
        total = 0.0
        for (a, va), (b, vb) in zip(zip(picks, values), zip(picks[1:], values[1:])):
            total += (va + vb) / 2 * (b - a)
        return total + values[0]

    out["full_reprune"] = {"total_s": round(integrate(wall), 2), "passes_s": round(integrate(passes), 2),
                           "sampled_turns": len(picks), "estimated": len(picks) < len(ends)}
    inc = out["incremental"]
    if inc and inc["total_s"]:
        out["speedup_vs_full"] = round(out["full_reprune"]["total_s"] / inc["total_s"], 1)
        out["speedup_vs_reference"] = round(REFERENCE_PER_TURN_SECONDS / inc["total_s"], 1)
    return out


def run_scaling(*, sizes=SCALING_SIZES, per_turn_turns: int = PER_TURN_TURNS, per_turn_samples: int = 40,
                runs: int = 3, progress: Callable[[int, int, str], None] | None = None,
                on_row: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Measure every size, then the per-turn cost; ``on_row`` sees each size's figures as soon as
    they exist (a long run shows its results as it goes)."""
    steps = len(sizes) + 1
    rows = []
    for i, turns in enumerate(sizes, start=1):
        if progress:
            progress(i, steps, f"prune time at {turns:,} turns of {WORKLOAD}")
        rows.append(measure_size(turns, runs=runs))
        if on_row:
            on_row(rows[-1])
    if progress:
        progress(steps, steps, f"re-pruning after every turn of {per_turn_turns:,} turns")
    per_turn = measure_per_turn(per_turn_turns, samples=per_turn_samples)
    flat = [r["ms_per_1000_messages"] for r in rows]
    return {"schema": "pruner.bench.scaling/1", "workload": WORKLOAD, "sizes": rows,
            "ms_per_1000_messages_spread": round(max(flat) / min(flat), 2) if flat and min(flat) else None,
            "per_turn": per_turn, "reference_per_turn_s": REFERENCE_PER_TURN_SECONDS}
