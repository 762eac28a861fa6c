"""``pruner bench-speed``: every speed target of issue 13, measured in one run.

* **Warm prune** of tool_agent sessions at a base size (10,000 messages) and at 10x and
  50x that: the ``prune()`` call (decisions left to be built when read), ``prune()`` with
  every decision read, and the passes alone (``stats.elapsed_ms``), each the median of
  repeated runs on the same ``Session`` object after a warm-up (per-text features, token
  counts and the session's index are cached, as for any session pruned before); the
  passes with near-duplicate search off, to show its share; and ``prune()`` of a *new*
  ``Session`` object holding the same messages (its index is built again; per-text
  features and token counts stay cached).
* **Cold prune**: ``prune()`` of the 2,000-turn tool_agent session in a fresh process,
  tokenising included; the tokenizer's vocabulary is loaded before (and timed apart).
* **The reference design's corpora** (``../shared/data/reference-corpora``): warm
  ``prune()`` (each corpus in a fresh process), whether every message the corpus marks
  ``required`` is kept, and the token reduction, beside the reference pruner's figures
  (measured once on this machine class; see ``REFERENCE``).

Every timing is given as wall-clock and CPU time of this process: on a shared machine
the wall clock includes waiting for a core, CPU time does not.

>>> row = measure_warm(session_of_size(300), runs=3)
>>> row.messages, row.prune.runs
(300, 3)
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from ..engine.prune import PruneConfig, prune
from .workloads import generate

WORKLOAD = "tool_agent"
COLD_TURNS = 2_000
_MESSAGES_PER_TURN = 6  # about what tool_agent produces; the session is cut to the exact size
CORPORA = Path(__file__).resolve().parents[3] / "shared" / "data" / "reference-corpora"

#: The reference pruner (``PromptPruner().prune``) on its own corpora: not measured by this
#: command, but once on this machine class (reference-corpora/SOURCES.md, issue 13).
REFERENCE = {
    "tool_agent-2000.jsonl": {"label": "tool agent", "quiet_ms": 13.0, "busy_ms": 25.0,
                              "reduction_pct": (33.1, 33.7)},
    "rag_assistant-2000.jsonl": {"label": "RAG assistant", "quiet_ms": 9.0, "busy_ms": 12.0,
                                 "reduction_pct": (27.0, 32.5)},
}
REFERENCE_SOURCE = ("the reference pruner, median of 20 runs, measured once on this 2-core machine class "
                    "(../shared/data/reference-corpora/SOURCES.md); not measured in this run")


@dataclass(frozen=True)
class Timing:
    """Median wall-clock and CPU time of ``runs`` runs, in milliseconds."""

    wall_ms: float
    cpu_ms: float
    runs: int


def time_runs(fn: Callable[[], object], runs: int) -> Timing:
    """Median wall and CPU time of ``runs`` calls of ``fn``."""
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return Timing(round(1000 * statistics.median(wall), 3), round(1000 * statistics.median(cpu), 3), runs)


@dataclass(frozen=True)
class WarmRow:
    messages: int
    tokens: int
    prune: Timing  # the prune() call, decisions not read
    prune_decisions: Timing  # prune() and every decision read
    passes_ms: float  # median stats.elapsed_ms: the passes, settling calls, no decisions
    exact_only_ms: float  # the same with near-duplicate search off
    new_session: Timing  # prune() of a new Session object with the same messages

    @property
    def us_per_message(self) -> float:
        return 1000 * self.passes_ms / self.messages


def session_of_size(messages: int, *, seed: int = 0):
    """A tool_agent session cut to exactly ``messages`` messages."""
    session = generate(WORKLOAD, turns=max(1, messages // _MESSAGES_PER_TURN + 1), seed=seed)
    while len(session.messages) < messages:  # rare: the generator made fewer than expected
        session = generate(WORKLOAD, turns=2 * session.metadata.get("turns", 1) + 1, seed=seed)
    return session.with_messages(session.messages[:messages])


def _passes_ms(session, config: PruneConfig, runs: int) -> float:
    return round(statistics.median(prune(session, config).stats.elapsed_ms for _ in range(runs)), 3)


def measure_warm(session, *, runs: int = 20) -> WarmRow:
    """Warm timings of ``session`` (after one warm-up prune that fills every cache)."""
    config = PruneConfig()
    exact_only = PruneConfig(disabled_rules=frozenset({"near_duplicate"}))
    warm = prune(session, config)
    prune(session, exact_only)
    gc.collect()
    gc.freeze()  # the session's objects are long-lived: keep the collector from rescanning them
    try:
        call = time_runs(lambda: prune(session, config), runs)
        with_decisions = time_runs(lambda: tuple(prune(session, config).decisions), runs)
        passes = _passes_ms(session, config, runs)
        exact = _passes_ms(session, exact_only, max(3, runs // 4))
        fresh = time_runs(lambda: prune(session.with_messages(session.messages), config), max(3, runs // 4))
    finally:
        gc.unfreeze()
    return WarmRow(messages=len(session.messages), tokens=warm.stats.tokens_before, prune=call,
                   prune_decisions=with_decisions, passes_ms=passes, exact_only_ms=exact, new_session=fresh)


# A fresh interpreter: import, build the session, load the vocabulary, then time prune() alone.
_COLD = """
import json, time
from pruner import get_counter, prune
from pruner.bench.workloads import generate
session = generate({workload!r}, turns={turns}, seed=0)
t = time.perf_counter(); get_counter(); vocabulary = time.perf_counter() - t
w, c = time.perf_counter(), time.process_time()
result = prune(session)
print(json.dumps({{"wall_ms": 1000 * (time.perf_counter() - w), "cpu_ms": 1000 * (time.process_time() - c),
                  "vocabulary_ms": 1000 * vocabulary, "messages": len(session.messages)}}))
"""


def measure_cold(*, turns: int = COLD_TURNS, runs: int = 5) -> dict:
    """``prune()`` in ``runs`` fresh processes: medians of the call's wall and CPU time."""
    samples = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _COLD.format(workload=WORKLOAD, turns=turns)],
                             capture_output=True, text=True, check=True)
        samples.append(json.loads(out.stdout.strip().splitlines()[-1]))
    med = {k: round(statistics.median(s[k] for s in samples), 1) for k in ("wall_ms", "cpu_ms", "vocabulary_ms")}
    return {"turns": turns, "messages": samples[0]["messages"], "runs": runs, **med}


# A fresh interpreter for each corpus: measured after a 500,000-message session in the same
# process (its memory freed, its texts' features cached), prune() of a 10,000-message corpus
# took 5.6-6.0 ms instead of 3.9-4.3 ms; the reference pruner was measured on its own too.
_REFERENCE_RUN = """
import json
from pathlib import Path
from pruner.bench.speed import measure_reference
print(json.dumps(measure_reference(Path({path!r}), runs={runs}, fresh_process=False)))
"""


def measure_reference(path: Path, *, runs: int = 20, fresh_process: bool = True) -> dict:
    """Warm prune of a reference corpus, its required messages, reduction, and the reference's
    figures; in a fresh process unless ``fresh_process`` is false."""
    if fresh_process:
        out = subprocess.run([sys.executable, "-c", _REFERENCE_RUN.format(path=str(path), runs=runs)],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    from ..formats import load_session

    session = load_session(path)
    result = prune(session)
    kept = {m.id for m in result.kept.messages}
    required = [m.id for m in session.messages if m.required]
    row = measure_warm(session, runs=runs)
    return {"corpus": path.name, "messages": len(session.messages), "prune": asdict(row.prune),
            "prune_decisions": asdict(row.prune_decisions), "passes_ms": row.passes_ms,
            "required": len(required), "required_kept": sum(1 for i in required if i in kept),
            "reduction_pct": round(100 * result.stats.reduction, 2), "reference": REFERENCE.get(path.name)}


def reference_corpora() -> list[Path]:
    """The reference corpora present on this machine (the timed ones first)."""
    if not CORPORA.is_dir():
        return []
    return [CORPORA / name for name in REFERENCE if (CORPORA / name).exists()]


def warm_dict(row: WarmRow) -> dict:
    return {**asdict(row), "us_per_message": round(row.us_per_message, 3)}
