"""``pruner logs report``: the logs table rolled up by day, week, month, block, project, model or agent.

Read from the table only (``pruner.logs.table``; no log is read again). Per group: the sessions, their
requests, the dollars billed, the cache-read share (cache-read input tokens over all input tokens:
uncached + cache reads + cache writes, from the bill's own counts, ``pruner.logs.money``), each
strategy's dollars and mean recall over the sessions where it is feasible and applicable, and the best
feasible strategy at the recall bar. Every figure of a group is ``pruner.logs.answer.folder_answer``
over the group's rows, and the best strategy is ``FolderAnswer.best``: the folder verdict's own rule,
not a second one. Each grouping gives every row one key (``pruner.logs.groupings``), so the groups of
every grouping sum to the table's total (tests/unit/logs/test_logs_report.py recomputes it from the raw files).

Rows marked removed (their file is gone) are counted: the money was spent. Rows that could not be read
(``error``) have no bill and count nowhere, as in the folder answer.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

from ..money import money
from ..replay import strategy_names
from ..replay.verdict import DEFAULT_MIN_RECALL
from .answer import RECORDING, FolderAnswer, _number, folder_answer
from .groupings import GROUPINGS, NO_VALUE, group_keys

Row = Mapping[str, Any]
#: The table's columns a report reads (everything else stays on disk).
TOKEN_COLUMNS = ("input_tokens", "cache_read_tokens", "cache_write_tokens")


@dataclass(frozen=True)
class Group:
    key: str
    answer: FolderAnswer  # the group's figures (sessions, billed, strategies' sums)
    requests: int
    input_tokens: int | None  # None: a row of the group has no token counts (a table of an earlier version)
    cache_read_tokens: int | None
    best: str | None  # FolderAnswer.best's strategy, None where the verdict names none

    @property
    def cache_read_share(self) -> float | None:
        if self.input_tokens is None or self.cache_read_tokens is None or not self.input_tokens:
            return None
        return self.cache_read_tokens / self.input_tokens

    def as_dict(self, strategies: Sequence[str]) -> dict[str, Any]:
        """The group's figures, with the four cells of every one of ``strategies`` (null where it has none)."""
        out: dict[str, Any] = {"group": self.key, "sessions": self.answer.sessions, "billed": self.answer.billed,
                               "requests": self.requests, "input_tokens": self.input_tokens,
                               "cache_read_tokens": self.cache_read_tokens, "cache_read_share": self.cache_read_share,
                               "modelled": self.answer.modelled, "best": self.best}
        sums = {s.strategy: s for s in self.answer.sums}
        for name in strategies:
            s = sums.get(name)
            out[f"{name}_dollars"] = s.dollars if s is not None and s.sessions else None
            out[f"{name}_recall"] = None if s is None else s.recall
            out[f"{name}_sessions"] = 0 if s is None else s.sessions
            out[f"{name}_replayed"] = 0 if s is None else s.replayed
        return out


@dataclass(frozen=True)
class Report:
    by: str
    groups: tuple[Group, ...]  # sorted by key (time groupings in time order), NO_VALUE last
    total: Group
    strategies: tuple[str, ...]
    prices: tuple[str, ...]  # which prices the dollars are at (the rows' ``prices`` labels)
    min_recall: float

    def as_dict(self) -> dict[str, Any]:
        return {"by": self.by, "prices": list(self.prices), "min_recall": self.min_recall,
                "strategies": list(self.strategies), "groups": [g.as_dict(self.strategies) for g in self.groups],
                "total": self.total.as_dict(self.strategies)}


def _whole(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


def _group(key: str, rows: Sequence[Row], strategies: Sequence[str], min_recall: float) -> Group:
    answer = folder_answer(rows, strategies)
    read = [r for r in rows if not isinstance(r.get("error"), str)]
    requests = sum((_whole(r.get("requests_main")) or 0) + (_whole(r.get("requests_subagent")) or 0) for r in read)
    tokens: dict[str, int | None] = {}
    for column in TOKEN_COLUMNS:
        cells = [_whole(r.get(column)) for r in read if _number(r.get("billed")) is not None]
        tokens[column] = None if any(c is None for c in cells) else sum(c or 0 for c in cells)
    every = None if any(tokens[c] is None for c in TOKEN_COLUMNS) else sum(tokens[c] or 0 for c in TOKEN_COLUMNS)
    best = answer.best(min_recall)
    return Group(key, answer, requests, every, None if every is None else tokens["cache_read_tokens"],
                 None if best is None else best.strategy)


def in_range(row: Row, since: str | None, until: str | None) -> bool:
    """The session started on a day from ``since`` to ``until`` (YYYY-MM-DD, UTC, both included)."""
    if since is None and until is None:
        return True
    start = row.get("start")
    if not isinstance(start, str):
        return False  # a session with no recorded time is in no range of days
    day = start[:10]
    return (since is None or day >= since) and (until is None or day <= until)


def table_strategies(rows: Iterable[Row]) -> tuple[str, ...]:
    """The strategies the rows hold dollars for, in the registry's order."""
    rows = list(rows)
    return tuple(s for s in strategy_names() if any(_number(r.get(f"{s}_dollars")) is not None for r in rows))


def report(rows: Iterable[Row], by: str, *, since: str | None = None, until: str | None = None,
           min_recall: float = DEFAULT_MIN_RECALL) -> Report:
    """The roll-up of ``rows`` (the logs table's, as dicts) by grouping ``by`` (a name of ``GROUPINGS``)."""
    if by not in GROUPINGS:
        raise ValueError(f"{by!r} is not a grouping; choose one of {', '.join(GROUPINGS)}")
    kept = [r for r in rows if in_range(r, since, until)]
    kept.sort(key=lambda r: str(r.get("session_key")))  # the table's order, whatever order they came in
    strategies = table_strategies(r for r in kept if not isinstance(r.get("error"), str))
    members: dict[str, list[Row]] = {}
    for key, r in zip(group_keys(by, kept), kept):
        members.setdefault(key, []).append(r)
    order = sorted(members, key=lambda k: (k == NO_VALUE, k))
    prices = tuple(sorted({p for r in kept if isinstance(p := r.get("prices"), str) and p}))
    groups = [_group(k, members[k], strategies, min_recall) for k in order]
    total = _group("total", kept, strategies, min_recall)
    billed = _apportion([_billed(members[k]) for k in order])
    groups = [replace(g, answer=replace(g.answer, billed=b)) for g, b in zip(groups, billed)]
    total = replace(total, answer=replace(total.answer, billed=_micro(sum(round(b * 1e6) for b in billed))))
    return Report(by, tuple(groups), total, strategies, prices, min_recall)


def _billed(rows: Sequence[Row]) -> float:
    """The group's bill, unrounded: every read row's ``billed`` (``folder_answer``'s sum, before its rounding)."""
    return math.fsum(_number(r.get("billed")) or 0.0 for r in rows if not isinstance(r.get("error"), str))


def _micro(units: int) -> float:
    return round(units / 1e6, 6)


def _apportion(values: Sequence[float]) -> list[float]:
    """``values`` (dollars, unrounded) to millionths of a dollar (the six places a report prints), each the
    floor of its value or one millionth more, the largest remainders first, so that they add up exactly to
    their unrounded sum rounded (the total's figure): rounding each group by itself left 30 day groups
    $0.000012 short of their total."""
    exact = [v * 1e6 for v in values]
    floors = [math.floor(x) for x in exact]
    missing = round(math.fsum(exact)) - sum(floors)
    by_remainder = sorted(range(len(exact)), key=lambda i: (-(exact[i] - floors[i]), i))
    for i in by_remainder[:max(0, missing)]:
        floors[i] += 1
    return [_micro(u) for u in floors]


# -- how a report is written: text for a person, JSON and CSV for a program --

def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def _cell(g: Group, strategy: str) -> str:
    s = next((x for x in g.answer.sums if x.strategy == strategy), None)
    if s is None or not s.sessions:
        return "-"
    recall = "" if s.recall is None else f" {100 * s.recall:.1f}%"
    return money(s.dollars) + recall


def _table(header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in (header, *body)) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
    return [line(header), line(["-" * w for w in widths]), *(line(row) for row in body)]


#: What a grouping's key means, where the name alone does not say it.
_RULES = {"block": " in ccusage's 5-hour blocks over the sessions' starts", "week": ", weeks from Monday",
          "model": ": its main model is the one most of its billed requests went to"}


def text(r: Report) -> list[str]:
    """Two tables: the bill per group, then each strategy's dollars and recall per group."""
    if not r.total.answer.sessions:
        return ["No session in the table matches (run pruner logs first, or widen --since/--until)."]
    groups = [*r.groups, r.total]
    head = [r.by, "sessions", "requests", "billed", "cache read", "best at recall bar"]
    body = [[g.key, f"{g.answer.sessions:,}", f"{g.requests:,}", money(g.answer.billed), _share(g.cache_read_share),
             g.best or "-"] for g in groups]
    out = _table(head, body)
    shown = [s for s in r.strategies if s != RECORDING]
    if shown:
        out += ["", f"Each strategy's dollars and mean context recall over the sessions of the group where it is "
                    f"feasible and applicable (best: the largest measurable saving keeping ≥ "
                    f"{100 * r.min_recall:g} % recall):"]
        out += _table([r.by, "modelled", *shown],
                      [[g.key, "-" if g.answer.modelled is None else money(g.answer.modelled),
                        *(_cell(g, s) for s in shown)] for g in groups])
        out.append("modelled: the recording under pruner's cache model, over the group's replayed sessions; a "
                   "strategy's saving is against the modelled recording of the sessions it covers.")
    else:
        out += ["", "No strategy was replayed (the table was made with --bill-only): no strategy columns."]
    out.append("")
    if any(g.cache_read_share is None and g.answer.billed for g in groups):
        out.append("cache read '-': rows billed before the token columns existed; run pruner logs once to fill them.")
    out.append(f"A session counts whole in the group of its start (UTC){_RULES.get(r.by, '')}; every grouping "
               "sums to the total.")
    out.append("Prices: " + ("; ".join(r.prices) if r.prices else "none recorded") + ".")
    return out


def _inert(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (a project folder named ``=HYPERLINK(...)``) is
    quoted as text: the names come from untrusted folders and transcripts."""
    return "'" + value if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def as_csv(r: Report) -> str:
    rows = [g.as_dict(r.strategies) for g in (*r.groups, r.total)]
    names = list(rows[0])
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else _inert(v) for k, v in row.items()})
    return buffer.getvalue()


def as_json(r: Report) -> str:
    return json.dumps(r.as_dict(), indent=2, sort_keys=True, ensure_ascii=False)
