"""The groupings of ``pruner logs report --by NAME`` and of the Corpus page's roll-ups: one registry, name -> rule.

A grouping gives every row of the logs table (one row per session, ``pruner.logs.table``) exactly one
key, so the groups of any grouping partition the table and their sums are the table's sums. A session
is never split: the strategies' dollars and recall are measures of a whole session's replay (a
strategy's context at a request depends on every request before it), so a session counts, whole, in
the group of

* ``day`` / ``week`` / ``month``: the UTC day, week (the Monday it begins, ISO 8601, as ccusage's
  weekly reports across agents begin theirs: ``rust/crates/ccusage/src/adapter/all/loader.rs`` line 629,
  ryoppippi/ccusage commit 5816e640e8824986f33427203da164b01394a161, 2026-06-13; its Claude-only
  ``weekly`` defaults to Sunday, ``rust/crates/ccusage-cli/src/parser.rs`` line 372) or month its first
  recorded request fell in (``start``; the Corpus page's day is the same);
* ``block``: the 5-hour billing window ccusage computes (``identify_session_blocks``,
  ``rust/crates/ccusage/src/blocks.rs`` lines 17-67 at the same commit): entries sorted by time; the
  first opens a block at its time floored to the hour; a later entry opens a new block (again floored to
  its hour) when it is more than 5 hours after the block's start or more than 5 hours after the previous
  entry; ccusage's gap blocks hold no entry and so no group here. ccusage's entries are requests; here
  they are sessions, at their start, so a session that runs past its block's end counts in the block it
  started in. Exact per-request blocks would need each request's time and dollars in the row (the bill
  has them, ``BilledRequest.time``); they are not stored, because the strategy figures could not follow
  them;
* ``project`` / ``agent``: the row's own column;
* ``model``: the session's main model: the one with the most billed requests in ``billed_by_model``
  (ties: the larger dollars, then the name), else the most requests in ``models``.

* ``person``: the row's ``person`` (``pruner logs --homes``); a session of this machine's own home folder
  (``""``, or null in a table written before the column) is in ``THIS_MACHINE``.

A row without the field a grouping reads is in the group ``NO_VALUE`` (never dropped). Another grouping
is one more entry in ``GROUPINGS``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Mapping, Sequence

#: The key of a row that lacks what the grouping reads (no recorded time, no model, ...).
NO_VALUE = "(none)"
#: ccusage's block length (``DEFAULT_SESSION_DURATION_HOURS``, rust/crates/ccusage/src/main.rs line 61).
BLOCK_HOURS = 5

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Grouping:
    name: str
    help: str
    keys: Callable[[Sequence[Row]], list[str]]  # one key per row, in the rows' order


def _when(row: Row) -> datetime | None:
    start = row.get("start")
    if not isinstance(start, str):
        return None
    try:
        when = datetime.fromisoformat(start.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(timezone.utc) if when.tzinfo else when.replace(tzinfo=timezone.utc)


def per_row(key: Callable[[Row], str | None]) -> Callable[[Sequence[Row]], list[str]]:
    """A grouping whose key is a function of the row alone."""
    def keys(rows: Sequence[Row]) -> list[str]:
        return [k if isinstance(k := key(r), str) and k else NO_VALUE for r in rows]
    return keys


def _timed(fmt: Callable[[datetime], str]) -> Callable[[Row], str | None]:
    def key(row: Row) -> str | None:
        when = _when(row)
        return None if when is None else fmt(when)
    return key


def _week(when: datetime) -> str:
    return (when.date() - timedelta(days=when.weekday())).isoformat()


def _column(name: str) -> Callable[[Row], str | None]:
    def key(row: Row) -> str | None:
        value = row.get(name)
        return value if isinstance(value, str) else None
    return key


#: The ``person`` of a session found in this machine's own home folder (a run without ``--homes``).
THIS_MACHINE = "(this machine)"


def _person(row: Row) -> str:
    """The sub-folder of the team's folder the session was found under (``pruner.logs.homes``); a row of a
    plain run (``""``) or of a table written before the column (null) is this machine's."""
    value = row.get("person")
    return value if isinstance(value, str) and value else THIS_MACHINE


def main_model(row: Row) -> str | None:
    """The model most of the session's billed requests went to (see the module)."""
    for column, rank in (("billed_by_model", _billed_rank), ("models", _count_rank)):
        raw = row.get(column)
        try:
            held = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            held = None
        if isinstance(held, dict) and held:
            return str(min(held.items(), key=rank)[0])
    return None


def _billed_rank(item: tuple[str, Any]) -> tuple[float, float, str]:
    v = item[1] if isinstance(item[1], dict) else {}
    return (-float(v.get("requests") or 0), -float(v.get("dollars") or 0.0), item[0])


def _count_rank(item: tuple[str, Any]) -> tuple[float, float, str]:
    return (-float(item[1]) if isinstance(item[1], (int, float)) else 0.0, 0.0, item[0])


def block_keys(rows: Sequence[Row]) -> list[str]:
    """ccusage's 5-hour blocks over the rows' start times (see the module): each row's block start, ISO UTC."""
    limit = timedelta(hours=BLOCK_HOURS)
    out = [NO_VALUE] * len(rows)
    timed = sorted((when, i) for i, r in enumerate(rows) if (when := _when(r)) is not None)
    start: datetime | None = None
    last: datetime | None = None
    for when, i in timed:
        if start is None or last is None or when - start > limit or when - last > limit:
            start = when.replace(minute=0, second=0, microsecond=0)
        last = when
        out[i] = start.strftime("%Y-%m-%dT%H:%MZ")
    return out


GROUPINGS: dict[str, Grouping] = {g.name: g for g in (
    Grouping("day", "the UTC day the session started", per_row(_timed(lambda w: w.date().isoformat()))),
    Grouping("week", "the week (from its Monday, UTC) the session started", per_row(_timed(_week))),
    Grouping("month", "the month (UTC) the session started", per_row(_timed(lambda w: w.strftime("%Y-%m")))),
    Grouping("block", "ccusage's 5-hour billing block the session started in", block_keys),
    Grouping("project", "the folder the agent filed the session under", per_row(_column("project"))),
    Grouping("model", "the session's main model (most billed requests)", per_row(main_model)),
    Grouping("agent", "the agent that recorded the session", per_row(_column("agent"))),
    Grouping("person", "the person or machine whose folder held it (pruner logs --homes)", per_row(_person)),
)}


def group_keys(name: str, rows: Sequence[Row]) -> list[str]:
    """Each row's key under grouping ``name`` (one of ``GROUPINGS``)."""
    return GROUPINGS[name].keys(rows)
