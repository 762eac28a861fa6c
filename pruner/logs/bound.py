"""The hindsight bound over a folder of sessions (``pruner logs --bound``' columns): at most how much could
have been saved, and how much the online strategy (``cache_aware``) would have saved, over the same sessions.

As the folder's strategy sums (``pruner.logs.answer``), a sum counts only the sessions where every figure
it adds exists: the bound computed and feasible (``bound_dollars`` not null), and the online strategy
feasible and applicable with dollars; it names how many sessions that is and why the others are left out.
Savings are against each session's modelled recording (``modelled``), as every strategy's are. The Corpus
page and ``pruner logs`` print these; neither adds its own.

>>> rows = [{"modelled": 10.0, "bound_version": "1", "bound_dollars": 8.0, "cache_aware_dollars": 9.0,
...          "cache_aware_feasible": True, "cache_aware_applicable": True},
...         {"modelled": 2.0, "bound_version": "1", "bound_dollars": None, "cache_aware_dollars": 2.0,
...          "cache_aware_feasible": True, "cache_aware_applicable": True}]
>>> text = bound_answer(rows).text()
>>> text[:75]
'Across 1 of 2 sessions with the bound: at most $2.00 could have been saved '
>>> text[text.index(";"):]
'; cache_aware would have saved $1.00 ($9.00). Left out: 1 with no feasible schedule.'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping

from ..money import money
from ..replay.hindsight import ONLINE
from .answer import _number  # one reading of a table cell as a number (NaN and booleans are missing)

#: The version of the bound a row's ``bound_*`` columns were computed with; a row of another is computed
#: again when ``pruner logs --bound`` runs (bump it when the bound's search or figures change).
BOUND_VERSION = "2"  # 2: a beam compacts only from its cheapest state (issue 30)


def _online_dollars(row: Mapping[str, Any], online: str) -> float | None:
    if row.get(f"{online}_applicable") is False or not bool(row.get(f"{online}_feasible")):
        return None
    return _number(row.get(f"{online}_dollars"))


def main_model(row: Mapping[str, Any]) -> str:
    """The model that made most of a session's requests (``models`` JSON), "" when none is recorded."""
    try:
        models = json.loads(row.get("models") or "{}")
    except (TypeError, ValueError):
        return ""
    return max(sorted(models), key=lambda m: models[m]) if isinstance(models, dict) and models else ""


@dataclass(frozen=True)
class BoundSum:
    online: str
    computed: int  # rows whose bound was computed
    sessions: int  # of those, with the bound's figure and the online strategy's
    no_schedule: int  # computed, but no feasible schedule (or no modelled recording)
    online_missing: int  # a bound, but the online strategy infeasible, not applicable or not replayed
    modelled: float  # the modelled recording over ``sessions``
    bound: float
    online_dollars: float

    @property
    def at_most(self) -> float:
        return round(self.modelled - self.bound, 6)

    @property
    def online_saving(self) -> float:
        return round(self.modelled - self.online_dollars, 6)

    def text(self) -> str:
        if not self.computed:
            return ("The hindsight bound: not computed for these sessions (pruner logs --bound computes it; "
                    "slow today: see docs/own-logs.md).")
        left = [f"{n:,} {why}" for n, why in ((self.no_schedule, "with no feasible schedule"),
                                            (self.online_missing, f"where {self.online} could not run")) if n]
        tail = f" Left out: {'; '.join(left)}." if left else ""
        if not self.sessions:
            return f"The hindsight bound: no session has both its figure and {self.online}'s.{tail}"
        saved = (f"at most {money(self.at_most)} could have been saved (the cheapest schedules found in hindsight, "
                 f"{money(self.bound)} against {money(self.modelled)} modelled)" if self.at_most > 0 else
                 f"nothing could have been saved (the cheapest schedules found in hindsight, {money(self.bound)}, "
                 f"{money(-self.at_most)} above the {money(self.modelled)} modelled)")
        online = (f"would have saved {money(self.online_saving)}" if self.online_saving >= 0 else
                  f"would have cost {money(-self.online_saving)} more")
        return (f"Across {self.sessions:,} of {self.computed:,} sessions with the bound: {saved}; {self.online} "
                f"{online} ({money(self.online_dollars)}).{tail}")


def online_of(rows: list[Mapping[str, Any]]) -> str:
    """The online strategy the rows hold, first of ``ONLINE`` present (``cache_aware``)."""
    return next((n for n in ONLINE if any(f"{n}_dollars" in r for r in rows)), ONLINE[0])


def _paired(rows: Iterable[Mapping[str, Any]], online: str
            ) -> Iterator[tuple[Mapping[str, Any], float, float, float]]:
    """(row, modelled, bound, online dollars) of every row with all three figures."""
    for r in rows:
        modelled, bound, dollars = _number(r.get("modelled")), _number(r.get("bound_dollars")), \
            _online_dollars(r, online)
        if modelled is not None and bound is not None and dollars is not None:
            yield r, modelled, bound, dollars


def bound_answer(rows: Iterable[Mapping[str, Any]], online: str | None = None) -> BoundSum:
    rows = [r for r in rows if not isinstance(r.get("error"), str) and r.get("bound_version")]
    online = online or online_of(rows)
    with_bound = [r for r in rows if _number(r.get("bound_dollars")) is not None
                  and _number(r.get("modelled")) is not None]
    paired = list(_paired(rows, online))
    return BoundSum(online, len(rows), len(paired), len(rows) - len(with_bound), len(with_bound) - len(paired),
                    round(sum(p[1] for p in paired), 6), round(sum(p[2] for p in paired), 6),
                    round(sum(p[3] for p in paired), 6))


def bound_by(rows: Iterable[Mapping[str, Any]], group: str, online: str | None = None) -> list[dict[str, Any]]:
    """Per project (``group="project"``) or model (``"model"``: the session's main model): sessions, the
    most that could have been saved, what the online strategy would have saved; largest first."""
    rows = [r for r in rows if not isinstance(r.get("error"), str) and r.get("bound_version")]
    online = online or online_of(rows)
    out: dict[str, dict[str, Any]] = {}
    for r, modelled, bound, dollars in _paired(rows, online):
        name = main_model(r) if group == "model" else str(r.get(group) or "")
        g = out.setdefault(name, {group: name, "sessions": 0, "modelled": 0.0, "bound": 0.0, online: 0.0})
        g["sessions"] += 1
        g["modelled"] += modelled
        g["bound"] += bound
        g[online] += dollars
    groups = list(out.values())
    for g in groups:
        g["at most saved"] = round(g["modelled"] - g["bound"], 6)
        g[f"{online} saved"] = round(g["modelled"] - g[online], 6)
    return sorted(groups, key=lambda g: (-g["at most saved"], g[group]))


def largest_gaps(rows: Iterable[Mapping[str, Any]], online: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """The sessions where the online strategy is furthest above the bound (its dollars minus the bound's)."""
    rows = [r for r in rows if not isinstance(r.get("error"), str) and r.get("bound_version")]
    online = online or online_of(rows)
    gaps = [{"session_key": r["session_key"], "project": r.get("project") or "", "model": main_model(r),
             "modelled": modelled, "bound": bound, online: dollars, "gap": round(dollars - bound, 6)}
            for r, modelled, bound, dollars in _paired(rows, online)]
    return sorted(gaps, key=lambda g: (-g["gap"], g["session_key"]))[:limit]
