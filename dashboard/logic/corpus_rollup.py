"""The Corpus page's roll-ups of a logs folder: the same groupings and figures as ``pruner logs report``.

Nothing is summed here: each roll-up is ``pruner.logs.report.report`` over the rows the page's filters
keep (its groups partition them, so they sum to the page's bill), turned into the page's table. The
URL names the grouping (``?by=week``); a name the registry does not know falls back to the default.

>>> import pandas as pd
>>> frame = pd.DataFrame([{"session_key": "a", "billed": 2.0, "start": "2026-03-02T10:00:00Z"},
...                       {"session_key": "b", "billed": 1.0, "start": "2026-03-09T10:00:00Z"}])
>>> table(rollup(frame, "week"))[["week", "sessions", "billed"]].values.tolist()
[['2026-03-02', 1, '$2.00'], ['2026-03-09', 1, '$1.00'], ['total', 2, '$3.00']]
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd

from pruner.logs.answer import RECORDING
from pruner.logs.groupings import GROUPINGS, NO_VALUE
from pruner.logs.report import Report, report
from pruner.money import money

#: The groupings, in the command's order; the first is the default.
CHOICES: tuple[str, ...] = tuple(GROUPINGS)
#: The ones the page draws as a chart over time (few groups, in time order).
CHARTED = ("week", "month")
#: The URL parameter that names the grouping.
PARAM = "by"


def grouping_from_link(link: Mapping[str, str] | None) -> str | None:
    """The grouping a link names, if it is one (else None: the page keeps its own)."""
    value = (link or {}).get(PARAM)
    return value if value in GROUPINGS else None


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows as the table's dicts: pandas' NaN for a missing cell becomes None again."""
    return [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in frame.to_dict("records")]


def rollup(frame: pd.DataFrame, by: str) -> Report:
    return report(_records(frame), by)


def table(r: Report) -> pd.DataFrame:
    """One line per group and the total: the bill's figures, the best strategy, then each strategy's dollars
    and mean recall over the sessions where it is feasible and applicable (money as text, "-" where none)."""
    lines = []
    for g in (*r.groups, r.total):
        share = g.cache_read_share
        line: dict[str, Any] = {r.by: g.key, "sessions": g.answer.sessions, "requests": g.requests,
                                "billed": money(g.answer.billed),
                                "cache read": "-" if share is None else f"{100 * share:.1f} %",
                                "best": g.best or "-"}
        sums = {s.strategy: s for s in g.answer.sums}
        for name in r.strategies:
            if name == RECORDING:
                continue
            s = sums.get(name)
            line[name] = "-" if s is None or not s.sessions else money(s.dollars) + (
                "" if s.recall is None else f" ({100 * s.recall:.1f} %)")
        lines.append(line)
    return pd.DataFrame(lines)


def chart_frame(r: Report) -> pd.DataFrame:
    """``period``, ``billed``, ``cache_read_share`` (None: not known), ``best``, ``sessions``: one row per
    group in time order, the groups without a time left out (they are in the table)."""
    rows = [{"period": g.key, "billed": g.answer.billed, "cache_read_share": g.cache_read_share,
             "best": g.best or "-", "sessions": g.answer.sessions} for g in r.groups if g.key != NO_VALUE]
    return pd.DataFrame(rows, columns=["period", "billed", "cache_read_share", "best", "sessions"])
