"""The cache ledger as a summary by cause, as JSON and as text (the CLI prints it; the dashboard reads
the same summary).

>>> from pruner.replay.ledger import LedgerEntry
>>> e = LedgerEntry(request=1, chain="main", status="miss", cause="ttl_expired", detail="400 s since request 0",
...                 changed_position=None, gap_seconds=400.0, rebilled_dollars=0.5, dollars=0.8)
>>> hit = LedgerEntry(request=0, chain="main", status="hit", cause="", detail="", changed_position=None,
...                   gap_seconds=None, rebilled_dollars=0.0, dollars=1.2)
>>> ledger_summary([hit, e])["ttl_expired"]
{'misses': 1, 'partials': 0, 'dollars': 0.5}
>>> lines([hit, e], misses=False)[1]
"  1 miss after the cache's lifetime ran out cost $0.5000, 25 % of the bill"
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Sequence, TypeAlias

from .ledger import CAUSES, LedgerEntry
from pruner.money import money

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Replay

#: Entries, or a replay (its ``ledger``).
Entries: TypeAlias = "Iterable[LedgerEntry] | Replay"

#: How the summary line names each cause ("33 misses with no visible cause cost $12.40, ...").
_PHRASES = {"first_request": "at the session's first request", "subagent_start": "at a subagent's start",
            "model_changed": "after a change of model", "compaction": "after a recorded compaction",
            "ttl_expired": "after the cache's lifetime ran out", "prefix_changed": "after a change before the "
            "breakpoint", "lookback_exceeded": "beyond the 20-block lookback", "below_minimum": "below the "
            "minimum cacheable length", "no_visible_cause": "with no visible cause"}


def _entries(entries_or_replay: Entries) -> Sequence[LedgerEntry]:
    if isinstance(entries_or_replay, Iterable):
        return tuple(entries_or_replay)
    return entries_or_replay.ledger  # a Replay (not iterable)


def ledger_summary(entries: Entries) -> dict[str, dict[str, Any]]:
    """``{cause: {"misses", "partials", "dollars"}}`` for every cause, in ``CAUSES`` order (a replay
    may be passed instead of its entries). ``misses`` counts misses, ``partials`` partial hits;
    ``dollars`` is what both re-billed."""
    out: dict[str, dict[str, Any]] = {c: {"misses": 0, "partials": 0, "dollars": 0.0} for c in CAUSES}
    for e in _entries(entries):
        if e.status == "hit":
            continue
        row = out[e.cause]
        row["misses" if e.status == "miss" else "partials"] += 1
        row["dollars"] += e.rebilled_dollars
    for row in out.values():
        row["dollars"] = round(row["dollars"], 8)
    return out


def ledger_json(entries: Entries) -> dict[str, Any]:
    """What ``--json`` carries under ``"ledger"``: the causes, every entry, the summary, the totals."""
    entries = tuple(_entries(entries))
    return {"causes": dict(CAUSES), "entries": [e.as_dict() for e in entries], "summary": ledger_summary(entries),
            "billed": round(sum(e.dollars for e in entries), 8),
            "rebilled": round(sum(e.rebilled_dollars for e in entries), 8),
            "unpriced_requests": sum(1 for e in entries if not e.priced)}


def lines(entries: Iterable[LedgerEntry], *, misses: bool = True) -> list[str]:
    """The ledger as text: one line per miss or partial (when ``misses``), then the summary by cause.
    Text from the transcript (chain ids, model names) is passed as it is: the CLI escapes it."""
    entries = tuple(_entries(entries))
    if not entries:
        return ["cache ledger: no request records usage, so there is no cache hit or miss to attribute"]
    bill = sum(e.dollars for e in entries)
    broken = [e for e in entries if e.status != "hit"]
    rebilled = sum(e.rebilled_dollars for e in broken)

    def share(x: float) -> str:
        return f"{100 * x / bill:.0f} % of the bill" if bill else "the bill is $0"

    out = [f"cache ledger: {len(entries)} recorded requests, {sum(e.status == 'hit' for e in entries)} hits, "
           f"{sum(e.status == 'partial' for e in entries)} partial, {sum(e.status == 'miss' for e in entries)} "
           f"misses; re-billed {money(rebilled)} of the {money(bill)} bill (each request at its own model's "
           "list price)"]
    if misses:
        for e in broken:
            out.append(f"  request {e.request} [{e.chain}] {e.status} {e.cause}: {e.detail}; "
                       f"re-billed {money(e.rebilled_dollars)}")
    for cause, row in ledger_summary(entries).items():
        if row["misses"] or row["partials"]:
            counted = " and ".join(f"{n} {word}{'' if n == 1 else plural}" for n, word, plural in (
                (row["misses"], "miss", "es"), (row["partials"], "partial hit", "s")) if n)
            out.append(f"  {counted} {_PHRASES[cause]} cost {money(row['dollars'])}, {share(row['dollars'])}")
    unpriced = sum(1 for e in entries if not e.priced)
    if unpriced:
        out.append(f"  {unpriced} requests are of models without a price: their dollars are not counted")
    return out
