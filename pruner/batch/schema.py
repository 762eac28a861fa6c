"""The Parquet tables a batch writes, as explicit Arrow schemas.

Every partition file is written with these schemas, so a column that is null in
one partition (``error``) still has its type, and pandas, DuckDB and Spark read
the folder of partitions as one table. Only portable types are used: strings,
64-bit integers, doubles (no unsigned integers, dictionaries or timestamps).

Per-rule counts are one column per rule name a decision can carry
(``pruner.rules.EXPLANATIONS``), named ``rule_<name>``, so the schema is fixed
for a pruner version; the manifest records it and a rerun refuses a folder made
with another one.

>>> "rule_superseded_call" in SESSIONS.names and "rule_near_duplicate" in SESSIONS.names
True
>>> DECISIONS.names
['session_id', 'position', 'message_id', 'status', 'rule', 'related']
"""

from __future__ import annotations

import pyarrow as pa

from ..model import STATUSES
from ..rules import EXPLANATIONS

TABLES = ("sessions", "decisions", "replay")

#: Decision rule names, in a fixed order; a rule outside it is counted in ``rule_other``.
RULE_NAMES: tuple[str, ...] = tuple(sorted(EXPLANATIONS))
RULE_COLUMNS: dict[str, str] = {name: f"rule_{name}" for name in RULE_NAMES}
OTHER_RULE_COLUMN = "rule_other"

_INT = pa.int64()
_STR = pa.string()
_FLOAT = pa.float64()

SESSIONS = pa.schema([
    pa.field("session_id", _STR, nullable=False),  # stable: file identity + dialogue
    pa.field("source", _STR, nullable=False),  # absolute path of the input file
    pa.field("digest", _STR, nullable=False),  # SHA-256 of the file's bytes
    pa.field("dialogue", _INT),  # 0-based dialogue in the file; null when the file failed to load
    pa.field("dialogues", _INT),  # dialogues the file holds; null when it failed to load
    pa.field("name", _STR),
    pa.field("format", _STR),
    pa.field("messages_before", _INT),
    pa.field("messages_after", _INT),
    pa.field("tokens_before", _INT),
    pa.field("tokens_after", _INT),
    pa.field("placeholder_tokens", _INT),
    pa.field("reduction", _FLOAT),  # share of tokens removed, 0..1 (negative when placeholders cost more)
    *[pa.field(status, _INT) for status in STATUSES],  # messages per status
    *[pa.field(column, _INT) for column in RULE_COLUMNS.values()],  # decisions per rule
    pa.field(OTHER_RULE_COLUMN, _INT),
    pa.field("rounds", _INT),
    pa.field("skipped_lines", _INT),  # unreadable JSONL lines skipped (only with --skip-bad-lines)
    pa.field("counter", _STR),  # the token counter, e.g. tiktoken/o200k_base
    pa.field("prune_ms", _FLOAT),  # prune() of this session, wall clock
    pa.field("load_ms", _FLOAT),  # reading and parsing the whole file (same on each of its dialogues)
    pa.field("error", _STR),  # null unless the file or this dialogue failed
    pa.field("replay_error", _STR),  # with --replay: null unless the replay of this session failed
    pa.field("partition", _STR, nullable=False),
])

DECISIONS = pa.schema([
    pa.field("session_id", _STR, nullable=False),
    pa.field("position", _INT, nullable=False),  # the message's position in its session
    pa.field("message_id", _STR, nullable=False),
    pa.field("status", _STR, nullable=False),
    pa.field("rule", _STR, nullable=False),  # "" when simply kept
    pa.field("related", _STR),
])

#: With ``--replay``: one row per session and strategy (``pruner.replay``), billed request by request.
REPLAY = pa.schema([
    pa.field("session_id", _STR, nullable=False),
    pa.field("strategy", _STR, nullable=False),
    pa.field("requests", _INT, nullable=False),  # model calls in the session
    pa.field("input_tokens", _INT, nullable=False),  # provider tokens sent, summed over requests
    pa.field("cached_tokens", _INT, nullable=False),
    pa.field("written_tokens", _INT, nullable=False),  # cache writes
    pa.field("fresh_tokens", _INT, nullable=False),
    pa.field("output_tokens", _INT, nullable=False),
    pa.field("dollars", _FLOAT, nullable=False),
    pa.field("peak_context", _INT, nullable=False),  # largest single request, provider tokens
    pa.field("rejected", _INT, nullable=False),  # requests over the model's window
    # Could the strategy have run (issue 19)? False: a request over the window (``infeasible_from``, its dollars
    # count the requests before it) or not applicable (clear_tool_uses off Anthropic); the reason in words.
    pa.field("feasible", pa.bool_(), nullable=False),
    pa.field("infeasible_from", _INT),
    pa.field("infeasible_reason", _STR, nullable=False),
    pa.field("prices", _STR, nullable=False),  # which prices the dollars use (model, source, date)
    # Context recall (pruner.replay.recall): the share of the terms the recorded replies used that this
    # strategy's contexts held; the counts behind it.
    pa.field("context_recall", _FLOAT, nullable=False),
    pa.field("used_terms", _INT, nullable=False),
    pa.field("terms_missing", _INT, nullable=False),
])

SCHEMAS = {"sessions": SESSIONS, "decisions": DECISIONS, "replay": REPLAY}


def schema_fingerprint() -> list[str]:
    """The column names and types of every table, for the manifest."""
    return [f"{table}.{field.name}:{field.type}" for table in TABLES for field in SCHEMAS[table]]
