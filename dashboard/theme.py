"""The dashboard's shared look: every colour it draws with, one palette per meaning.

The four status colours (Okabe-Ito, readable with the common colour-vision
deficiencies; each status also has its own marker shape) mean the four pruning
statuses and nothing else: a reader who learns that vermillion is "expired" on
the timeline must never meet vermillion meaning a cache miss or a strategy.
Every other meaning (roles, kinds of context, tools, strategies, formats,
before/after, cache misses, summarised messages) has its palette here, none of
which holds a status colour; ``tests/unit/dashboard/test_dashboard_colours.py`` builds every
chart the dashboard draws and reads each one's colours to keep it so.

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

#: Messages a compaction replaces with its summary (the timeline's "summarised" marks): not a pruning status.
SUMMARISED_COLOUR = "#7F7F7F"
SUMMARISED_SYMBOL = "square-open"

# ---------------------------------------------------------------- every other meaning: no status colour
INDIGO, SKY, PINK, YELLOW, WINE, OLIVE, BROWN, ROSE, PURPLE, CYAN = (
    "#332288", "#56B4E9", "#CC79A7", "#F0E442", "#882255", "#999933", "#8C564B", "#CC6677", "#AA4499", "#17BECF")

ROLE_COLOURS: dict[str, str] = {
    "system": "#7F7F7F",
    "user": SKY,
    "assistant": INDIGO,
    "tool": PINK,
    "retrieved_doc": YELLOW,
    "summary": WINE,
}

#: The kinds of context in the composition charts (``pruner.replay.composition``'s kind names).
KIND_COLOURS: dict[str, str] = {"system": "#7F7F7F", "user": SKY, "assistant": INDIGO, "file reads": BROWN,
                                "retrieved documents": YELLOW, "summaries": WINE, "placeholders": "#BBBBBB"}
#: Tool results, one colour each in first-use order (none of them a kind's colour), and the rest together.
TOOL_COLOURS: tuple[str, ...] = (PINK, OLIVE, CYAN, PURPLE, "#DDCC77", "#661100", "#6699CC", ROSE)
OTHER_TOOLS_COLOUR = "#444444"

#: One colour per built-in replay strategy; others cycle through ``SPARE_STRATEGY_COLOURS``.
STRATEGY_COLOURS: dict[str, str] = {
    "as_recorded": "#000000", "full": "#999999", "truncate": "#661100", "prune_every_request": OLIVE,
    "cache_aware_prune": INDIGO, "compact": WINE, "prune_then_compact": SKY, "clear_tool_uses": PINK,
}
SPARE_STRATEGY_COLOURS: tuple[str, ...] = (YELLOW, "#7F7F7F", BROWN, CYAN)

#: One colour per file format on the Corpus page.
FORMAT_COLOURS: tuple[str, ...] = (INDIGO, SKY, PINK, OLIVE, WINE, YELLOW, "#7F7F7F", BROWN)

#: One colour per benchmark workload.
WORKLOAD_COLOURS: dict[str, str] = {"plain_chat": SKY, "rag_assistant": PINK, "tool_agent": "#444444"}
#: Benchmarks: pruner beside its baselines.
PRUNER_COLOUR, ORACLE_COLOUR, TRUNCATION_COLOUR = INDIGO, OLIVE, STRATEGY_COLOURS["truncate"]
#: The reference design's own figures (measured once here), beside pruner's.
REFERENCE_COLOUR = ROSE

#: Before/after: the context as it arrives, and what is sent after pruning.
BEFORE_COLOUR = "#999999"
AFTER_COLOUR = INDIGO
#: A value that went the wrong way (a session pruning made larger).
WORSE_COLOUR = ROSE
#: Tokens a prompt cache cannot reuse (cache misses, re-processed prefixes) and the context window's limit.
CACHE_MISS_COLOUR = "#B22222"
WINDOW_COLOUR = "#B22222"
#: Compaction overlays on the timeline.
SUMMARISED_FILL = "rgba(120, 120, 120, 0.15)"
CUT_COLOUR = "#333333"
RECORDED_CUT_COLOUR = PINK

assert set(STATUS_COLOURS) == set(STATUSES) == set(STATUS_MARKS), "one colour and one mark per status"
assert set(ROLE_COLOURS) == set(ROLES), "one colour per role"
_RESERVED = {c.upper() for c in STATUS_COLOURS.values()}
assert not _RESERVED & {c.upper() for c in (
    *ROLE_COLOURS.values(), *KIND_COLOURS.values(), *TOOL_COLOURS, OTHER_TOOLS_COLOUR, *STRATEGY_COLOURS.values(),
    *SPARE_STRATEGY_COLOURS, *FORMAT_COLOURS, *WORKLOAD_COLOURS.values(), PRUNER_COLOUR, ORACLE_COLOUR,
    REFERENCE_COLOUR, BEFORE_COLOUR, AFTER_COLOUR, WORSE_COLOUR, CACHE_MISS_COLOUR, WINDOW_COLOUR,
    SUMMARISED_COLOUR, CUT_COLOUR, RECORDED_CUT_COLOUR)}, "the four status colours mean the four statuses only"


def status_label(status: str, count: int | None = None) -> str:
    """The legend label of a status, with its count when given."""
    return status if count is None else f"{status} ({count:,})"
