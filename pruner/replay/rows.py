"""A replay's results: one ``RequestRow`` per request per strategy, and each strategy's totals.

Rows are built by keyword and serialised from their own fields (``as_dict``), so
the JSON and CSV writers never list them again. Totals sum every chain and say
what each chain and each model cost; a strategy that sends a request over its
model's window is infeasible from there (the API refuses it, so nothing after it
happens as replayed): ``feasible`` is False and ``dollars`` stops before it.

>>> row = RequestRow(request=0, chain="main", position=1, turn=1, model="m", priced=True, window=1000,
...                  messages=1, tokens=10, input=12, cached=0, written=12, fresh=0, output=3, dollars=0.5,
...                  dollars_modelled=0.5, dollars_not_inherited=0.5, dollars_unscaled=0.4, miss="first")
>>> run = StrategyRun("full", "no management", rows=[row])
>>> t = run.totals
>>> t["feasible"], t["dollars"], t["by_chain"], t["by_model"]["m"]["requests"]
(True, 0.5, {'main': {'requests': 1, 'dollars': 0.5}}, 1)
>>> sorted(row.as_dict())[:4]
['aborted', 'cached', 'cached_share', 'chain']
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from ..model import Message
from .strategy import Event

#: The money columns, rounded in the JSON and CSV (dollars to the 1e-8).
_DOLLARS = ("dollars", "dollars_modelled", "dollars_not_inherited", "dollars_unscaled")


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestRow:
    request: int  # across the session, in start-time order
    chain: str  # "main" or the subagent's chain id
    position: int  # the assistant message this request produced (index in its chain's messages)
    turn: int
    model: str  # the model it was priced at (the recorded one, else the settings' model)
    priced: bool  # False: the model has no price; dollars are 0 and its tokens are counted as unpriced
    window: int  # its model's context window, provider tokens
    messages: int  # messages sent (placeholders included)
    tokens: int  # context tokens, ours
    input: int  # provider tokens: cached + written + fresh
    cached: int
    written: int
    fresh: int
    output: int
    dollars: float  # what this strategy pays here (as_recorded: the recorded usage at list prices)
    dollars_modelled: float  # the cache model's bill, recorded misses inherited where nothing explains them
    dollars_not_inherited: float  # the cache model's bill with no inherited misses
    dollars_unscaled: float  # our own token counts, inherited misses
    miss: str  # why the cache was not fully used ("" when it was)
    rejected: bool = False  # the input exceeds the model's window: the API would refuse it
    aborted: bool = False  # recorded as aborted (nothing billed, for every strategy)
    changed_at: int = 0  # first message position that differs from the previous request of the chain
    events: tuple[Event, ...] = ()
    model_cached: int = 0  # what the cache model alone reads here (no inherited misses)
    model_miss: str = ""  # and why it misses, if it does
    extra_input: int = 0  # provider tokens of extra calls (summarisation)
    extra_output: int = 0
    facts_missing: int | None = None

    @property
    def cached_share(self) -> float:
        return self.cached / self.input if self.input else 0.0

    def as_dict(self) -> dict[str, Any]:
        """Every field (events as dicts, dollars rounded) and ``cached_share``: the JSON row."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _DOLLARS:
                value = round(value, 8)
            elif f.name == "events":
                value = [{"kind": e.kind, "tokens_before": e.tokens_before, "tokens_after": e.tokens_after,
                          "position": e.position, "detail": e.detail} for e in value]
            out[f.name] = value
        out["cached_share"] = round(self.cached_share, 4)
        return out


#: The CSV columns: a row's fields (after the strategy's name), then the derived share.
ROW_FIELDS = tuple(f.name for f in fields(RequestRow)) + ("cached_share",)


def infeasible_sentence(name: str, row: RequestRow) -> str:
    return (f"{name}: infeasible from request {row.request}, where the context reaches {row.input:,} tokens over a "
            f"{row.window:,}-token window; this session needed compaction")


@dataclass
class StrategyRun:
    name: str
    summary: str
    rows: list[RequestRow] = field(default_factory=list)
    seconds: float = 0.0
    snapshots: list[tuple[tuple[Message, ...], dict[str, str]]] | None = None
    applicable: bool = True  # False: the strategy does not exist for this provider (never ranked)
    not_applicable_reason: str = ""
    measures: dict[str, Any] = field(default_factory=dict)  # added to the totals (context recall)

    @property
    def events(self) -> list[tuple[RequestRow, Event]]:
        return [(row, e) for row in self.rows for e in row.events]

    @property
    def infeasible_row(self) -> RequestRow | None:
        """The first request over its window (the API refuses it), or None."""
        return next((r for r in self.rows if r.rejected and not r.aborted), None)

    @property
    def feasible(self) -> bool:
        return self.applicable and self.infeasible_row is None

    @property
    def totals(self) -> dict[str, Any]:
        rows = self.rows
        billed = [r for r in rows if not r.aborted]
        inputs = sum(r.input for r in billed)
        cached = sum(r.cached for r in billed)
        events = self.events
        facts = [r.facts_missing for r in rows if r.facts_missing is not None]
        stop = self.infeasible_row
        counted = rows if stop is None else [r for r in rows if r.request < stop.request]
        by_model: dict[str, dict[str, Any]] = {}
        by_chain: dict[str, dict[str, Any]] = {}
        for r in counted:
            if r.aborted:
                continue  # billed at no model's price
            for key, table in ((r.model, by_model), (r.chain, by_chain)):
                entry = table.setdefault(key, {"requests": 0, "dollars": 0.0})
                entry["requests"] += 1
                entry["dollars"] += r.dollars
        for table in (by_model, by_chain):
            for entry in table.values():
                entry["dollars"] = round(entry["dollars"], 6)
        for r in counted:
            if not r.aborted:
                by_model[r.model]["priced"] = r.priced
        unpriced = [r for r in billed if not r.priced]
        return {
            "strategy": self.name, "requests": len(rows), "billed_requests": len(billed),
            "applicable": self.applicable, "not_applicable_reason": self.not_applicable_reason,
            "feasible": self.feasible, "infeasible_from": None if stop is None else stop.request,
            "infeasible_reason": "" if stop is None else infeasible_sentence(self.name, stop),
            "fresh": sum(r.fresh for r in billed), "cached": cached, "written": sum(r.written for r in billed),
            "output": sum(r.output for r in billed), "extra_input": sum(r.extra_input for r in billed),
            "extra_output": sum(r.extra_output for r in billed),
            "cached_share": round(cached / inputs, 4) if inputs else 0.0,
            "dollars": round(sum(r.dollars for r in counted), 6),
            "dollars_as_replayed": round(sum(r.dollars for r in rows), 6),  # had the API accepted everything
            "dollars_modelled": round(sum(r.dollars_modelled for r in counted), 6),
            "dollars_not_inherited": round(sum(r.dollars_not_inherited for r in counted), 6),
            "dollars_unscaled": round(sum(r.dollars_unscaled for r in counted), 6),
            "by_model": dict(sorted(by_model.items())), "by_chain": by_chain,
            "unpriced_requests": len(unpriced),
            "unpriced_tokens": sum(r.input + r.output + r.extra_input + r.extra_output for r in unpriced),
            "peak_context": max((r.input for r in billed), default=0),
            "peak_context_tokens": max((r.tokens for r in rows), default=0),
            "rejected": sum(1 for r in billed if r.rejected),
            "prunes": sum(1 for _, e in events if e.kind == "prune"),
            "compactions": [{"request": row.request, "tokens_before": e.tokens_before, "tokens_after": e.tokens_after}
                            for row, e in events if e.kind == "compact"],
            "truncations": sum(1 for _, e in events if e.kind == "truncate"),
            "clearings": sum(1 for _, e in events if e.kind == "clear"),
            "removed_tokens": sum(e.removed for _, e in events if e.removed > 0),
            "facts_missing_max": max(facts) if facts else None,
            "requests_missing_facts": sum(1 for f in facts if f) if facts else None,
            "seconds": round(self.seconds, 3),
            **self.measures,
        }
