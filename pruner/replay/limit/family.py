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


def compactions(replay: "Replay", strategy: str) -> list[int]:
    """The requests at which ``strategy`` compacted (empty when it was not replayed)."""
    run = replay.runs.get(strategy)
    return [] if run is None else [c["request"] for c in run.totals["compactions"]]


def everywhere(replay: "Replay", action: str) -> dict[int, str]:
    return {r.index: action for r in replay.requests}
