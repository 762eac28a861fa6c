"""The bill, the cache ledger and the request facts of a session in one pass over its requests.

``pruner logs`` without strategies needs three things of every session: its
bill (``pruner.replay.bill``), its cache ledger (``pruner.replay.ledger``) and
its request facts (``pruner.logs.row.session_facts``). Called one after the
other they find the session's requests five times over (the ledger bills the
session again and numbers its requests again); ``bill_ledger_facts`` finds
them once and gives the same three answers:

* the requests of each chain and their start times are ``chain_requests``'
  (an assistant message a model produced; its start is the time of the
  message before it, else its own), numbered across chains as
  ``find_requests`` numbers them (a merge on start time, chain order, position);
* each request is priced by the bill's own ``_row`` and the bill's totals are
  its ``_totals``, with the bill's de-duplication by request id;
* each ledger entry is the ledger's own ``_entry`` (hit / partial / miss, the
  cause, the dollars re-billed), on the ledger's own ``_chain_sent`` contexts.

``tests/unit/logs/test_logs_usage_reader.py`` checks the three against the functions
they stand for on every shared real file.

>>> from pruner.model import Message, Session
>>> u = {"input": 1_000_000, "output": 0, "cache_read": 0, "cache_write": 0}
>>> s = Session.of([Message(id="u", role="user", content="hi"),
...                 Message(id="a", role="assistant", content="ok",
...                         metadata={"usage": u, "model": "claude-opus-4-1-20250805", "request_id": "r1"})])
>>> b, entries, facts = bill_ledger_facts(s)
>>> round(b.dollars, 2), [e.cause for e in entries], facts["requests_main"]
(15.0, ['first_request'], 1)
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Iterator, Mapping

from ..model import MAIN_CHAIN, Message, Session
from .bill import Bill, BilledRequest, _add_row, _row, _totals
from .detect import detect
from .ledger import LedgerEntry, entries_of
from .prices import ModelPrice, PriceTable, default_prices
from .recording import cache_models
from .requests import is_request, timestamp
from .settings import ReplaySettings

__all__ = ["bill_ledger_facts"]

_Found = tuple[str, int, int, "float | None", Message]  # chain, index in chain, position, start time, message


def _requests(chains: tuple[tuple[str, Session], ...]) -> tuple[list[list[_Found]], float | None, float | None]:
    """Each chain's requests (as ``chain_requests``) and the earliest and latest recorded time of any
    message (kept as two numbers, not a list of every time: flat memory, issue 32)."""
    per_chain: list[list[_Found]] = []
    low = high = None
    for chain, conversation in chains:
        found: list[_Found] = []
        before: float | None = None  # the time of the message before this one
        for i, m in enumerate(conversation.messages):
            own = timestamp(m)
            if own is not None:
                low = own if low is None or own < low else low
                high = own if high is None or own > high else high
            if is_request(m):
                found.append((chain, len(found), i, own if before is None else before, m))
            before = own
        per_chain.append(found)
    return per_chain, low, high


class _OneChain(Mapping[tuple[str, int], int]):
    """``(chain, position) -> number`` of a session of one chain, held as ``position -> number``: no key
    tuple per request (a 1 GB session has ~90,000 requests; issue 32)."""

    def __init__(self, found: list[_Found]):
        self.chain = found[0][0] if found else MAIN_CHAIN
        self.numbers = {position: k for k, (_, _, position, _, _) in enumerate(found)}

    def __getitem__(self, key: tuple[str, int]) -> int:
        chain, position = key
        if chain != self.chain:
            raise KeyError(key)
        return self.numbers[position]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return ((self.chain, position) for position in self.numbers)

    def __len__(self) -> int:
        return len(self.numbers)


def _numbers(per_chain: list[list[_Found]]) -> Mapping[tuple[str, int], int]:
    """``find_requests``' numbering: chains merged on (start time so far, chain order, position)."""
    if len(per_chain) == 1:  # one chain: its own order (the merge of one stream), keyed by position alone
        return _OneChain(per_chain[0])
    streams = []
    for order, found in enumerate(per_chain):
        stream, last = [], float("-inf")
        for chain, _, position, time, _m in found:
            last = time if time is not None else last
            stream.append(((last, order, position), (chain, position)))
        streams.append(stream)
    merged = heapq.merge(*streams, key=lambda pair: pair[0])
    return {key: k for k, (_, key) in enumerate(merged)}


def _bill(per_chain: list[list[_Found]], prices: PriceTable, model: str | None) -> Bill:
    """``pruner.replay.bill`` on the requests found (same rows, same de-duplication, same totals)."""
    rows: list[BilledRequest] = []
    kept: dict[str, int] = {}
    duplicates = without_usage = 0
    for found in per_chain:
        for chain, index, position, time, m in found:
            if not isinstance(m.metadata.get("usage"), Mapping):
                without_usage += 1
                continue
            duplicates += _add_row(rows, kept, _row(chain, index, position, time, m, prices, model))
    return _totals(tuple(rows), duplicates, without_usage, prices, model)


def _ledger(session: Session, chains: dict[str, Session], billed: Bill, numbers: Mapping[tuple[str, int], int],
            prices: PriceTable, default: ModelPrice) -> tuple[LedgerEntry, ...]:
    """``pruner.replay.ledger``'s entries, from the bill already made."""
    models = cache_models(ReplaySettings())
    return entries_of([r for r in billed.requests if not r.aborted], chains, numbers, prices, default, models)


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _facts_model(m: Message) -> str | None:
    """The model ``session_facts`` counts: ``metadata["model"]`` when a string, else ``source.model``."""
    model = m.metadata.get("model")
    if not isinstance(model, str):
        source = m.metadata.get("source")
        model = source.get("model") if isinstance(source, Mapping) else None
    return model if isinstance(model, str) and model and model != "<synthetic>" else None


def _facts(per_chain: list[list[_Found]], low: float | None, high: float | None) -> dict[str, Any]:
    """``pruner.logs.row.session_facts``: start, end, models and request counts over every chain."""
    models: Counter[str] = Counter()
    main = sub = 0
    for found in per_chain:
        for chain, _, _, _, m in found:
            if chain == MAIN_CHAIN:
                main += 1
            else:
                sub += 1
            model = _facts_model(m)
            if model:
                models[model] += 1
    return {"start": _iso(low), "end": _iso(high),
            "models": json.dumps(dict(sorted(models.items()))), "requests_main": main, "requests_subagent": sub}


def bill_ledger_facts(session: Session, prices: PriceTable | None = None
                      ) -> tuple[Bill, tuple[LedgerEntry, ...], dict[str, Any]]:
    """``(bill(session, prices), ledger(session, prices), session_facts(session))``, found in one pass."""
    prices = prices or default_prices()
    chains = session.chains
    per_chain, low, high = _requests(chains)
    facts = _facts(per_chain, low, high)
    billed = _bill(per_chain, prices, None)
    default = prices.get(detect(session, prices)[1])
    # The ledger prices a request that records no model at the session's model; the bill leaves it unpriced.
    priced = billed if all(r.model_recorded for r in billed.requests) else _bill(per_chain, prices, default.model)
    numbers = _numbers(per_chain)
    del per_chain  # what was found is in the bill and the numbers now: not held while the ledger is made
    entries = _ledger(session, dict(chains), priced, numbers, prices, default)
    return billed, entries, facts
