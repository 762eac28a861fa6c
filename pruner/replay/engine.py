"""Run strategies over a session's requests and bill every request under its provider's cache.

``replay(session, strategies, settings=..., prices=...)`` first reads what the
recording says at every request of every chain (``pruner.replay.recording``:
its model's price and window, the token scale fitted on the recording up to
it, whether a recorded miss is inherited), then walks the requests in order;
at each one every strategy updates its context on that request's chain
(``Strategy.step``; one instance per chain), the provider's cache model splits
the input into cached / written / fresh tokens (from the wire's longest common
prefix with the chain's previous request), and the request's price row turns
that into dollars (``pruner.replay.lanes``). ``as_recorded`` follows the
recorded compactions and is billed from the recorded usage when the session
has it; every other strategy replays the conversation without them.

>>> from pruner.bench.workloads import generate
>>> r = replay(generate("tool_agent", turns=20, seed=0), ["full", "prune_every_request"])
>>> full, pruned = r.runs["full"], r.runs["prune_every_request"]
>>> len(full.rows) == len(r.requests), full.totals["dollars"] > 0, full.totals["feasible"]
(True, True, True)
>>> pruned.totals["peak_context"] <= full.totals["peak_context"]
True
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from ..errors import ConfigurationError
from ..model import MAIN_CHAIN, Message, Session
from .facts import FactBook
from .feed import PrunerFeed
from .lanes import ChainLane, Lane, Observer, lenses
from .ledger import LedgerEntry, ledger_of
from .prices import ModelPrice, PriceTable, default_prices
from .recording import ChainView, cache_models, default_price, prepare, window_of
from .detect import resolve_settings
from .requests import Request, has_recorded_usage, price_of
from .rows import RequestRow, StrategyRun
from .scale import TokenScale
from .settings import ReplaySettings
from .strategy import STRATEGIES, ReplayEnv, _load_builtin_strategies, strategy_names
from .wire import TokenBook, materialize

if TYPE_CHECKING:  # pragma: no cover
    from ..compaction.base import Summarizer
    from .recall import RecallCollector

_load_builtin_strategies()

__all__ = ["Replay", "RequestRow", "StrategyRun", "replay"]

#: Sessions whose contexts (summed over requests) hold at most this many message references keep
#: every request's context, so ``Replay.context`` answers at once; longer ones replay up to the request.
SNAPSHOT_LIMIT = 3_000_000


@dataclass(frozen=True)
class Replay:
    """Every strategy's requests, bills and events for one session."""

    session: Session
    settings: ReplaySettings
    price: ModelPrice  # the row of the settings' model: requests that record no model are billed at it
    prices_label: str
    requests: tuple[Request, ...]  # priced, windowed and scaled (pruner.replay.recording)
    runs: dict[str, StrategyRun]
    recorded_usage: bool
    notes: tuple[str, ...] = ()
    summarizer: Any = field(default=None, repr=False)
    pruner_seconds: float = 0.0  # the incremental pruners shared by the pruning strategies
    views: dict[str, ChainView] = field(default_factory=dict, repr=False)
    recall: Any = None  # pruner.replay.recall.RecallReport, when computed as it ran
    price_table: PriceTable | None = field(default=None, repr=False)  # the table every request was priced from
    # How the provider and model were chosen (``pruner.replay.detect``), None when the settings named them.
    model_choice: str | None = None

    @property
    def window(self) -> int:
        """The settings' model's window (each request's own is ``Request.window``)."""
        return window_of(self.settings, self.price, self.price)

    @property
    def chains(self) -> list[str]:
        return list(dict.fromkeys(r.chain for r in self.requests)) or [MAIN_CHAIN]

    @property
    def models(self) -> dict[str, ModelPrice]:
        """Every row a request was billed at, by model (unpriced models: zero-price rows), first use first."""
        out: dict[str, ModelPrice] = {}
        for r in self.requests:
            if r.recorded is None or not r.recorded.aborted:  # an aborted request is billed at no price
                price = price_of(r)
                out.setdefault(price.model, price)
        return out or {self.price.model: self.price}

    @property
    def unpriced_models(self) -> list[str]:
        return list(dict.fromkeys(price_of(r).model for r in self.requests if not r.priced))

    @property
    def scale(self) -> TokenScale:
        """The main chain's token scale at its last request (what the calibration reports)."""
        main = [r.scale for r in self.requests if r.chain == MAIN_CHAIN and r.scale is not None]
        return main[-1] if main else TokenScale(slope=float(self.settings.scale or 1.0),
                                                      source="given" if self.settings.scale else "none")

    @property
    def scale_source(self) -> str:
        return self.scale.source

    @property
    def money_label(self) -> str:
        """What every dollar figure says about how it was computed: each model's list prices used."""
        return "; ".join(money_label(p, self.settings.ttl) for p in self.models.values()) + \
            f"; {self.prices_label}"

    @property
    def cache_description(self) -> str:
        models = cache_models(self.settings)
        rows = [p for p in self.models.values() if not p.source.startswith("unpriced")] or [self.price]
        return "; ".join(dict.fromkeys(models[p.provider].describe(p) for p in rows))

    @cached_property
    def ledger(self) -> tuple[LedgerEntry, ...]:
        """The cache ledger: one entry per recorded request (``pruner.replay.ledger``)."""
        return ledger_of(self)

    def context(self, strategy: str, request: int) -> list[Message]:
        """The exact messages sent at ``request`` under ``strategy`` on that request's chain (placeholders
        and summaries included, placeholders as tool messages with ``metadata["kind"] == "placeholder"``)."""
        if strategy not in self.runs:
            raise ConfigurationError(f"strategy {strategy!r} was not replayed; replayed: {', '.join(self.runs)}")
        if not self.requests:
            raise ConfigurationError("this session has no requests (no assistant message a model produced)")
        if not 0 <= request < len(self.requests):
            raise ConfigurationError(f"request {request} does not exist; this session has requests "
                                     f"0 to {len(self.requests) - 1}")
        run = self.runs[strategy]
        if run.snapshots is not None:
            messages, subs = run.snapshots[request]
            return materialize(messages, subs)
        runner = _Runner(self.session, self.settings, self.requests, self.views, summarizer=self.summarizer)
        return runner.context_at(strategy, request)


def money_label(price: ModelPrice, ttl: str = "5m") -> str:
    if price.source.startswith("unpriced"):
        return f"{price.model}: unpriced (not in the price table; its requests are counted, not billed)"
    return (f"{price.model} ({price.provider}) list prices {price.input:g}/{price.cached_input:g}/"
            f"{price.write_price(ttl):g}/{price.output:g} USD per MTok input/cached/write/output")


class _Runner:
    def __init__(self, session: Session, settings: ReplaySettings, requests: tuple[Request, ...],
                 views: dict[str, ChainView], *, summarizer: Summarizer | None = None,
                 book: TokenBook | None = None):
        self.session, self.settings, self.requests, self.views = session, settings, requests, views
        self.book = book or TokenBook(settings.prune.encoding)
        if book is None:
            for _, s in session.chains:
                self.book.add_all(s.messages)
        self.summarizer = summarizer
        self.models = cache_models(settings)
        self.envs: dict[tuple[str, bool], ReplayEnv] = {}
        self.needs_feed = False
        self.facts: FactBook | None = None

    def env(self, chain: str, counterfactual: bool, track_ids: bool) -> ReplayEnv:
        """One environment per chain and view, shared by the strategies of a replay (and their feed)."""
        key = (chain, counterfactual)
        env = self.envs.get(key)
        if env is None:
            view = self.views[chain]
            session = view.conversation if counterfactual else view.recording
            index_of = {m.id: i for i, m in enumerate(session.messages)}
            call_owner = {c.id: i for i, m in enumerate(session.messages) for c in m.tool_calls}
            feed = PrunerFeed(session, self.settings.prune, index_of, call_owner) if self.needs_feed else None
            env = self.envs[key] = ReplayEnv(session, self.settings, self.book, chain=chain, track_ids=track_ids,
                                             summarizer=self.summarizer, cache_models=self.models, pruner_feed=feed)
        return env

    def lane(self, name: str, snapshots: bool, track_ids: bool = False, observer: Observer | None = None) -> Lane:
        spec = STRATEGIES.get(name)
        if spec is None:
            raise ConfigurationError(f"unknown strategy {name!r}; choose from {', '.join(strategy_names())}")
        facts = self.facts

        def make(chain: str, lens_names: Sequence[str]) -> ChainLane:
            env = self.env(chain, spec.counterfactual, track_ids)
            book = facts if chain == MAIN_CHAIN else None
            return ChainLane(spec.factory(env), env, self.views[chain], spec.counterfactual, book, lens_names)

        lane = Lane(name, spec.summary, make, lenses(self.requests, self.settings.inherit_cold), snapshots,
                    self.settings, self.book, observer)
        providers = spec.factory.providers
        if providers is not None:
            used = sorted({price_of(r).provider for r in self.requests  # aborted ones reached no provider
                           if r.recorded is None or not r.recorded.aborted} - set(providers))
            if used:
                lane.run.applicable = False
                lane.run.not_applicable_reason = (
                    f"{name} is a feature of the {', '.join(providers)} API; this session's requests go to "
                    f"{', '.join(used)}: not applicable")
        return lane

    def context_at(self, name: str, request: int) -> list[Message]:
        self.needs_feed = STRATEGIES[name].factory.uses_pruner
        lane = self.lane(name, snapshots=False)
        target = self.requests[request]
        for req in self.requests[:request + 1]:
            if req.chain == target.chain:
                lane.request(req)  # billed too: a strategy may learn from its bills (cache_aware_prune)
        wire = lane.chain(target.chain).strategy.wire
        return materialize(tuple(wire.messages), dict(wire.substitutes))

    def run_all(self, names: Sequence[str], facts: FactBook | None, snapshots: bool,
                progress: Callable[[str], None] | None = None,
                observe: Callable[[str], Observer] | None = None) -> tuple[dict[str, StrategyRun], float]:
        """Every strategy in lock-step, request by request: the strategies that prune share one
        incremental pruner per chain (its verdicts do not depend on the strategy). Returns the runs and
        the seconds the shared pruners took (each run's ``seconds`` leaves it out)."""
        self.needs_feed = any(STRATEGIES[n].factory.uses_pruner for n in names if n in STRATEGIES)
        self.facts = facts
        track = facts is not None or observe is not None
        lanes = [self.lane(name, snapshots, track_ids=track, observer=observe(name) if observe else None)
                 for name in names]
        clock = _time.perf_counter

        def shared() -> float:
            seconds: float = sum(e.pruner_feed.seconds for e in self.envs.values() if e.pruner_feed is not None)
            return seconds

        for req in self.requests:
            for lane in lanes:
                if progress and req.index == 0:
                    progress(lane.run.name)
                before = shared()
                started = clock()
                lane.request(req)
                lane.run.seconds += clock() - started - (shared() - before)
        return {lane.run.name: lane.run for lane in lanes}, shared()


def replay(session: Session, strategies: Iterable[str] | None = None, *, settings: ReplaySettings | None = None,
           prices: PriceTable | None = None, summarizer: Summarizer | None = None, snapshots: bool | None = None,
           progress: Callable[[str], None] | None = None, recall: bool = True) -> Replay:
    """Replay ``session`` under each of ``strategies`` (default: all registered) and bill every request.

    ``settings``: a provider or model they leave None is the session's, detected as ``pruner replay``
    detects it (``pruner.replay.detect.resolve_settings``; ``Replay.model_choice`` says how).
    ``snapshots``: keep every request's context for ``Replay.context`` (default: when small).
    ``recall``: measure each strategy's context recall as it runs (``pruner.replay.recall``, where it exists).
    Raises ``ConfigurationError`` for an unknown strategy, provider or model.
    """
    given = settings or ReplaySettings()
    prices = prices or default_prices()
    settings, model_choice = resolve_settings(session, given, prices)
    names = list(dict.fromkeys(strategies)) if strategies is not None else strategy_names()
    for name in names:
        if name not in STRATEGIES:
            raise ConfigurationError(f"unknown strategy {name!r}; choose from {', '.join(strategy_names())}")
    if not names:
        raise ConfigurationError("no strategies to replay")
    price = default_price(settings, prices)
    window_of(settings, price, price)  # a window for requests that record no model, or a clear error
    book = TokenBook(settings.prune.encoding)
    for _, conversation in session.chains:
        book.add_all(conversation.messages)
    requests, views = prepare(session, settings, prices, book)
    recorded = has_recorded_usage(requests)
    notes = []
    if not recorded:
        notes.append("the session records no usage: every figure comes from the cache model and our own token "
                     "counts (tiktoken), with no inherited cold events")
    else:
        notes.append("provider tokens at request k = the recorded size there, minus what a strategy removed "
                     "scaled by the tokenizer ratio fitted on the recording up to k (see docs/calibration.md); a "
                     "recorded miss nothing in the transcript explains is a miss for every strategy (inherited)")
    unpriced = list(dict.fromkeys(price_of(r).model for r in requests
                                  if not r.priced and not (r.recorded is not None and r.recorded.aborted)))
    if unpriced:
        notes.append(f"no prices for {', '.join(unpriced)}: those requests are counted (tokens) but not billed; "
                     "give a price table with a row for them")
    if any(r.recorded is not None and r.recorded.aborted for r in requests):
        notes.append("requests recorded as aborted (zero usage) are billed at $0 for every strategy")
    facts = FactBook.of(session)
    runner = _Runner(session, settings, requests, views, summarizer=summarizer, book=book)
    if snapshots is None:
        size = sum(len(s.messages) for _, s in session.chains)
        snapshots = len(requests) * (size + 1) <= SNAPSHOT_LIMIT
    collector = _recall_collector(session, requests) if recall else None
    runs, pruner_seconds = runner.run_all(names, facts, snapshots, progress,
                                          collector.observer if collector is not None else None)
    report = collector.report(names) if collector is not None else None
    if report is not None:
        from .recall import measures
        for name, run in runs.items():
            run.measures.update(measures(report.strategies[name]))
    return Replay(session=session, settings=settings, price=price, prices_label=prices.label, requests=requests,
                  runs=runs, recorded_usage=recorded, notes=tuple(notes), summarizer=summarizer,
                  pruner_seconds=pruner_seconds, views=views, recall=report, price_table=prices,
                  model_choice=model_choice)


def _recall_collector(session: Session, requests: tuple[Request, ...]) -> RecallCollector | None:
    """The context-recall collector (branch ``recall``), or None where that module is not there."""
    try:
        from .recall import RecallCollector
        from .summary_quality import offline_same_length
    except ImportError:
        return None
    return RecallCollector(session, requests, offline_budget=offline_same_length)
