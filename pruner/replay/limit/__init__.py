"""The hindsight bound: the cheapest schedule of each family of management, knowing the whole session.

``compute_limits(replay, min_recall=0.99)`` answers, for the session ``replay`` replayed, what the
best schedule of each family would have cost under the same cache model (every recorded request at
its recorded time, the replies as recorded, each request under its window, context recall at least
``min_recall``):

* ``prune``: at which requests to send the pruner's context, or leave out what it removes on arrival;
* ``compaction``: at which requests to compact (the project's compactor, its summary billed);
* ``clearing``: the best ``clear_tool_uses`` parameters over a stated grid (``clearing.GRID``);
* ``combined``: prune, and compact when needed.

The empty schedule of every family is ``full``. The search (``pruner.replay.limit.search``) is a
forward dynamic programme over replay states, exact while the states fit ``max_states``; the
schedule found is replayed through the replay's own machinery (``schedule.replay_plan``), so the
figure reported is what that schedule costs. See docs/explanation/hindsight-bound.md.

>>> from pruner.bench.workloads import generate
>>> from pruner.replay import replay
>>> r = replay(generate("tool_agent", turns=6, seed=0), ["as_recorded", "full", "prune_every_request"])
>>> limits = compute_limits(r, families=["prune"])
>>> p = limits.families["prune"]
>>> p.exact, p.dollars <= r.runs["full"].totals["dollars"] + 1e-9
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Mapping, Sequence

from ..answer import RECORDING
from ..verdict import DEFAULT_MIN_RECALL
from . import combined, compaction, prune  # noqa: F401  (each registers its family)
from .bound import FAMILY_ORDER, Limit, Limits, ScheduledAction, saving
from .family import FAMILIES
from .schedule import build, replay_plan
from .floor import input_floors
from .search import BEAM, MAX_STATES, MODELLED_ONLY, max_missing, search, used_counts

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Replay

__all__ = ["FAMILY_ORDER", "Limit", "Limits", "ScheduledAction", "compute_limits", "replay_plan"]


def compute_limits(replay: "Replay", *, min_recall: float = DEFAULT_MIN_RECALL,
                   families: Sequence[str] | None = None, max_states: int = MAX_STATES,
                   beam: int = BEAM) -> Limits:
    """Each family's bound for ``replay``'s session (default: every family); see the module docstring."""
    from .clearing import clearing_limit

    started = time.perf_counter()
    names = [n for n in FAMILY_ORDER if families is None or n in families]
    reference = next((n for n in RECORDING if n in replay.runs), None)
    if reference is not None:
        recorded = replay.runs[reference].totals["dollars"]
    else:
        reference = "full"
        recorded = replay_plan(replay.session, {}, settings=replay.settings, prices=replay.price_table,
                               summarizer=replay.summarizer).totals["dollars"]
    out: dict[str, Limit] = {}
    parts: dict[str, Limit] = {}  # prune and compaction, also when only combined is asked for
    for name in names:
        if name == "clearing":
            out[name] = clearing_limit(replay, min_recall, recorded)
        elif name == "combined":
            for part in _SUBFAMILIES:
                if part not in parts:
                    parts[part] = _family_limit(replay, part, min_recall, recorded, max_states, beam)
            out[name] = _combined_limit(replay, parts, min_recall, recorded, max_states, beam)
        else:
            out[name] = parts[name] = _family_limit(replay, name, min_recall, recorded, max_states, beam)
    return Limits(out, reference, recorded, min_recall, time.perf_counter() - started)


#: The families whose every schedule is one of combined's: their bounds seed its search.
_SUBFAMILIES = ("prune", "compaction")


def _combined_limit(replay: "Replay", parts: dict[str, Limit], min_recall: float, recorded: float,
                    max_states: int, beam: int) -> Limit:
    """Combined's bound, at most the prune and compaction bounds by construction: their schedules are
    anchors of its search (a beam keeps the states that follow them), and should its schedule still
    come out dearer (never expected), the cheaper of theirs is combined's, since it is one of its."""
    seeds = {f"the {name} bound": {a.request: a.action for a in limit.schedule}
             for name, limit in parts.items() if limit.dollars is not None}
    own = _family_limit(replay, "combined", min_recall, recorded, max_states, beam, seeds)
    best = own
    for name in _SUBFAMILIES:
        limit = parts[name]
        if limit.dollars is not None and (best.dollars is None or limit.dollars < best.dollars - 1e-9):
            best = replace(limit, family="combined", exact=own.exact and limit.exact,
                           approximation=(own.approximation or "exhaustive search")
                           + f"; the {name} bound's schedule is cheaper and is one of combined's")
    # Combined's own search bounds its optimum from below whichever schedule wins (theirs are combined's too).
    return replace(best, states_peak=own.states_peak, seconds=own.seconds, lower_bound=own.lower_bound)


def _family_limit(replay: "Replay", name: str, min_recall: float, recorded: float, max_states: int,
                  beam: int, seeds: Mapping[str, Mapping[int, str]] | None = None) -> Limit:
    started = time.perf_counter()
    family = FAMILIES[name]
    session, settings, prices = replay.session, replay.settings, replay.price_table
    _, requests, runner = build(session, settings, prices, replay.summarizer)
    used = sum(used_counts(runner, requests))
    allowed = max_missing(used, min_recall)
    _, requests, runner = build(session, settings, prices, replay.summarizer)  # a fresh pruner feed
    anchors = {**family.anchors(replay), **(seeds or {})}
    # the one family with a floor under its input (pruner.replay.limit.floor)
    floor = partial(input_floors, session, settings, prices, replay.summarizer, MODELLED_ONLY) \
        if name == "prune" else None
    outcome = search(runner, requests, lambda _req: family.actions, anchors, allowed,
                     max_states=max_states, beam=beam, input_floor=floor)
    lower = outcome.lower_bound
    approximation = None if outcome.exact else (
        f"beam search: more than {max_states:,} distinct states at some request, so from there only the "
        f"{beam} cheapest were kept, with the states following {', '.join(sorted(anchors))}, and compactions "
        "were tried only past half of window minus reserve, by the cheapest state; the schedule is real and "
        "priced by the replay, the optimum may be lower, down to lower_bound (what the schedules the beam cut "
        "would cost at least: the dollars they had paid when cut and every later reply's output"
        + (", and for prune the input of every message the pruner never removes" if name == "prune" else "")
        + ")")
    if outcome.plan is None:
        why = "" if outcome.exact else (" that the beam search found (any that it cut would cost at least "
                                         f"${lower:.4f})" if lower is not None else "")
        return Limit(name, None, None, (), min_recall, None, outcome.exact, approximation, False,
                     states_peak=outcome.states_peak, seconds=time.perf_counter() - started, lower_bound=lower,
                     note=f"no schedule of the {name} family{why} keeps every request under its window with "
                          f"context recall >= {min_recall:g}")
    run = replay_plan(session, dict(outcome.plan), settings=settings, prices=prices, summarizer=replay.summarizer)
    totals = run.totals
    dollars = totals["dollars"]
    exact = outcome.exact
    if outcome.dollars is not None and abs(dollars - outcome.dollars) > 1e-6:
        exact = False  # never expected (both use the same machinery); said rather than hidden
        approximation = (approximation or "") + (f"; the search priced this schedule at ${outcome.dollars:.6f}, "
                                                 f"its replay at ${dollars:.6f}")
    if exact:
        lower = dollars
    elif lower is not None and lower > dollars:
        lower = dollars  # the replay's price of the schedule stands (never expected to differ)
    schedule = tuple(ScheduledAction(k, a) for k, a in outcome.plan)
    return Limit(name, dollars, saving(recorded, dollars), schedule, min_recall, totals.get("context_recall"),
                 exact, approximation, bool(totals["feasible"]), states_peak=outcome.states_peak,
                 seconds=time.perf_counter() - started, lower_bound=lower)
