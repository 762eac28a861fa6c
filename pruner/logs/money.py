"""The money columns of a session's row: what it was billed, where it went, what each strategy would cost.

Built on the money modules' own results, never re-derived here:

* ``billed`` / ``billed_by_model`` / ``unpriced_requests``: ``pruner.replay.bill`` (every request
  of every chain once, each at its own recorded model; a model without a price is unpriced, never
  priced as another);
* ``cache_write_dollars``: the bill's requests' cache writes at their rates (``bill.price_request``);
* ``misses_<cause>`` / ``rebilled_<cause>``: ``pruner.replay.ledger`` summed by
  ``ledger_summary`` (misses and partial hits, and what they paid above a hit);
* ``<strategy>_feasible`` / ``<strategy>_dollars`` / ``<strategy>_recall``: the replay's totals per
  strategy (``pruner.replay.verdict.feasible``; ``context_recall`` from ``pruner.replay.recall``), only
  when strategies are asked for: ``strategies=()`` is the fast bill-and-ledger reading. Every
  ``_dollars`` is modelled, the recording's too (the bill is ``billed``). Two cases read
  as what they are, not as numbers: a strategy whose every request is unpriced has no dollars
  (null, shown "unpriced"), not $0; a strategy infeasible from its first request sent nothing, so its
  recall is null (shown "-"), not the 100 % of an empty measure;
* ``modelled`` / ``visibility`` / ``<strategy>_applicable``: ``pruner.replay.answer``;
* ``prices_version``: the shipped price table's version (``prices_version()``); a row of another
  version is billed again by the next run.
* ``input_tokens`` / ``cache_read_tokens`` / ``cache_write_tokens`` / ``output_tokens``: the bill's requests'
  recorded token counts summed (every billed request, priced or not; ``input_tokens`` is the uncached input
  only, so all input is the first three), for the cache-read share of ``pruner logs report`` and the live
  panel (``pruner.logs.live``).
* ``bill_version``: ``BILL_VERSION``, the shape of the bill's columns; a row of another (or none: a table
  written before the token columns) is read again by the next run (``pruner.logs.run.plan``).
* ``<strategy>_lost``: the terms its context lacked at the most requests
  (``pruner.replay.lost.top_lost``), only when strategies are asked for.
* ``bound_*``: the hindsight bound (``pruner.replay.hindsight.bound_cells``), only with ``bound=True``
  (``pruner logs --bound``: slow on long sessions today); ``bound_version`` is ``pruner.logs.bound.BOUND_VERSION``,
  and a row of another version (or none) is computed again by the next run that asks for the bound.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any, Sequence

import pyarrow as pa

from ..model import Session
from ..replay import CAUSES, Replay, bill, default_prices, ledger, ledger_summary, replay, strategy_names
from ..replay.answer import answer
from ..replay.bill import Bill, price_request
from ..replay.ledger import LedgerEntry
from ..replay.prices import PriceTable
from ..replay.lost import lost_terms, top_lost
from ..replay.verdict import feasible

_S, _F, _B, _I = pa.string(), pa.float64(), pa.bool_(), pa.int64()

#: The bill columns' shape: bumped when a column is added to what ``_bill_and_ledger_columns`` fills, so
#: the rows of an older table are read again once (2: the token columns).
BILL_VERSION = "2"


def strategy_columns() -> tuple[tuple[str, pa.DataType], ...]:
    cols: list[tuple[str, pa.DataType]] = []
    for name in strategy_names():
        cols += [(f"{name}_feasible", _B), (f"{name}_dollars", _F), (f"{name}_recall", _F), (f"{name}_applicable", _B),
                 (f"{name}_lost", _S)]  # JSON: the terms its context lacked at the most requests (pruner.replay.lost)
    return tuple(cols)


COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("billed", _F),  # USD, the bill: recorded usage at list prices, each request at its own model (null: its
    # requests record no usage at all, so there is no bill, which is not a bill of $0)
    ("billed_by_model", _S),  # JSON {model: {"requests", "dollars", "priced"}}
    ("billed_recorded_cost", _F),  # the agent's own recorded cost (Pi), when every request records one
    ("unpriced_requests", _I),  # requests whose model has no price row (billed $0, counted here)
    ("cache_write_dollars", _F),  # the part of ``billed`` paid for cache writes
    ("prices", _S),  # which prices (file and date)
    ("prices_version", _S),  # the shipped price table's version: a row of another is billed again
    ("bill_version", _S),  # BILL_VERSION: a row of another (or none) is read again
    # The bill's tokens, every request once (priced or not). The cache-read share of a session is
    # cache_read / (input + cache_read + cache_write) (``pruner.logs.live``, ``pruner.logs.report``).
    ("input_tokens", _I),  # the bill's uncached input tokens (every billed request)
    ("cache_read_tokens", _I),  # cache reads
    ("cache_write_tokens", _I),  # cache writes (1-hour ones included)
    ("output_tokens", _I),
    *[(f"misses_{cause}", _I) for cause in CAUSES],  # ledger: misses and partial hits by cause
    *[(f"rebilled_{cause}", _F) for cause in CAUSES],  # ledger: what they paid above a hit, USD
    ("costliest_miss_request", _I),  # the ledger's request number of the miss that re-billed most (null: none)
    ("costliest_miss_dollars", _F),
    ("strategies", _S),  # the strategies replayed for this row, comma-separated ("" none)
    ("replay_prices", _S),  # the replay's prices (model, file, date)
    ("modelled", _F),  # USD, the recorded requests under the cache model (``pruner.replay.answer``)
    ("visibility", _F),  # the share of the billed input tokens the transcript accounts for
    *strategy_columns(),
    ("bound_version", _S),  # null: the bound was not computed (pruner logs --bound); see pruner.logs.bound
    ("bound_dollars", _F),  # USD, the combined family's cheapest schedule in hindsight (null: none feasible)
    ("bound_exact", _B),  # the search was exact (false: a beam search's schedule, the optimum may be lower)
    ("bound_schedule", _S),  # JSON [[request, action], ...]
    ("bound_note", _S),  # why there is no figure, or why it could not be computed
    ("bound_min_recall", _F),  # the recall bar the bound kept
    ("bound_prune_dollars", _F), ("bound_compaction_dollars", _F), ("bound_clearing_dollars", _F),
    ("money_error", _S),  # null unless the bill, ledger or replay failed (the row keeps its facts)
)


#: cause -> its two column names, made once: a row of a run that holds thousands shares them (issue 32)
_CAUSE_KEYS = {cause: (f"misses_{cause}", f"rebilled_{cause}") for cause in CAUSES}


def _cache_write_dollars(b: Bill, prices: PriceTable) -> float:
    total = 0.0
    for r in b.requests:
        price = prices.find(r.model) if r.model and r.priced else None
        if price is not None and r.cache_write:
            total += price_request(price, input=0, cache_read=0, cache_write=r.cache_write,
                                   cache_write_1h=r.cache_write_1h, output=0)
    return total


def _bill_and_ledger_columns(row: dict[str, Any], b: Bill, entries: Sequence[LedgerEntry], prices: PriceTable) -> None:
    # Requests none of which records usage (Copilot CLI's first, flat session files): no bill, not $0.
    row.update(billed=None if b.without_usage and not b.requests else b.dollars,
               billed_recorded_cost=b.billed_recorded_cost,
               billed_by_model=json.dumps({m: dict(v) for m, v in sorted(b.by_model.items())}, sort_keys=True),
               unpriced_requests=b.unpriced_requests, cache_write_dollars=_cache_write_dollars(b, prices),
               prices=b.prices_label,
               input_tokens=sum(r.input for r in b.requests), cache_read_tokens=sum(r.cache_read for r in b.requests),
               cache_write_tokens=sum(r.cache_write for r in b.requests),
               output_tokens=sum(r.output for r in b.requests))
    misses = [e for e in entries if e.status != "hit"]
    if misses:
        worst = max(misses, key=lambda e: (e.rebilled_dollars, -e.request))
        row.update(costliest_miss_request=worst.request, costliest_miss_dollars=worst.rebilled_dollars)
    for cause, v in ledger_summary(entries).items():
        missed, rebilled = _CAUSE_KEYS[cause]
        row[missed] = v["misses"] + v["partials"]
        row[rebilled] = v["dollars"]


@functools.lru_cache(maxsize=1)
def _shipped_prices() -> PriceTable:
    """The shipped price table, parsed once per process (a worker reads thousands of small sessions)."""
    return default_prices()


@functools.lru_cache(maxsize=1)
def prices_version() -> str:
    """The shipped price table's version: its date and a digest of its rows (a row added or a price
    changed under the same date is a new version too)."""
    table = _shipped_prices()
    rows = json.dumps([m.as_dict() for m in table.models], sort_keys=True, default=str)
    return f"{table.retrieved}+{hashlib.sha256(rows.encode('utf-8')).hexdigest()[:12]}"


def strategy_cells(name: str, run: Any) -> dict[str, Any]:
    """``<name>_dollars`` / ``_feasible`` / ``_recall`` of one strategy's run (``StrategyRun``; see the module)."""
    t = run.totals
    unpriced = t.get("billed_requests", 0) and t.get("unpriced_requests", 0) >= t["billed_requests"]
    stop = t.get("infeasible_from")
    sent = stop is None or any(r.request < stop for r in run.rows)
    recall = t.get("context_recall")
    return {f"{name}_dollars": None if unpriced else t["dollars"], f"{name}_feasible": feasible(t),
            f"{name}_recall": float(recall) if sent and isinstance(recall, (int, float)) else None}


def _error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def usage_columns(session: Session) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bill-and-ledger money columns (``strategies=()``) and ``session_facts``, from one pass over the
    requests (``pruner.replay.fast_bill``); the same values ``money_columns`` and ``session_facts`` give."""
    from ..replay.fast_bill import bill_ledger_facts
    from .row import session_facts

    prices = _shipped_prices()
    row: dict[str, Any] = {"strategies": "", "money_error": None, "prices_version": prices_version(),
                           "bill_version": BILL_VERSION}
    try:
        b, entries, facts = bill_ledger_facts(session, prices)
    except Exception:  # the full path says which part failed, as it would have
        return money_columns(session), session_facts(session)
    _bill_and_ledger_columns(row, b, entries, prices)
    return row, facts


def _bound_columns(r: Replay) -> dict[str, Any]:
    """The bound's cells for the replay ``r`` (an error is the row's note, and the bound is tried again)."""
    from ..replay.hindsight import bound_cells, session_limits
    from .bound import BOUND_VERSION

    try:
        limits = session_limits(r)
    except Exception as exc:  # the row keeps its dollars; no version, so the next --bound run tries again
        return {"bound_note": f"could not be computed: {_error(exc)}"}
    if limits is None:
        return {"bound_version": BOUND_VERSION, "bound_note": "not computed: the replay measured no context recall"}
    return {**bound_cells(limits), "bound_version": BOUND_VERSION}


def money_columns(session: Session, strategies: tuple[str, ...] = (), bound: bool = False) -> dict[str, Any]:
    from ..formats.copilot_cli import lump_usage

    prices = default_prices()
    row: dict[str, Any] = {"strategies": ",".join(strategies), "money_error": None,
                           "prices_version": prices_version(),
                           "bill_version": BILL_VERSION}
    try:
        _bill_and_ledger_columns(row, bill(session, prices), ledger(session, prices), prices)
        # A session whose usage is one lump per run has its bill only: no modelled figure, no strategy's.
        if strategies and lump_usage(session) is None:
            r = replay(session, strategies, prices=prices, snapshots=False)  # the session's provider and model
            row["replay_prices"] = r.money_label
            figures = answer(r)
            row["modelled"] = figures.modelled
            row["visibility"] = None if figures.visibility is None else figures.visibility.share
            for name in strategies:
                cells = strategy_cells(name, r.runs[name])
                if name == figures.reference and cells[f"{name}_dollars"] is not None:
                    # every strategy's dollars are modelled, the recording's too (the bill is ``billed``)
                    cells[f"{name}_dollars"] = figures.modelled
                row.update(cells)
                row[f"{name}_applicable"] = bool(r.runs[name].totals.get("applicable", True))
                if r.recall is not None:
                    row[f"{name}_lost"] = json.dumps(top_lost(lost_terms(r, name)), ensure_ascii=False)
            if bound:
                row.update(_bound_columns(r))
    except Exception as exc:  # the row keeps its facts and says why it has no (or not all) dollars
        row["money_error"] = _error(exc)
    return row
