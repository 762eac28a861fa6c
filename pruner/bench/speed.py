"""The speed benchmark of the three passes, as ``pruner bench-speed`` prints it.

It times what an agent pays on every turn once the conversation's texts have
been seen: the passes (token counts and content analysis are cached per text,
so they are warmed first), as the median of many runs, at a base size and at
10x and 50x that size, to show the cost grows linearly.

>>> row = measure(300, runs=3)
>>> row.messages, row.runs
(300, 3)
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass

from ..engine.prune import PruneConfig, prune
from .workloads import generate

WORKLOAD = "tool_agent"
_MESSAGES_PER_TURN = 6  # about what tool_agent produces; the session is cut to the exact size


@dataclass(frozen=True)
class SpeedRow:
    messages: int
    tokens: int
    runs: int
    passes_ms: float  # median of ``runs`` timed prunes: the passes, settling, placeholders
    prune_ms: float  # median of the whole prune() call: passes plus explanations and token totals
    exact_only_ms: float  # passes with near-duplicate search off, to show its share

    @property
    def us_per_message(self) -> float:
        return 1000 * self.passes_ms / self.messages


def session_of_size(messages: int, *, seed: int = 0):
    """A tool_agent session cut to exactly ``messages`` messages."""
    session = generate(WORKLOAD, turns=max(1, messages // _MESSAGES_PER_TURN + 1), seed=seed)
    while len(session.messages) < messages:  # rare: the generator made fewer than expected
        session = generate(WORKLOAD, turns=2 * session.metadata.get("turns", 1) + 1, seed=seed)
    return session.with_messages(session.messages[:messages])


def _median_ms(session, config: PruneConfig, runs: int) -> tuple[float, float]:
    passes, wall = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = prune(session, config, validate=False)
        wall.append((time.perf_counter() - t0) * 1000)
        passes.append(r.stats.elapsed_ms)
    return statistics.median(passes), statistics.median(wall)


def measure(messages: int, *, runs: int = 20, seed: int = 0) -> SpeedRow:
    """Time the passes on a ``messages``-message session (after one warm-up prune)."""
    session = session_of_size(messages, seed=seed)
    config = PruneConfig()
    warm = prune(session, config)  # counts tokens and analyses every text once
    exact_only = PruneConfig(disabled_rules={"near_duplicate"})
    prune(session, exact_only)
    gc.collect()
    gc.freeze()  # the session's objects are long-lived: keep the collector from rescanning them
    try:
        passes_ms, prune_ms = _median_ms(session, config, runs)
        exact_ms, _ = _median_ms(session, exact_only, max(3, runs // 4))
    finally:
        gc.unfreeze()
    return SpeedRow(messages=messages, tokens=warm.stats.tokens_before, runs=runs, passes_ms=passes_ms,
                    prune_ms=prune_ms, exact_only_ms=exact_ms)
