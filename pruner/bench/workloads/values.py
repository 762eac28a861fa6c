"""The facts a generated user states, and values no two of a session's statements share.

A fact's value is what a reply that uses it quotes, so it is what context recall
(``pruner.replay.recall``) looks for. When two facts of a session held the same value
(two "write in English" instructions), a context that had lost one still spelled its
value in the other: the reply's term counted as held though the fact was gone, and
recall could not see the loss (issue 20: 2 of 48 such requests). So every statement of a
session, a new fact or a change of plan, takes a value no earlier statement of that slot
used, and the pools are built so that a value is one distinctive term
(``pruner.replay.terms``) that the generator's filler text never writes: dates, amounts
with cents, region codes, and names that are no word of ``text``'s lists.

A slot whose pool is used up takes no more statements: the generator states a fact of
another slot instead (dates and amounts never run out), so a value is unique in every
session, whatever its length.

>>> import random
>>> pool = ValuePool()
>>> values = [pool.take(random.Random(1), "language") for _ in range(len(LANGUAGES))]
>>> len(set(values)) == len(LANGUAGES), pool.take(random.Random(1), "language")
(True, None)
"""

from __future__ import annotations

import datetime
import random

LANGUAGES = (
    "English", "German", "Spanish", "French", "Italian", "Portuguese", "Dutch", "Polish", "Swedish",
    "Danish", "Finnish", "Norwegian", "Czech", "Slovak", "Greek", "Turkish", "Japanese", "Korean",
    "Hungarian", "Romanian", "Ukrainian", "Indonesian", "Vietnamese", "Hebrew", "Arabic", "Hindi",
    "Bengali", "Thai", "Malay", "Tagalog", "Swahili", "Catalan", "Croatian", "Serbian", "Bulgarian",
    "Slovenian", "Estonian", "Latvian", "Lithuanian", "Icelandic", "Welsh", "Irish", "Basque", "Galician",
)
FORMATS = (
    "Parquet", "XLSX", "JSON", "NDJSON", "JSONL", "Avro", "YAML", "TOML", "Feather", "Arrow", "SQLite",
    "DuckDB", "HDF5", "NetCDF", "Protobuf", "MessagePack", "BSON", "CBOR", "Excel", "Stata", "SPSS",
    "Pickle", "GeoJSON", "Markdown",
)
TEAMS = (
    "Aurora", "Borealis", "Cobalt", "Dynamo", "Ember", "Falcon", "Granite", "Harbor", "Indigo", "Juniper",
    "Keystone", "Lumen", "Meridian", "Nimbus", "Onyx", "Pioneer", "Quartz", "Redwood", "Sierra", "Tundra",
    "Umbra", "Vertex", "Willow", "Zephyr", "Atlas", "Cedar", "Fjord", "Glacier", "Horizon", "Jasper",
    "Kestrel", "Lantern", "Mosaic", "Nova", "Orbit", "Prism", "Raven", "Saffron", "Tempest", "Vanguard",
)
REGIONS = tuple(f"{area}-{side}-{n}" for area in ("eu", "us", "ap", "sa", "ca", "me", "af")
                for side in ("west", "east", "central", "north", "south") for n in (1, 2, 3))
DEADLINES = tuple((datetime.date(2027, 1, 4) + datetime.timedelta(days=d)).isoformat() for d in range(730))
BUDGETS = tuple(f"${n:,}.00" for n in range(1_000, 100_001, 250))

# (slot, what it is called in a reference, statement, values, paraphrase)
USER_FACT_SLOTS = (
    ("export_format", "format", "Please export everything as {v}", FORMATS,
     "Which format did I mention before? Use that one."),
    ("deadline", "deadline", "The deadline for this work is {v}", DEADLINES,
     "When did I say this was due? Plan around that."),
    ("budget", "budget", "Our budget for this is capped at {v}", BUDGETS,
     "Keep within the spending limit I gave you a while ago."),
    ("region", "region", "We deploy only in {v}", REGIONS, "Where did I say we deploy? Stick to it."),
    ("owner", "owner", "The {v} team owns this system", TEAMS, "Loop in the team I said owns this."),
    ("language", "language", "Write all customer-facing text in {v}", LANGUAGES,
     "Use the language I asked for earlier."),
)
_POOLS = {slot: values for slot, _, _, values, _ in USER_FACT_SLOTS}


class ValuePool:
    """The values a session's statements have used, per slot (causal: only the past decides)."""

    def __init__(self) -> None:
        self.used: dict[str, set[str]] = {slot: set() for slot in _POOLS}

    def left(self, slot: str) -> int:
        return len(_POOLS[slot]) - len(self.used[slot])

    def take(self, rng: random.Random, slot: str) -> str | None:
        """A value of ``slot`` no statement used yet (then used), or None when the pool is used up.
        The pool is walked in its own order, never a set's: the same seed gives the same values."""
        unused = [v for v in _POOLS[slot] if v not in self.used[slot]]
        if not unused:
            return None
        value = unused[rng.randrange(len(unused))]
        self.used[slot].add(value)
        return value
