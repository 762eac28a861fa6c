"""The combined family: prune, and compact when needed.

Every action of the prune and compaction families, and both at one request (``prune+compact``:
prune, then compact the pruned context, as ``prune_then_compact`` does over the trigger). Every
schedule of the other two families is one of its, so its bound is at most theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .family import Family, compactions, everywhere, online_schedules, register_family

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Replay


def _anchors(r: "Replay") -> dict[str, dict[int, str]]:
    ptc = set(compactions(r, "prune_then_compact"))
    out: dict[str, dict[int, str]] = {
        "full": {}, "prune_every_request": everywhere(r, "prune"), "drop": everywhere(r, "drop"),
        "compact": {k: "compact" for k in compactions(r, "compact")}}
    out["prune_then_compact"] = {q.index: "prune+compact" if q.index in ptc else "prune" for q in r.requests}
    return {**out, **online_schedules(r, compaction=True)}


COMBINED = register_family(Family(
    name="combined", actions=("drop", "prune", "compact", "prune+compact"),
    members=("full", "prune_every_request", "compact", "prune_then_compact"), anchors=_anchors,
    describe="prune (or drop on arrival) at any request, and compact when it pays"))
