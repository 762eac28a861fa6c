"""The bill: what a recorded session's requests cost at list prices, each at its own model.

Pure arithmetic on what the transcript recorded, no strategy and no cache
model: every request of every chain (the main conversation and each
subagent's, ``Session.chains``) that records usage is counted once
(de-duplicated by its ``request_id`` across chains, keeping the copy with
the most output, the last line of a response written over several), and
priced with the row ``PriceTable.find`` gives for ITS OWN recorded model.

* A request whose model the table does not hold is **unpriced**: billed $0
  and counted (requests and tokens) in ``Bill.unpriced_*``, never priced as
  another model.
* ``model=`` (the user's ``--model``) prices only the requests that record no
  model; a recorded model is what the provider billed, so it is never
  overridden (pass ``prices=`` to price it differently).
* A request recorded with all-zero usage was aborted before the provider
  billed it: counted in ``Bill.aborted``, billed $0.
* A reply no model made (``metadata["synthetic"]``) is not a request.
* Cache writes are split into the 1-hour part (``usage["cache_write_1h"]``)
  and the 5-minute rest, each at its rate; a provider without a write fee
  bills a write at the input price.
* ``billed_recorded_cost`` sums the cost the agent itself recorded
  (``usage["cost"]``, Pi) when every billed request records one, else None.

>>> from pruner.model import Message, Session
>>> u = {"input": 1_000_000, "output": 0, "cache_read": 0, "cache_write": 0}
>>> s = Session.of([Message(id="u", role="user", content="hi"),
...                 Message(id="a", role="assistant", content="ok",
...                         metadata={"usage": u, "model": "claude-opus-4-1-20250805", "request_id": "r1"}),
...                 Message(id="b", role="assistant", content="ok", metadata={"usage": u, "model": "gpt-9"})])
>>> b = bill(s)
>>> round(b.dollars, 2), b.unpriced_requests, b.unpriced_tokens
(15.0, 1, 1000000)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..model import MAIN_CHAIN, Message, Session
from .prices import PROVIDERS, ModelPrice, PriceTable, default_prices
from .requests import chain_requests

_PER = 1_000_000
#: The key of ``Bill.by_model`` for requests that record no model (and were given none).
NO_MODEL = "(no model recorded)"


@dataclass(frozen=True, slots=True)  # slots: one per request, a 1 GB session holds ~90,000
class BilledRequest:
    """One request of the bill: its chain, where it is, its recorded usage and its price."""

    chain: str
    index_in_chain: int  # the request's number in its chain (as ``chain_requests`` numbers them)
    position: int  # index in the chain's messages of the assistant message it produced
    model: str | None  # the model it was priced at: its recorded one, else the default given
    priced: bool  # False: the price table has no row for ``model`` (billed $0, counted unpriced)
    input: int
    cache_read: int
    cache_write: int  # all cache writes, 1-hour ones included
    cache_write_1h: int
    output: int
    dollars: float
    recorded_cost: float | None  # the agent's own recorded cost of this request (Pi), else None
    time: float | None  # start, seconds since the epoch
    request_id: str | None = None
    model_recorded: bool = True  # False: ``model`` is the default the caller gave
    aborted: bool = False  # all-zero usage: stopped before the provider billed it

    @property
    def tokens(self) -> int:
        return self.input + self.cache_read + self.cache_write + self.output


@dataclass(frozen=True)
class Bill:
    """Every recorded request priced at its own model, with totals per model and per chain."""

    requests: tuple[BilledRequest, ...]
    dollars: float  # priced requests only
    unpriced_requests: int
    unpriced_tokens: int
    unpriced_models: tuple[str, ...]
    aborted: int
    duplicates: int  # copies of a request id already billed (left out)
    without_usage: int  # model requests (assistant messages) that record no usage: not billed
    billed_recorded_cost: float | None
    by_model: Mapping[str, Mapping[str, Any]]  # model -> {"requests", "dollars", "priced"}
    by_chain: Mapping[str, Mapping[str, Any]]  # chain -> {"requests", "dollars"}
    prices_label: str
    default_model: str | None = None

    def lines(self) -> list[str]:
        """The bill in a few sentences, for the CLI and the reports."""
        main = self.by_chain.get(MAIN_CHAIN, {"requests": 0, "dollars": 0.0})
        subs = {c: v for c, v in self.by_chain.items() if c != MAIN_CHAIN}
        out = [f"bill: {len(self.requests):,} requests, ${self.dollars:,.2f} at list prices ({self.prices_label})"]
        chains = f"main chain {main['requests']:,} requests ${main['dollars']:,.2f}"
        if subs:
            n = sum(v["requests"] for v in subs.values())
            chains += (f"; {len(subs)} subagent chain{'s' if len(subs) != 1 else ''}, {n:,} requests, "
                       f"${sum(v['dollars'] for v in subs.values()):,.2f}")
        out.append(chains)
        if self.by_model:
            out.append("; ".join(f"{model} {v['requests']:,} requests "
                                 + (f"${v['dollars']:,.2f}" if v["priced"] else "unpriced")
                                 for model, v in self.by_model.items()))
        if self.unpriced_requests:
            out.append(f"unpriced: {self.unpriced_requests:,} requests, {self.unpriced_tokens:,} tokens "
                       f"({', '.join(self.unpriced_models)}: no row in the price table; not in the dollars)")
        if self.aborted:
            out.append(f"aborted: {self.aborted:,} requests recorded with zero usage, billed $0")
        if self.billed_recorded_cost is not None:
            out.append(f"recorded cost (the agent's own figure): ${self.billed_recorded_cost:,.2f}")
        if self.default_model:
            out.append(f"requests that record no model priced as {self.default_model}")
        return out


def _int(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _cost(usage: Mapping[str, Any]) -> float | None:
    value = usage.get("cost")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def price_request(price: ModelPrice, *, input: int, cache_read: int, cache_write: int, cache_write_1h: int,
                  output: int) -> float:
    """The list price of one request's usage: the 1-hour writes at the 1-hour rate, the rest at 5 minutes."""
    five = cache_write - cache_write_1h
    return (input * price.input + cache_read * price.cached_input + five * price.write_price("5m")
            + cache_write_1h * price.write_price("1h") + output * price.output) / _PER


def _row(chain: str, index: int, position: int, time: float | None, m: Message, prices: PriceTable,
         default: str | None) -> BilledRequest:
    meta = m.metadata
    usage = meta["usage"]
    recorded = meta.get("model") if isinstance(meta.get("model"), str) and meta.get("model") else None
    model = recorded or default
    provider = meta.get("provider") if meta.get("provider") in PROVIDERS else None
    price = prices.find(model, provider) if model else None
    counts = {k: _int(usage, k) for k in ("input", "cache_read", "cache_write", "output")}
    counts["cache_write_1h"] = min(_int(usage, "cache_write_1h"), counts["cache_write"])
    aborted = not any(counts.values())
    dollars = price_request(price, **counts) if price is not None and not aborted else 0.0
    rid = meta.get("request_id") if isinstance(meta.get("request_id"), str) else None
    return BilledRequest(chain=chain, index_in_chain=index, position=position, model=model,
                         priced=price is not None or aborted, dollars=dollars, recorded_cost=_cost(usage), time=time,
                         request_id=rid, model_recorded=recorded is not None, aborted=aborted, **counts)


def bill(session: Session, prices: PriceTable | None = None, *, model: str | None = None) -> Bill:
    """The bill of ``session``'s recorded usage (see the module): every chain, each request at its model."""
    prices = prices or default_prices()
    rows: list[BilledRequest] = []
    kept: dict[str, int] = {}  # request id -> its row
    duplicates = without_usage = 0
    for chain, conversation in session.chains:
        for req in chain_requests(chain, conversation):  # this chain's own (the session's span every chain)
            m = conversation.messages[req.position]
            if m.metadata.get("synthetic"):
                continue  # no model produced it: not a request
            if not isinstance(m.metadata.get("usage"), Mapping):
                without_usage += 1
                continue
            duplicates += _add_row(rows, kept, _row(chain, req.index, req.position, req.time, m, prices, model))
    return _totals(tuple(rows), duplicates, without_usage, prices, model)


def _add_row(rows: list[BilledRequest], kept: dict[str, int], row: BilledRequest) -> int:
    """Bill ``row`` once per request id: a copy of an id already billed replaces it only when it is
    further into the response (more output); 1 when ``row`` was such a copy, else 0."""
    if row.request_id is None or row.request_id not in kept:
        if row.request_id is not None:
            kept[row.request_id] = len(rows)
        rows.append(row)
        return 0
    k = kept[row.request_id]
    if row.output > rows[k].output:  # the later copy is further into the response
        rows[k] = row
    return 1


def _totals(rows: tuple[BilledRequest, ...], duplicates: int, without_usage: int, prices: PriceTable,
            default: str | None) -> Bill:
    by_model: dict[str, dict[str, Any]] = {}
    by_chain: dict[str, dict[str, Any]] = {}
    unpriced = [r for r in rows if not r.priced]
    for r in rows:
        key = r.model or NO_MODEL
        entry = by_model.setdefault(key, {"requests": 0, "dollars": 0.0, "priced": True})
        entry["requests"] += 1
        entry["dollars"] += r.dollars
        entry["priced"] = entry["priced"] and r.priced
        chain = by_chain.setdefault(r.chain, {"requests": 0, "dollars": 0.0})
        chain["requests"] += 1
        chain["dollars"] += r.dollars
    costs = [r.recorded_cost for r in rows]
    recorded = sum(c for c in costs if c is not None) if costs and all(c is not None for c in costs) else None
    return Bill(requests=rows, dollars=sum(r.dollars for r in rows), unpriced_requests=len(unpriced),
                unpriced_tokens=sum(r.tokens for r in unpriced),
                unpriced_models=tuple(sorted({r.model or NO_MODEL for r in unpriced})),
                aborted=sum(1 for r in rows if r.aborted), duplicates=duplicates, without_usage=without_usage,
                billed_recorded_cost=recorded, by_model=by_model, by_chain=by_chain, prices_label=prices.label,
                default_model=default)
