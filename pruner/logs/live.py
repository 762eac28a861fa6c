"""The session being written now: the most recently modified session of a logs table, and its figures so far.

``pruner logs --watch`` prints them on each cycle that changed the table, and the Corpus page's live panel
shows them, both from the same rows of ``sessions.parquet`` (``pruner.logs.table``) and through this one
function, so the two never disagree:

* which session: the readable, present row whose files were modified last (the latest ``mtime_ns`` its
  ``files`` cell records: what the run saw, not the clock of the machine showing it; ties by key). A row
  that holds an error is passed over: Gemini CLI rewrites its whole JSON file, and a cycle that reads it
  mid-write fails on it until the next one reads it whole (``pruner.logs.run``: a changed file is read
  again);
* its dollars so far: the row's ``billed`` (the bill at list prices, ``prices`` names them);
* its cache-read share: cache-read tokens over all input tokens (fresh input, cache reads, cache writes),
  from the row's token columns (``pruner.logs.money``); a row of a table written before those columns
  has none until it is read again;
* what ``cache_aware`` and the best strategy at the recall bar would have cost so far: the folder answer
  of this one row (``pruner.logs.answer``: ``FolderAnswer.best`` is the strategy the verdict names).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

from ..money import money
from ..replay.verdict import DEFAULT_MIN_RECALL
from .answer import FolderSum, _number, folder_answer

#: The strategy the live figures name beside the best one (the issue's "what cache_aware would have cost").
WATCHED = "cache_aware"


def _modified(row: Mapping[str, Any]) -> int:
    """The latest modification time (ns) the row's ``files`` cell records; -1 when it records none."""
    try:
        files = json.loads(row["files"])
        return max(int(f[2]) for f in files)
    except (KeyError, TypeError, ValueError, IndexError):
        return -1


def _present(row: Mapping[str, Any]) -> bool:
    removed = row.get("removed")
    return not isinstance(row.get("error"), str) and not (removed is not None and removed == True)  # noqa: E712


def live_row(rows: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The row of the session written last (see the module docstring); None when no row is readable."""
    candidates = [r for r in rows if _present(r) and isinstance(r.get("session_key"), str)]
    if not candidates:
        return None
    return max(candidates, key=lambda r: (_modified(r), r["session_key"]))


@dataclass(frozen=True)
class StrategyFigure:
    """One strategy's dollars over the session so far, or why there are none."""

    strategy: str
    dollars: float | None  # modelled USD; None: it could not run here (``note`` says why)
    recall: float | None
    note: str  # "" when there are dollars

    @classmethod
    def of(cls, s: FolderSum) -> StrategyFigure:
        if s.sessions:
            return cls(s.strategy, s.dollars, s.recall, "")
        why = "not possible (a request over the context window)" if s.infeasible else \
            "does not apply (another provider's API feature)" if s.not_applicable else "no figure"
        return cls(s.strategy, None, None, why)

    def text(self) -> str:
        return f"{self.strategy} {money(self.dollars)}" if self.dollars is not None else \
            f"{self.strategy} {self.note}"


@dataclass(frozen=True)
class LiveSession:
    key: str
    agent: str
    source: str
    modified_ns: int
    requests: int
    billed: float | None
    prices: str | None  # which prices ``billed`` and the strategies' dollars are at
    input_tokens: int | None  # fresh input + cache reads + cache writes (None: the row has no token columns)
    cache_read_tokens: int | None
    modelled: float | None  # the recording under pruner's cache model (None: no strategy replayed)
    watched: StrategyFigure | None  # ``WATCHED``'s figure (None: not replayed)
    best: StrategyFigure | None  # the best strategy keeping ``min_recall`` (None: none ran)
    min_recall: float

    @property
    def name(self) -> str:
        return os.path.basename(self.source) or self.source

    @property
    def cache_read_share(self) -> float | None:
        if self.input_tokens is None or self.cache_read_tokens is None or not self.input_tokens:
            return None
        return self.cache_read_tokens / self.input_tokens

    def share_text(self) -> str:
        share = self.cache_read_share
        return "-" if share is None else f"{100 * share:.1f} %"

    def strategies_text(self) -> str:
        if self.modelled is None:
            return "no strategy replayed (run pruner logs without --bill-only)"
        parts = [self.watched.text()] if self.watched else [f"{WATCHED} not replayed"]
        bar = f"≥ {100 * self.min_recall:g} % recall"
        parts.append(f"best at {bar}: {self.best.text()}" if self.best else f"no strategy keeps {bar}")
        return f"modelled {money(self.modelled)}; " + "; ".join(parts)

    def text(self) -> str:
        """One line: ``abc.jsonl (claude_code): $0.42 billed so far over 31 requests, cache reads 93.4 % of
        input; modelled $0.41; cache_aware $0.40; best at ≥ 99 % recall: prune $0.35 (prices …)``."""
        billed = "unbilled" if self.billed is None else f"{money(self.billed)} billed so far"
        prices = f" ({self.prices})" if self.prices else ""
        return (f"{self.name} ({self.agent}): {billed} over {self.requests:,} requests, cache reads "
                f"{self.share_text()} of input; {self.strategies_text()}{prices}")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cache_read_share": self.cache_read_share}


def _int(value: Any) -> int | None:
    n = _number(value)
    return None if n is None else int(n)


def live_session(rows: Iterable[Mapping[str, Any]], strategies: Iterable[str],
                 min_recall: float = DEFAULT_MIN_RECALL) -> LiveSession | None:
    """The figures so far of the session written last among ``rows`` (the table's, as dicts)."""
    row = live_row(rows)
    if row is None:
        return None
    answer = folder_answer([row], list(strategies))
    watched = next((StrategyFigure.of(s) for s in answer.sums if s.strategy == WATCHED), None)
    best = answer.cheapest_at_bar(min_recall)
    tokens = [_int(row.get(c)) for c in ("input_tokens", "cache_read_tokens", "cache_write_tokens")]
    fresh, read, written = tokens
    total = None if None in tokens else (fresh or 0) + (read or 0) + (written or 0)
    prices = row.get("prices")
    return LiveSession(key=row["session_key"], agent=str(row.get("agent") or ""), source=str(row.get("source") or ""),
                       modified_ns=_modified(row),
                       requests=(_int(row.get("requests_main")) or 0) + (_int(row.get("requests_subagent")) or 0),
                       billed=_number(row.get("billed")), prices=prices if isinstance(prices, str) else None,
                       input_tokens=total, cache_read_tokens=read, modelled=answer.modelled, watched=watched,
                       best=None if best is None else StrategyFigure.of(best), min_recall=min_recall)
