"""What a family of management is to the bound: the actions it may take at a request, and the
schedules of its own strategies (anchors), read from a replay's runs. One module per family
registers one ``Family`` here (``prune``, ``compaction``, ``combined``; ``clearing`` is a grid of
parameters and has its own search)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping

from ...registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Replay
    from ..rows import StrategyRun


@dataclass(frozen=True)
class Family:
    name: str
    actions: tuple[str, ...]  # besides "none", at every request
    members: tuple[str, ...]  # the registered strategies whose every run is one of its schedules
    anchors: Callable[["Replay"], Mapping[str, Mapping[int, str]]]  # member -> its schedule (when replayed)
    describe: str  # one sentence for the docs and the JSON's reader


FAMILIES: Registry[Family] = Registry("limit family", origin=lambda f: f.name)


def register_family(family: Family) -> Family:
    FAMILIES.add(family.name, family)
    return family


def run_of(replay: "Replay", strategy: str) -> "StrategyRun":
    """``strategy``'s run in ``replay``, or replayed alone with the same settings, prices and summariser when
    it was not asked for: a family's anchors, and so its bound, do not depend on which strategies a user
    asked ``pruner replay`` for."""
    run = replay.runs.get(strategy)
    if run is not None:
        return run
    from ..engine import replay as replay_session

    return replay_session(replay.session, [strategy], settings=replay.settings, prices=replay.price_table,
                          summarizer=replay.summarizer, snapshots=False, recall=False).runs[strategy]


def compactions(replay: "Replay", strategy: str) -> list[int]:
    """The requests at which ``strategy`` compacted."""
    return [c["request"] for c in run_of(replay, strategy).totals["compactions"]]


def everywhere(replay: "Replay", action: str) -> dict[int, str]:
    return {r.index: action for r in replay.requests}


#: The online policies whose decisions seed a family's search. Not members: they also drop the oldest messages
#: when the window forces them, which no family does, so the bound claims nothing against them. But where they
#: did not, their decisions are one of the family's schedules, and a beam keeps the states following an anchor,
#: so the bound found is at most what that schedule costs: the search starts from what the policy chose.
ONLINE_SEEDS = ("cache_aware_prune", "cache_aware")


def online_schedules(replay: "Replay", compaction: bool) -> dict[str, dict[int, str]]:
    """Each replayed online policy's decisions as a schedule: a switch to the pruner's context is ``prune``, a
    compaction ``compact`` (``prune+compact`` with a switch; only when the family has ``compaction``), and every
    other request ``drop``, since the policies leave out on arrival what the pruner removes."""
    from ..strategies.cache_aware_prune import FREE_DROP

    out: dict[str, dict[int, str]] = {}
    for name in ONLINE_SEEDS:
        run = run_of(replay, name)
        plan: dict[int, str] = {}
        for row in run.rows:
            kinds = {e.kind for e in row.events}
            compacted = compaction and "compact" in kinds
            pruned = any(e.kind == "prune" and e.detail != FREE_DROP for e in row.events)
            plan[row.request] = ("prune+compact" if pruned else "compact") if compacted else \
                ("prune" if pruned else "drop")
        out[f"{name}'s decisions"] = plan
    return out
