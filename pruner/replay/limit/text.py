"""The bound in words: the line ``pruner replay`` prints under its table and in its verdict.

>>> from .bound import Limit, ScheduledAction
>>> describe_schedule((ScheduledAction(160, "compact"), ScheduledAction(301, "compact")))
'compact at requests 160 and 301'
>>> describe_schedule(())
'no action: full'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from pruner.money import money

from .bound import Limit, Limits, ScheduledAction

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Replay

#: The online strategies the line compares with the bound, first present first.
ONLINE = ("cache_aware", "cache_aware_prune")


def _requests(indexes: Sequence[int]) -> str:
    if len(indexes) == 1:
        return f"request {indexes[0]}"
    if len(indexes) <= 4:
        return "requests " + ", ".join(map(str, indexes[:-1])) + f" and {indexes[-1]}"
    return f"{len(indexes):,} requests ({indexes[0]} to {indexes[-1]})"


def describe_schedule(schedule: Sequence[ScheduledAction]) -> str:
    if not schedule:
        return "no action: full"
    by_action: dict[str, list[int]] = {}
    for a in schedule:
        by_action.setdefault(a.action, []).append(a.request)
    return "; ".join(f"{action} at {_requests(idx)}" for action, idx in by_action.items())


def _pct(change: float) -> str:
    return f"{'−' if change < 0 else '+'}{abs(100 * change):.1f} %"


def bound_line(replay: "Replay", limits: Limits) -> str:
    """One or two sentences: the combined bound with its schedule, and the online strategy beside it."""
    bound: Limit | None = limits.families.get("combined")
    if bound is None:
        return ""
    if bound.dollars is None:
        return f"Best possible in hindsight: none ({bound.note})."
    change = -bound.saving_vs_recorded if bound.saving_vs_recorded is not None else None
    how = describe_schedule(bound.schedule)
    exact = "" if bound.exact else (
        " (approximate: " + (f"the optimum is at least {money(bound.lower_bound)}; "
                             if bound.lower_bound is not None else "")
        + "see limit.combined.approximation in --json)")
    line = (f"Best possible in hindsight: {money(bound.dollars)} ("
            + (f"{_pct(change)}, " if change is not None else "") + f"{how}){exact}.")
    for name in ONLINE:
        run = replay.runs.get(name)
        if run is None:
            continue
        t = run.totals
        if not t.get("feasible", True) or not t.get("applicable", True):
            line += f" {name}: infeasible."
        elif bound.dollars:
            over = (t["dollars"] - bound.dollars) / bound.dollars
            line += (f" {name}: {money(t['dollars'])}, {abs(100 * over):.1f} % "
                     f"{'above' if over >= 0 else 'below'} it.")
        break
    return line
