"""The dashboard's shared look: one colour and one marker per pruning status.

Every chart and table uses these, so "expired" is the same colour on every
page. The palette is Okabe-Ito (readable with the common colour-vision
deficiencies) and each status also has its own marker shape.

>>> STATUS_COLOURS["expired"]
'#D55E00'
>>> [status_label(s, 3) for s in ("kept",)]
['kept (3)']
"""

from __future__ import annotations

from pruner.model import ROLES, STATUSES

STATUS_COLOURS: dict[str, str] = {
    "kept": "#0072B2",  # blue
    "expired": "#D55E00",  # vermillion
    "duplicate": "#E69F00",  # orange
    "restored": "#009E73",  # bluish green
}

STATUS_SYMBOLS: dict[str, str] = {
    "kept": "circle",
    "expired": "x",
    "duplicate": "diamond",
    "restored": "star",
}

#: The marker shapes as text, for tables (the same shapes as the timeline's marks).
STATUS_MARKS: dict[str, str] = {"kept": "●", "expired": "✖", "duplicate": "◆", "restored": "★"}

STATUS_MEANINGS: dict[str, str] = {
    "kept": "sent to the model unchanged",
    "expired": "removed because something newer replaced it or its time ran out",
    "duplicate": "removed because the same (or nearly the same) text is already kept",
    "restored": "removed by a pass, then brought back because a kept message needs it",
}

ROLE_COLOURS: dict[str, str] = {
    "system": "#7F7F7F",
    "user": "#56B4E9",
    "assistant": "#0072B2",
    "tool": "#CC79A7",
    "retrieved_doc": "#F0E442",
    "summary": "#009E73",
}

#: One colour per benchmark workload (none of them a status colour).
WORKLOAD_COLOURS: dict[str, str] = {"plain_chat": "#56B4E9", "rag_assistant": "#CC79A7", "tool_agent": "#444444"}

#: Before/after lines in the context chart.
BEFORE_COLOUR = "#999999"
AFTER_COLOUR = STATUS_COLOURS["kept"]
#: Compaction overlays on the timeline.
SUMMARISED_FILL = "rgba(120, 120, 120, 0.15)"
CUT_COLOUR = "#333333"
RECORDED_CUT_COLOUR = "#CC79A7"

assert set(STATUS_COLOURS) == set(STATUSES) == set(STATUS_MARKS), "one colour and one mark per status"
assert set(ROLE_COLOURS) == set(ROLES), "one colour per role"


def status_label(status: str, count: int | None = None) -> str:
    """The legend label of a status, with its count when given."""
    return status if count is None else f"{status} ({count:,})"
