"""The hindsight bound as every view shows it: one path from a replay to the bound, its regrets and its run.

The Replay page, the Corpus page and ``pruner logs`` all call ``session_limits`` (never
``compute_limits`` themselves), so the three show the same figure for the same session, and a change of
how or when the bound is computed (its speed today: seconds per hundred requests) is made here once.
The bound itself is ``pruner.replay.limit`` (see docs/explanation/hindsight-bound.md).

* ``session_limits(replay)``: every family's bound, or ``None`` where it cannot be computed (no
  request, or no context recall measured: the bar of the bound is a recall);
* ``regret(limits, totals)``: a strategy's dollars over the combined bound, as ``pruner replay``'s
  table and ``--json`` give it (``None`` when either has no figure: infeasible, not applicable, unpriced);
* ``bound_run(replay, limits)``: the combined bound's schedule replayed, request by request (its
  cumulative dollars are the line the Replay page draws);
* ``bound_cells(limits)``: the columns ``pruner logs`` stores per session.

>>> from pruner.bench.workloads import generate
>>> from pruner.replay import replay
>>> r = replay(generate("tool_agent", turns=6, seed=0), ["as_recorded", "full"])
>>> limits = session_limits(r)
>>> run = bound_run(r, limits)
>>> abs(run.totals["dollars"] - limits.combined.dollars) < 1e-6
True
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping

from .verdict import DEFAULT_MIN_RECALL, feasible

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Replay
    from .limit import Limits
    from .rows import StrategyRun

#: What the bound is called wherever it stands beside the strategies (a legend, a chart point).
BOUND_LABEL = "best in hindsight"
#: The online strategy the bound is compared with, first present first (as ``limit.text.bound_line``).
ONLINE = ("cache_aware", "cache_aware_prune")
#: ``pruner replay`` computes the bound by default on sessions of at most this many requests (``--limit`` on any,
#: ``--no-limit`` on none). Measured on this project's 2-core machine, idle: at most 10 CPU s on every shared
#: real log (Pi's 453-request large-session the longest) and 4.7 s on the 388-request tool_agent sample; the
#: 965-request tool_agent session takes minutes (docs/explanation/hindsight-bound.md, "Cost").
DEFAULT_BOUND_MAX_REQUESTS = 500
#: The families whose dollars ``pruner logs`` stores (``bound_cells``); the combined one is ``bound_dollars``.
STORED_FAMILIES = ("prune", "compaction", "clearing")


def session_limits(replay: "Replay", min_recall: float = DEFAULT_MIN_RECALL) -> "Limits | None":
    """Every family's hindsight bound for ``replay``'s session, or ``None`` when the session has no request
    or the replay measured no context recall (``pruner replay --limit`` has the same condition)."""
    if replay.recall is None or not replay.requests:
        return None
    from .limit import compute_limits

    return compute_limits(replay, min_recall=min_recall)


def computes_at_once(requests: int) -> bool:
    """Whether ``pruner replay`` computes the bound of a session of ``requests`` requests unless told."""
    return requests <= DEFAULT_BOUND_MAX_REQUESTS


def not_computed(requests: int) -> str:
    """Why a replay has no bound when it was not asked for, as the line under the table and the JSON say it."""
    return (f"not computed: {requests:,} requests, above the {DEFAULT_BOUND_MAX_REQUESTS:,} up to which it is computed "
            "by default (pass --limit to compute it: seconds to minutes at this length)")


def regret(limits: "Limits | None", totals: Mapping[str, Any]) -> float | None:
    """A strategy's dollars over the combined bound (``None``: no bound, or the strategy is infeasible, does
    not apply, or has unpriced requests, so its dollars are no whole session's)."""
    if limits is None:
        return None
    comparable = feasible(dict(totals)) and totals.get("applicable", True) is not False \
        and not totals.get("unpriced_requests", 0)
    return limits.regret(totals.get("dollars"), comparable)


def regrets(replay: "Replay", limits: "Limits | None") -> dict[str, float | None]:
    """``regret`` of every strategy the replay ran."""
    return {name: regret(limits, run.totals) for name, run in replay.runs.items()}


def online(replay: "Replay") -> str | None:
    """The online strategy the bound is compared with on this replay (``None``: none was replayed)."""
    return next((n for n in ONLINE if n in replay.runs), None)


def bound_run(replay: "Replay", limits: "Limits | None") -> "StrategyRun | None":
    """The combined bound's schedule replayed through the replay's machinery (``None`` without a figure)."""
    if limits is None or limits.families.get("combined") is None or limits.combined.dollars is None:
        return None
    from .limit import replay_plan

    plan = {a.request: a.action for a in limits.combined.schedule}
    return replay_plan(replay.session, plan, settings=replay.settings, prices=replay.price_table,
                       summarizer=replay.summarizer)


def bound_cells(limits: "Limits | None") -> dict[str, Any]:
    """The bound's columns of a ``pruner logs`` row: the combined bound's dollars (null: no feasible schedule
    or not computed), whether it is exact, its schedule (JSON), why there is none, and each family's dollars."""
    if limits is None:
        return {}
    bound = limits.combined
    cells: dict[str, Any] = {
        "bound_dollars": bound.dollars, "bound_exact": bound.exact if bound.dollars is not None else None,
        "bound_schedule": json.dumps([[a.request, a.action] for a in bound.schedule]),
        "bound_note": bound.note or None, "bound_min_recall": limits.min_recall}
    for name in STORED_FAMILIES:
        family = limits.families.get(name)
        cells[f"bound_{name}_dollars"] = None if family is None or not family.applicable else family.dollars
    return cells
