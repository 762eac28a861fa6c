"""Each benchmark configuration's hindsight bound and every priced strategy's regret against it.

A row of ``pruner bench``'s results gets ``bound`` (the combined family's cheapest schedule in hindsight:
``computed``, ``dollars``, ``exact``, ``feasible``, ``actions``, ``reference``, ``min_recall``, ``seconds``)
and ``regret`` (strategy -> its dollars over the bound; null where the strategy is infeasible or there
is no bound), computed through ``pruner.replay.hindsight`` (the path every view of the bound shares) on
the replay the cost columns come from (``pruner.bench.cost``: same strategies, settings and prices).

The search takes seconds up to 200 turns (4.7 s for the 388-request tool_agent session on this project's
idle 2-core machine) and minutes at 1,000 turns and more, so a run computes it up to ``BOUND_TURNS`` turns
(``pruner bench --bound-turns``) and marks larger configurations ``computed: false`` with the reason.
``python -m pruner.bench.regret RESULTS [TURNS]`` adds the bound to the rows of an existing results file
up to TURNS turns (the session is generated again and checked against the row's ``session_sha256``),
which is how the committed results got theirs.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from typing import Any

from ..files import write_atomic
from ..formats.native import dumps as native_dumps
from ..model import Session

#: Configurations up to this many turns get the bound by default (above: "not computed").
BOUND_TURNS = 200


def bound_columns(session: Session) -> dict[str, Any]:
    """``{"bound": ..., "regret": ...}`` of one generated session (see the module docstring)."""
    from ..replay import replay
    from ..replay.hindsight import regret, session_limits
    from .cost import STRATEGIES_PRICED, settings

    r = replay(session, STRATEGIES_PRICED, settings=settings(), snapshots=False)
    started = time.perf_counter()
    limits = session_limits(r)
    seconds = round(time.perf_counter() - started, 2)
    if limits is None:
        return {"bound": {"computed": False, "reason": "not computed: the replay measured no context recall"},
                "regret": {}}
    combined = limits.combined
    bound = {"computed": True, "dollars": combined.dollars, "exact": combined.exact, "feasible": combined.feasible,
             "actions": len(combined.schedule), "reference": limits.reference, "min_recall": limits.min_recall,
             "note": combined.note or None, "seconds": seconds}
    return {"bound": bound, "regret": {name: regret(limits, r.runs[name].totals) for name in STRATEGIES_PRICED}}


def not_computed(turns: int, limit: int) -> dict[str, Any]:
    reason = (f"not computed: {turns:,} turns is above the {limit:,} the run computed the bound for (its search "
              "is slow on long sessions today)")
    return {"bound": {"computed": False, "reason": reason}, "regret": {}}


def regret_lines(rows: list[dict[str, Any]]) -> list[str]:
    """``pruner bench``'s REGRET block: per configuration the bound and each strategy's dollars over it."""
    from ..money import money

    names = list(dict.fromkeys(n for r in rows for n in (r.get("regret") or {})))
    out = ["REGRET (each strategy's dollars over the best possible in hindsight, the combined family's cheapest "
           "schedule; n/a: infeasible or no bound)"]
    for r in rows:
        head = f"  {r['workload']} {r['turns']:,} turns seed {r['seed']}: "
        bound = r.get("bound") or {}
        if not bound.get("computed"):
            out.append(head + bound.get("reason", "not computed"))
        elif bound.get("dollars") is None:
            out.append(head + f"no feasible schedule ({bound.get('note') or 'none keeps the recall bar'})")
        else:
            cells = [f"{n} " + ("n/a" if v is None else f"{'+' if v >= 0 else '−'}{money(abs(v))}")
                     for n, v in ((n, r["regret"].get(n)) for n in names)]
            exact = "" if bound.get("exact") else " (approximate)"
            out.append(head + f"bound {money(bound['dollars'])}{exact}; " + ", ".join(cells))
    return out


def for_row(session: Session, turns: int, limit: int | None) -> dict[str, Any]:
    """The bound of a configuration of ``turns`` turns, or why it is not computed (``limit``: up to which)."""
    return bound_columns(session) if limit is not None and turns <= limit else not_computed(turns, limit or 0)


def add_to_results(path: str, limit: int = BOUND_TURNS) -> dict[str, Any]:
    """Fill ``bound`` and ``regret`` into every row of the results file at ``path`` (rows above ``limit``
    turns: "not computed"); the file is rewritten in place. Returns the results."""
    from .workloads import generate

    with open(path, encoding="utf-8") as fh:
        results: dict[str, Any] = json.load(fh)
    for row in results["rows"]:
        session = generate(row["workload"], turns=row["turns"], seed=row["seed"])
        digest = hashlib.sha256(native_dumps(session).encode()).hexdigest()
        if digest != row.get("session_sha256"):
            raise ValueError(f"{row['workload']} {row['turns']} turns seed {row['seed']}: the generator makes "
                             "another session than the row measured; run pruner bench again instead")
        row.update(for_row(session, row["turns"], limit))
    results["meta"]["bound_turns"] = limit
    write_atomic(path, json.dumps(results, ensure_ascii=False, indent=1) + "\n", follow_symlinks=False)
    return results


if __name__ == "__main__":  # pragma: no cover
    add_to_results(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else BOUND_TURNS)
