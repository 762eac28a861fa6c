"""How cache_aware_prune's replay time and key scans grow with the session (issue 23, defect 11).

    PYTHONPATH=. python scripts/bench_cache_aware_prune.py 2 4 8 16

For each size (MB of native JSONL) it generates a seeded ``tool_agent`` session twice: as generated
(requests seconds apart: a warm cache) and at a human pace (messages 400 s apart, past the 5-minute
TTL: the cache is cold at most requests, so the strategy switches often, the case that grew fastest).
It prints, per session, the messages, requests, seconds for ``replay(session, ["cache_aware_prune"])``
alone, and the key scans per request (``CacheAwarePrune._keys`` calls: the work the policy does to know
which keys the context it sends defines), plus the machine's load (``os.getloadavg``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time

from pruner.bench.workloads import generate
from pruner.formats.export import dumps
from pruner.replay import replay
from pruner.replay.strategies import cache_aware_prune as cap
from pruner.tokens import get_counter

BYTES_PER_TURN = 2900  # tool_agent, native JSONL: about this many bytes a turn in a long session


def session_of(mb: float, gap: float):
    s = generate("tool_agent", turns=int(mb * 1e6 / BYTES_PER_TURN), seed=0)
    if gap:
        s = dataclasses.replace(s, messages=tuple(
            dataclasses.replace(m, metadata={**m.metadata, "timestamp": 1.7e9 + gap * i})
            for i, m in enumerate(s.messages)))
    return s


def main(sizes: list[float]) -> None:
    scans = {"n": 0}
    original = cap.CacheAwarePrune._keys

    def counted(m):
        scans["n"] += 1
        return original(m)

    cap.CacheAwarePrune._keys = staticmethod(counted)
    get_counter().count("warm up")  # the tokenizer's one-off load is not the strategy's time
    print(f"load average at start: {os.getloadavg()}")
    print(f"{'MB':>6} {'pace':>6} {'messages':>9} {'requests':>9} {'seconds':>8} {'scans/request':>14}")
    for mb in sizes:
        for gap in (0.0, 400.0):
            s = session_of(mb, gap)
            size = len(dumps(s, to="native")) / 1e6
            scans["n"] = 0
            start = time.perf_counter()
            r = replay(s, ["cache_aware_prune"], snapshots=False)
            elapsed = time.perf_counter() - start
            pace = "400s" if gap else "agent"
            print(f"{size:6.1f} {pace:>6} {len(s.messages):9,} {len(r.requests):9,} {elapsed:8.2f} "
                  f"{scans['n'] / max(1, len(r.requests)):14.1f}", flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [2, 4, 8, 16])
