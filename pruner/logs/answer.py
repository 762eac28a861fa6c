"""The answer over a folder of sessions (``pruner logs``' table): the bill, the modelled recording, and per
strategy its dollars summed over only the sessions where it is feasible and applicable, with its saving
against the modelled recording of those same sessions.

One figure per fact, as for one session (``pruner.replay.answer``): a strategy's sum never includes a
session it could not run on (a partial bill up to a request over the window, or a feature of another
provider's API), and it says how many sessions it covers: "full: $79.42 over 7 of 8 sessions; not
possible on 1". The Corpus page and ``pruner logs`` print these sums; neither adds its own.

>>> rows = [{"billed": 1.0, "modelled": 1.0, "full_dollars": 1.0, "full_feasible": True,
...          "full_applicable": True, "full_recall": 1.0},
...         {"billed": 2.0, "modelled": 2.0, "full_dollars": 0.5, "full_feasible": False,
...          "full_applicable": True, "full_recall": 1.0}]
>>> folder_answer(rows, ["full"]).sums[0].text()
'full: $1.00 over 1 of 2 sessions; not possible on 1'
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..money import money
from ..replay.answer import BAND_FLOOR, rank_key, signed
from ..replay.verdict import DEFAULT_MIN_RECALL

RECORDING = "as_recorded"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:  # NaN: missing
        return None
    return float(value)


@dataclass(frozen=True)
class FolderSum:
    strategy: str
    dollars: float  # over the sessions where it is feasible and applicable
    modelled: float  # the modelled recording over those same sessions
    sessions: int  # feasible and applicable
    replayed: int  # sessions that replayed it
    infeasible: int  # a request over the window
    not_applicable: int  # another provider's API feature
    recall: float | None  # the mean over those sessions
    band: float

    @property
    def saving(self) -> float:
        return round(self.modelled - self.dollars, 6)

    @property
    def share(self) -> float:
        return self.saving / self.modelled if self.modelled else 0.0

    @property
    def measurable(self) -> bool:
        return self.sessions > 0 and abs(self.share) > self.band

    def text(self) -> str:
        """``full: $79.42 over 7 of 8 sessions; not possible on 1`` (and where it does not apply)."""
        if not self.sessions:  # no sum at all: "$0.00 over 0 sessions" would read as free
            out = f"{self.strategy}: could not run on any of the {self.replayed:,} sessions"
        else:
            out = f"{self.strategy}: {money(self.dollars)} over {self.sessions:,} of {self.replayed:,} sessions"
        if self.infeasible:
            out += f"; not possible on {self.infeasible:,}"
        if self.not_applicable:
            out += f"; does not apply on {self.not_applicable:,}"
        return out

    def change(self) -> str:
        return f"{signed(-100 * self.share)} %" if self.sessions else "-"


def saving_key(s: FolderSum) -> tuple[Any, ...]:
    """The largest saving first; ties as the Replay page breaks them (``replay.answer.rank_key``)."""
    return (-round(s.saving, 6),) + rank_key(s.strategy, s.dollars, s.recall)[1:]


@dataclass(frozen=True)
class FolderAnswer:
    sessions: int
    billed: float  # the bill: every row's billed
    modelled: float | None  # the modelled recording over the rows that replayed it (None: none did)
    modelled_sessions: int
    error: float | None  # modelled against the bill of the same rows
    band: float
    sums: tuple[FolderSum, ...]
    unpriced: int = 0  # requests of models without a list price: not in ``billed``
    unpriced_models: tuple[str, ...] = ()  # their models, the most requests first
    recorded: float | None = None  # the agents' own recorded cost (OpenCode, Amp, Pi), over the rows recording one
    recorded_sessions: int = 0
    no_usage: int = 0  # sessions whose requests record no usage at all: no bill (not $0), not in ``sessions``' bill

    def _no_usage(self) -> str:
        if not self.no_usage:
            return ""
        one = self.no_usage == 1
        return (f"; {self.no_usage:,} session{'' if one else 's'} hold{'s' if one else ''} no usage (the log "
                "records none: no bill, not $0)")

    def bill_text(self) -> str:
        """The bill in words: the list-price bill, the requests it leaves out (named, never shown as $0) and
        the cost the agents recorded themselves, beside it (or as the bill, said so, where no list price is)."""
        n = f"{self.sessions:,} sessions"
        recorded = "" if self.recorded is None else \
            f"the agents' own recorded cost {money(self.recorded)} over {self.recorded_sessions:,} sessions"
        if not self.unpriced:
            out = f"Billed {money(self.billed)} over {n} (what the providers charged, from the logs)"
            return out + (f"; {recorded}" if recorded else "")
        shown = ", ".join(self.unpriced_models[:5]) + (", …" if len(self.unpriced_models) > 5 else "")
        have = "has" if len(self.unpriced_models) == 1 else "have"
        why = f"{self.unpriced:,} request{'s' if self.unpriced != 1 else ''} unpriced: {shown} {have} no list price"
        if self.billed == 0:
            out = f"No list price for any request over {n}: {why}"
            if self.recorded is not None:
                out += (f"; billed {money(self.recorded)} as the agents recorded it (their own cost over "
                        f"{self.recorded_sessions:,} sessions, the only bill there is)")
            return out
        out = (f"Billed {money(self.billed)} priced over {n} (what the providers charged at list prices, from the "
               f"logs); {why}")
        return out + (f"; {recorded}" if recorded else "")

    def figures_line(self) -> str:
        out = self.bill_text() + self._no_usage()
        if self.modelled is None:
            return out + "; no strategy replayed (run pruner logs without --bill-only for the rest)."
        error = "" if self.error is None else f", {signed(100 * self.error)} % against their bill"
        return (out + f"; modelled {money(self.modelled)} over the {self.modelled_sessions:,} replayed (pruner's cache "
                f"model{error}): a saving within ±{100 * self.band:.1f} % is no measurable saving.")

    def _ran(self, min_recall: float) -> tuple[list[FolderSum], list[FolderSum]]:
        """The strategies that ran on some session, and of those the ones at or above the recall bar."""
        ran = [s for s in self.sums if s.sessions and s.strategy != RECORDING]
        return ran, [s for s in ran if s.recall is None or s.recall >= min_recall]

    def best(self, min_recall: float = DEFAULT_MIN_RECALL) -> FolderSum | None:
        """The strategy the verdict says would have saved money (feasible, at or above the recall bar, the
        largest saving, measurable outside the band); None where the verdict names none. One rule: the
        verdict's sentence and ``pruner logs report``'s best column per group both come from here."""
        if self.modelled is None:
            return None
        ran, ok = self._ran(min_recall)
        if not ok or not any(s.saving > 0 for s in ran):
            return None
        chosen = min(ok, key=saving_key)
        return chosen if chosen.saving > 0 and chosen.measurable else None

    def cheapest_at_bar(self, min_recall: float = DEFAULT_MIN_RECALL) -> FolderSum | None:
        """Of the strategies that ran on a session and keep ≥ ``min_recall`` (the recording left out), the
        largest saving (``saving_key``), whether or not it saves anything (``best`` is the one the verdict
        names as a saving); None when none did. The live panel's "best at the bar"."""
        ok = [s for s in self.sums if s.sessions and s.strategy != RECORDING
              and (s.recall is None or s.recall >= min_recall)]
        return min(ok, key=saving_key) if ok else None

    def lines(self, min_recall: float = DEFAULT_MIN_RECALL, bound: str = "") -> tuple[str, ...]:
        """The folder's answer in at most three lines, as one session's (``replay.verdict.Answer.lines``): what
        was billed (and modelled), the verdict among the strategies that could run, and the bound's sums
        (``pruner.logs.bound.BoundSum.text``) when given. ``pruner logs`` and the Corpus page print these."""
        return tuple(x for x in (self.figures_line(), f"Verdict: {self.verdict(min_recall)}", bound) if x)

    def verdict(self, min_recall: float = DEFAULT_MIN_RECALL) -> str:
        """The folder's answer in one sentence, measured against the modelled recording of the same sessions."""
        if self.modelled is None:
            return "No strategy was replayed for these sessions (run pruner logs without --bill-only)."
        ran, ok = self._ran(min_recall)
        if not ran:
            return "No strategy could run on any of these sessions; the recording stands."
        key = saving_key
        bar = f"{100 * min_recall:g} %"
        if not any(s.saving > 0 for s in ran) or not ok:
            pool = ok or ran  # as one session's verdict: the closest that changes something
            named = min([s for s in pool if s.saving] or pool, key=key)
            what = "Nothing would have saved money here" if not any(s.saving > 0 for s in ran) else \
                f"Nothing that keeps ≥ {bar} of what the replies used would have saved money here"
            return (f"{what}; the closest is {named.strategy}, {money(named.dollars)} over {named.sessions:,} of "
                    f"{named.replayed:,} sessions against {money(named.modelled)} modelled ({named.change()}).")
        best = min(ok, key=key)
        where = f"over {best.sessions:,} of {best.replayed:,} sessions"
        if best.saving <= 0:
            return (f"Nothing that keeps ≥ {bar} of what the replies used would have saved money here; the closest "
                    f"is {best.strategy}, {money(best.dollars)} {where} against {money(best.modelled)} modelled "
                    f"({best.change()}).")
        if not best.measurable:
            return (f"No measurable saving: the largest, {best.strategy}, {money(best.dollars)} {where} against "
                    f"{money(best.modelled)} modelled ({best.change()}), is within the ±{100 * self.band:.1f} % band.")
        recall = "" if best.recall is None else f", keeping {100 * best.recall:.1f} % context recall"
        return (f"{best.strategy} would have saved {money(best.saving)} ({best.change()}) {where}: "
                f"{money(best.dollars)} against {money(best.modelled)} modelled{recall}.")


def folder_answer(rows: Iterable[Mapping[str, Any]], strategies: Iterable[str]) -> FolderAnswer:
    """The folder's figures from its rows (``pruner.logs.table``'s, as dicts)."""
    rows = [r for r in rows if not isinstance(r.get("error"), str)]  # a table's missing value may be NaN
    billed = sum(_number(r.get("billed")) or 0.0 for r in rows)
    replayed = [r for r in rows if _number(r.get("modelled")) is not None]
    modelled = sum(_number(r["modelled"]) or 0.0 for r in replayed) if replayed else None
    their_bill = sum(_number(r.get("billed")) or 0.0 for r in replayed)
    error = (modelled - their_bill) / their_bill if modelled is not None and their_bill else None
    band = max(abs(error) if error is not None else 0.0, BAND_FLOOR)
    sums = []
    for name in strategies:
        mine = [r for r in replayed if _number(r.get(f"{name}_dollars")) is not None]
        if not mine:
            continue
        applies = [r for r in mine if r.get(f"{name}_applicable") is not False]
        ok = [r for r in applies if bool(r.get(f"{name}_feasible"))]
        recalls = [x for x in (_number(r.get(f"{name}_recall")) for r in ok) if x is not None]
        sums.append(FolderSum(name, round(sum(_number(r[f"{name}_dollars"]) or 0.0 for r in ok), 6),
                              round(sum(_number(r["modelled"]) or 0.0 for r in ok), 6), len(ok), len(mine),
                              len(applies) - len(ok), len(mine) - len(applies),
                              sum(recalls) / len(recalls) if recalls else None, band))
    unpriced = sum(int(_number(r.get("unpriced_requests")) or 0) for r in rows)
    models: Counter[str] = Counter()
    for r in rows:
        models.update(_unpriced_models(r.get("billed_by_model")))
    costs = [c for c in (_number(r.get("billed_recorded_cost")) for r in rows) if c is not None]
    no_usage = sum(1 for r in rows if _number(r.get("billed")) is None and r.get("prices_version") is not None
                   and not r.get("money_error"))
    return FolderAnswer(len(rows), round(billed, 6), None if modelled is None else round(modelled, 6), len(replayed),
                        error, band, tuple(sums), unpriced, tuple(m for m, _ in models.most_common()),
                        round(sum(costs), 6) if costs else None, len(costs), no_usage)


def _unpriced_models(by_model: Any) -> dict[str, int]:
    """model -> requests of a row's ``billed_by_model`` (JSON) whose model has no price."""
    try:
        parsed = json.loads(by_model) if isinstance(by_model, str) else None
    except ValueError:
        return {}
    if not isinstance(parsed, dict):
        return {}
    return {m: int(v.get("requests", 0)) for m, v in parsed.items()
            if isinstance(v, dict) and v.get("priced") is False and isinstance(v.get("requests"), int)}
