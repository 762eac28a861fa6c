"""The prune family: at which requests to apply what the three passes would remove then.

Actions: ``prune`` (send the incremental pruner's whole context: the prefix changes at the first
message that differs) and ``drop`` (leave out what the pruner removes among the new messages only:
the cached prefix is untouched). The empty schedule is ``full``; ``prune`` at every request is
``prune_every_request``.
"""

from __future__ import annotations

from .family import Family, everywhere, online_schedules, register_family

PRUNE = register_family(Family(
    name="prune", actions=("drop", "prune"), members=("full", "prune_every_request"),
    anchors=lambda r: {"full": {}, "prune_every_request": everywhere(r, "prune"), "drop": everywhere(r, "drop"),
                       **online_schedules(r, compaction=False)},
    describe="at which requests to send the pruner's context (prune) or leave out what it removes of the new "
             "messages (drop)"))
