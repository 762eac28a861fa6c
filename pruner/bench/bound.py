"""How long the hindsight bound takes: every family on a generated session, CPU and wall time.

``measure_bound(workload="tool_agent", turns=2000)`` generates the session (``pruner.bench.workloads``),
replays it once with every strategy (not timed: the bound is computed after a replay), then times
``compute_limits`` family by family, with the machine and its load before and after
(``pruner.bench.environment``). Issue 30's target: at most 10 s for every family on the 2,000-turn
tool_agent session. ``python -m pruner.bench.bound [TURNS] [FAMILIES]`` prints the figures as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Sequence

from . import environment

TARGET_SECONDS = 10.0


def measure_bound(workload: str = "tool_agent", turns: int = 2000, seed: int = 0,
                  families: Sequence[str] | None = None) -> dict[str, Any]:
    from ..replay import replay
    from ..replay.limit import FAMILY_ORDER, compute_limits
    from .workloads import generate

    env = environment.start(f"python -m pruner.bench.bound {turns}")
    session = generate(workload, turns=turns, seed=seed)
    r = replay(session, snapshots=False)
    out: dict[str, Any] = {"workload": workload, "turns": turns, "seed": seed, "requests": len(r.requests),
                           "messages": len(session.messages), "families": {}}
    for name in families or FAMILY_ORDER:
        wall, cpu = time.perf_counter(), time.process_time()
        limit = compute_limits(r, families=[name]).families[name]
        out["families"][name] = {"wall_s": round(time.perf_counter() - wall, 2),
                                 "cpu_s": round(time.process_time() - cpu, 2), "dollars": limit.dollars,
                                 "lower_bound": limit.lower_bound,
                                 "exact": limit.exact, "states_peak": limit.states_peak,
                                 "actions": len(limit.schedule)}
    out["cpu_s_total"] = round(sum(f["cpu_s"] for f in out["families"].values()), 2)
    out["target_s"] = TARGET_SECONDS
    out["environment"] = environment.finish(env)
    return out


if __name__ == "__main__":  # pragma: no cover
    args = sys.argv[1:]
    result = measure_bound(turns=int(args[0]) if args else 2000,
                           families=args[1].split(",") if len(args) > 1 else None)
    print(json.dumps(result, indent=1))
