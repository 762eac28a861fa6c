"""The compaction family: at which requests to compact, with the project's compactor.

Action: ``compact`` (summarise what would be sent now, keep the newest ``keep_recent_tokens``; the
summarisation request is billed, as ``compact`` bills it). The empty schedule is ``full``;
``compact``'s own schedule (compact when over window minus reserve) is one of the family's.
"""

from __future__ import annotations

from .family import Family, compactions, register_family

COMPACTION = register_family(Family(
    name="compaction", actions=("compact",), members=("full", "compact"),
    anchors=lambda r: {"full": {}, "compact": {k: "compact" for k in compactions(r, "compact")}},
    describe="at which requests to compact (the project's compactor; its summary request billed)"))
