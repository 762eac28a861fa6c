"""One strategy's run over every chain: its state per chain, its bills under each lens, its rows.

Three bills are kept per request, each a named lens with its own cache state
per chain:

* ``modelled``: provider tokens (the request's token scale), recorded misses
  inherited where the recording marks them (``Request.inherit``);
* ``not_inherited``: the same without inherited misses (the cache model alone);
* ``unscaled``: our own token counts, inherited misses.

``as_recorded`` pays what the recording says (its ``dollars`` come from the
recorded usage at its model's list prices); every other strategy pays its
``modelled`` bill. A change of model within a chain starts every lens's cache
afresh (a cache belongs to one model).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from ..model import Message
from .cache import CacheModel, CacheState, CacheUsage
from .facts import FactBook, FactCheck
from .prices import ModelPrice
from .recording import ChainView, conversation_request
from .requests import RecordedUsage, Request, price_of, window_of_request
from .rows import RequestRow, StrategyRun
from .scale import UNSCALED, TokenScale
from .settings import ReplaySettings
from .strategy import ReplayEnv, Step, Strategy
from .wire import TokenBook, Wire

#: What a lane calls after each strategy step: ``observer(request, wire)`` (context recall).
Observer = Callable[[Request, Wire], None]


@dataclass(frozen=True, slots=True)
class Bill:
    usage: CacheUsage
    dollars: float


@dataclass(frozen=True, slots=True)
class Lens:
    name: str
    scaled: bool  # provider tokens (the request's scale) or our own counts
    inherits: bool  # recorded misses inherited
    same_as: str = ""  # a lens that always gives the same bill (its state is shared)


#: The lenses, in the order they are computed (a lens may share an earlier one's bill).
LENSES = ("modelled", "not_inherited", "unscaled")


def lenses(requests: Sequence[Request], inherit_cold: bool) -> tuple[Lens, ...]:
    """The three lenses; one that gives the same bill as an earlier one shares it (no inherited miss and
    no inherited warm read in the session: ``not_inherited`` is ``modelled``; every scale the identity:
    ``unscaled`` is). A warm read counts: ``modelled`` takes it and ``not_inherited`` does not, so sharing
    on inherited misses alone made request 0's cache-only figures depend on whether a LATER request was an
    inherited miss (a cut session gave other figures). ``unscaled`` bills our own count of a reply's
    tokens where the scaled lenses bill the recorded output, so it shares ``modelled``'s bill only when no
    request records usage either: sharing on identity scales alone made request 0's ``dollars_unscaled``
    depend on whether a LATER request's scale was fitted (the same defect, found by the causality property)."""
    any_inherited = inherit_cold and any(r.inherit or r.warm_read for r in requests)
    unscaled_is_modelled = all((r.scale is None or r.scale.identity) and r.recorded is None for r in requests)
    return (Lens("modelled", True, inherit_cold),
            Lens("not_inherited", True, False, "" if any_inherited else "modelled"),
            Lens("unscaled", False, inherit_cold, "modelled" if unscaled_is_modelled else ""))


def recorded_dollars(price: ModelPrice, rec: RecordedUsage) -> float:
    """The recorded usage at ``price``'s list prices (1-hour writes at the 1-hour write price)."""
    five = rec.cache_write - rec.cache_write_1h
    return (price.dollars(input=rec.input, cached=rec.cache_read, written=five, output=rec.output, ttl="5m")
            + price.dollars(input=0, cached=0, written=rec.cache_write_1h, output=0, ttl="1h"))


def _warm(model: CacheModel, state: CacheState, wire: Wire, price: ModelPrice, scale: TokenScale, usage: CacheUsage,
          read: int) -> CacheUsage:
    """An inherited warm read: the recording read ``read`` tokens where the cache model says the entry
    lapsed (or never was): that much is read here too, no more (and, after a lapse, no more than this
    strategy's own prefix still held)."""
    total = usage.input
    cached = min(read, total)
    if usage.miss == "ttl":
        alive = model.quote(state, wire, price=price, scale=scale, time=None)  # as if it had not expired
        cached = min(cached, alive.cached) if alive.cached else cached
    if cached <= usage.cached:
        return usage
    if usage.written or not usage.fresh:
        return CacheUsage(cached, total - cached, 0, "", usage.hit_position)
    return CacheUsage(cached, 0, total - cached, "", usage.hit_position)


class ChainLane:
    """One strategy on one chain: its own strategy instance, wire, cache states and facts check."""

    def __init__(self, strategy: Strategy, env: ReplayEnv, view: ChainView, counterfactual: bool,
                 facts: FactBook | None, lens_names: Sequence[str]):
        self.strategy, self.env, self.view, self.counterfactual = strategy, env, view, counterfactual
        self.states: dict[str, CacheState] = {name: CacheState() for name in lens_names}
        self.model: str | None = None
        self.model_changed = False  # this request's model differs from the chain's previous one
        self.previous = 0  # position (in env.session) after the previous request's new messages
        self.check = FactCheck(facts) if facts is not None else None

    def step(self, req: Request) -> tuple[Request, Step, Sequence[Message]]:
        seen = conversation_request(req, self.view) if self.counterfactual else req
        new = self.env.session.messages[self.previous:seen.position]
        self.previous = seen.position
        aborted = req.recorded is not None and req.recorded.aborted  # never reached a cache
        model = price_of(req).model
        self.model_changed = not aborted and self.model is not None and self.model != model
        if self.model_changed:
            for name in self.states:  # a cache belongs to one model: a change of model starts afresh
                self.states[name] = CacheState()
        if not aborted:
            self.model = model
        return seen, self.strategy.step(seen, new), new


class Lane:
    """One strategy over every chain, in the session's request order."""

    def __init__(self, name: str, summary: str, make_chain_lane: Callable[[str, list[str]], ChainLane],
                 lens_set: tuple[Lens, ...], snapshots: bool, settings: ReplaySettings, book: TokenBook,
                 observer: Observer | None = None):
        self.run = StrategyRun(name=name, summary=summary, snapshots=[] if snapshots else None)
        self.lenses = lens_set
        self.make_chain_lane = make_chain_lane
        self.chains: dict[str, ChainLane] = {}
        self.settings, self.book = settings, book
        self.use_recorded = name == "as_recorded"
        self.observer = observer  # sees each request's context: observer(request, wire) (context recall)

    def chain(self, chain: str) -> ChainLane:
        lane = self.chains.get(chain)
        if lane is None:
            lane = self.chains[chain] = self.make_chain_lane(chain, [lens.name for lens in self.lenses
                                                                     if not lens.same_as])
        return lane

    def request(self, req: Request) -> None:
        lane = self.chain(req.chain)
        seen, step, _ = lane.step(req)
        strat = lane.strategy
        wire = strat.wire  # a strategy may swap in another wire
        run, rec, price = self.run, req.recorded, price_of(req)
        if run.snapshots is not None:
            run.snapshots.append((tuple(wire.messages), dict(wire.substitutes)))
        if self.observer is not None:
            self.observer(req, wire)
        common: dict[str, Any] = dict(request=req.index, chain=req.chain, position=req.position, turn=req.turn,
                      model=price.model, priced=req.priced, window=req.window, tokens=wire.tokens,
                      changed_at=wire.changed_at, events=step.events)
        if rec is not None and rec.aborted:
            # Nothing was billed, and the cache saw nothing: later requests compare with the last billed one.
            run.rows.append(RequestRow(**common, messages=len(wire), input=0, cached=0, written=0, fresh=0,
                                       output=0, dollars=0.0, dollars_modelled=0.0, dollars_not_inherited=0.0,
                                       dollars_unscaled=0.0, miss="aborted", aborted=True))
            wire.mark()
            return
        bills = self._bills(lane, req, step)
        modelled = bills["modelled"]
        scale = req.scale or UNSCALED
        output = rec.output if rec is not None else scale.part(self.book.tokens(lane.env.session.messages[
            seen.position]))
        usage, dollars = modelled.usage, modelled.dollars
        if self.use_recorded and rec is not None:
            usage = CacheUsage(rec.cache_read, rec.cache_write, rec.input, "recorded" if rec.cold else "")
            dollars = recorded_dollars(price, rec)
        facts_missing = None
        if lane.check is not None:
            facts_missing = lane.check.update(seen.position, wire.ids, wire.entered, wire.left)
        run.rows.append(RequestRow(
            **common, messages=len(wire) + len(wire.substitutes), input=usage.input, cached=usage.cached,
            written=usage.written, fresh=usage.fresh, output=output, dollars=dollars,
            dollars_modelled=modelled.dollars, dollars_not_inherited=bills["not_inherited"].dollars,
            dollars_unscaled=bills["unscaled"].dollars, miss=usage.miss,
            # what the recording sent was accepted: never rejected, whatever window the user asks about
            rejected=usage.input > window_of_request(req) and not (self.use_recorded and rec is not None),
            model_cached=bills["not_inherited"].usage.cached,
            model_miss=bills["not_inherited"].usage.miss,
            extra_input=sum(scale.part(c.input_tokens) for c in step.extra_calls),
            extra_output=sum(scale.part(c.output_tokens) for c in step.extra_calls),
            facts_missing=facts_missing))
        strat.billed(seen, modelled.usage, modelled.dollars, cold=self.settings.inherit_cold and req.inherit)
        wire.mark()

    def _bills(self, lane: ChainLane, req: Request, step: Step) -> Mapping[str, Bill]:
        price, ttl, rec = price_of(req), self.settings.ttl, req.recorded
        model = lane.env.cache_model(req)
        wire = lane.strategy.wire
        own_output = self.book.tokens(lane.env.session.messages[conversation_request(req, lane.view).position
                                                                if lane.counterfactual else req.position])
        out: dict[str, Bill] = {}
        for lens in self.lenses:
            if lens.same_as:
                out[lens.name] = out[lens.same_as]
                continue
            scale: TokenScale = (req.scale or UNSCALED) if lens.scaled else UNSCALED
            state = lane.states[lens.name]
            cold = lens.inherits and req.inherit
            cold_read = req.inherit_read if lens.scaled or not req.inherit_read else \
                (req.scale or UNSCALED).ours(req.inherit_read)
            usage = model.quote(state, wire, price=price, scale=scale, time=req.time, cold=cold, cold_read=cold_read)
            if lens.inherits and req.warm_read and usage.miss in ("ttl", "first"):
                usage = _warm(model, state, wire, price, scale, usage, req.warm_read if lens.scaled else
                              (req.scale or UNSCALED).ours(req.warm_read))
            if usage.miss == "first" and lane.model_changed:
                usage = replace(usage, miss="model")
            model.commit(state, wire, price=price, scale=scale, time=req.time, usage=usage)
            output = rec.output if rec is not None and lens.scaled else scale.part(own_output)
            dollars = price.dollars(input=usage.fresh, cached=usage.cached, written=usage.written, output=output,
                                    ttl=ttl)
            for call in step.extra_calls:
                dollars += price.dollars(input=scale.part(call.input_tokens), cached=0, written=0,
                                         output=scale.part(call.output_tokens))
            out[lens.name] = Bill(usage, dollars)
        return out
