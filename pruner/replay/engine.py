"""Run strategies over a session's requests and bill every request under a provider's cache.

``replay(session, strategies, settings=..., prices=...)`` walks the requests in
order; at each one every strategy updates its context (``Strategy.step``), the
provider's cache model splits the input into cached / written / fresh tokens
(from the wire's longest common prefix with the strategy's previous request),
and the price table turns that into dollars. Token counts are ours (tiktoken);
provider figures are ours times the measured ratio (``scale``; see
``pruner.replay.calibration``). ``as_recorded`` is billed from the recorded
usage when the session has it.

Three bills are kept per strategy: the main one (provider units, recorded cold
events inherited), the same without the inherited events, and the unscaled one
(our own token counts), so every figure can be shown beside the others.

>>> from pruner.bench.workloads import generate
>>> r = replay(generate("tool_agent", turns=20, seed=0), ["full", "prune_every_request"])
>>> full, pruned = r.runs["full"], r.runs["prune_every_request"]
>>> len(full.rows) == len(r.requests), full.totals["dollars"] > 0
(True, True)
>>> pruned.totals["peak_context"] <= full.totals["peak_context"]
True
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable, Sequence

from ..errors import ConfigurationError
from ..model import Message, Session
from .cache import CACHE_MODELS, CacheModel, CacheUsage
from .facts import FactBook, FactCheck
from .ledger import LedgerEntry, ledger_of
from .prices import ModelPrice, PriceTable, default_prices
from .requests import Request, find_requests, has_recorded_usage
from .settings import ReplaySettings
from .strategy import STRATEGIES, Event, ReplayEnv, Strategy, _load_builtin_strategies, strategy_names
from .wire import TokenBook, materialize

_load_builtin_strategies()

#: Sessions whose contexts (summed over requests) hold at most this many message references keep
#: every request's context, so ``Replay.context`` answers at once; longer ones replay up to the request.
SNAPSHOT_LIMIT = 3_000_000


@dataclass(frozen=True, slots=True)
class RequestRow:
    request: int
    position: int  # the assistant message this request produced (index in the session)
    turn: int
    messages: int  # messages sent (placeholders included)
    tokens: int  # context tokens, ours
    input: int  # provider tokens: cached + written + fresh
    cached: int
    written: int
    fresh: int
    output: int
    dollars: float  # this request (and its extra calls), provider units, inherited cold events
    dollars_not_inherited: float  # the same without inherited cold events
    dollars_unscaled: float  # our own token counts, inherited cold events
    miss: str  # why the cache was not fully used ("" when it was)
    rejected: bool  # the input exceeds the model's window: the API would refuse it
    aborted: bool  # recorded as aborted (nothing billed, for every strategy)
    changed_at: int  # first message position that differs from the previous request
    events: tuple[Event, ...] = ()
    model_cached: int = 0  # what the cache model alone reads here (no inherited cold events)
    model_miss: str = ""  # and why it misses, if it does
    extra_input: int = 0  # provider tokens of extra calls (summarisation)
    extra_output: int = 0
    facts_missing: int | None = None

    @property
    def cached_share(self) -> float:
        return self.cached / self.input if self.input else 0.0


@dataclass
class StrategyRun:
    name: str
    summary: str
    rows: list[RequestRow] = field(default_factory=list)
    seconds: float = 0.0
    snapshots: list[tuple[tuple[Message, ...], dict[str, str]]] | None = None
    measures: dict[str, Any] = field(default_factory=dict)  # added to the totals (context recall)

    @property
    def events(self) -> list[tuple[RequestRow, Event]]:
        return [(row, e) for row in self.rows for e in row.events]

    @property
    def totals(self) -> dict[str, Any]:
        rows = self.rows
        billed = [r for r in rows if not r.aborted]
        inputs = sum(r.input for r in billed)
        cached = sum(r.cached for r in billed)
        events = self.events
        facts = [r.facts_missing for r in rows if r.facts_missing is not None]
        return {
            "strategy": self.name, "requests": len(rows), "billed_requests": len(billed),
            "fresh": sum(r.fresh for r in billed), "cached": cached, "written": sum(r.written for r in billed),
            "output": sum(r.output for r in billed), "extra_input": sum(r.extra_input for r in billed),
            "extra_output": sum(r.extra_output for r in billed),
            "cached_share": round(cached / inputs, 4) if inputs else 0.0,
            "dollars": round(sum(r.dollars for r in rows), 6),
            "dollars_not_inherited": round(sum(r.dollars_not_inherited for r in rows), 6),
            "dollars_unscaled": round(sum(r.dollars_unscaled for r in rows), 6),
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


@dataclass(frozen=True)
class Replay:
    """Every strategy's requests, bills and events for one session."""

    session: Session
    settings: ReplaySettings
    price: ModelPrice
    prices_label: str
    window: int  # provider tokens
    scale: float  # provider tokens per token of ours
    scale_source: str  # "measured", "given" or "none" (no recorded usage: our counts are used as they are)
    requests: tuple[Request, ...]
    runs: dict[str, StrategyRun]
    cache_description: str
    recorded_usage: bool
    notes: tuple[str, ...] = ()
    summarizer: Any = field(default=None, repr=False)
    pruner_seconds: float = 0.0  # the incremental pruner shared by the pruning strategies
    recall: Any = None  # pruner.replay.recall.RecallReport, when computed as it ran

    @property
    def money_label(self) -> str:
        """What every dollar figure says about how it was computed."""
        return (f"{self.price.model} ({self.price.provider}) list prices, {self.prices_label}; "
                f"{self.price.input:g}/{self.price.cached_input:g}/{self.price.write_price(self.settings.ttl):g}/"
                f"{self.price.output:g} USD per MTok input/cached/write/output")

    @cached_property
    def ledger(self) -> tuple[LedgerEntry, ...]:
        """The cache ledger: one entry per recorded request (``pruner.replay.ledger``)."""
        return ledger_of(self)

    def context(self, strategy: str, request: int) -> list[Message]:
        """The exact messages sent at ``request`` under ``strategy`` (placeholders and summaries
        included, placeholders as tool messages with ``metadata["kind"] == "placeholder"``)."""
        if strategy not in self.runs:
            raise ConfigurationError(f"strategy {strategy!r} was not replayed; replayed: {', '.join(self.runs)}")
        if not 0 <= request < len(self.requests):
            raise ConfigurationError(f"request {request} does not exist; this session has requests "
                                     f"0 to {len(self.requests) - 1}")
        run = self.runs[strategy]
        if run.snapshots is not None:
            messages, subs = run.snapshots[request]
            return materialize(messages, subs)
        runner = _Runner(self.session, self.settings, self.price, self.window, self.scale, self.requests,
                         summarizer=self.summarizer)
        return runner.context_at(strategy, request)


class _Runner:
    def __init__(self, session: Session, settings: ReplaySettings, price: ModelPrice, window: int, scale: float,
                 requests: tuple[Request, ...], *, summarizer=None, book: TokenBook | None = None):
        self.session, self.settings, self.price = session, settings, price
        self.window, self.scale, self.requests = window, scale, requests
        self.book = book or TokenBook(settings.prune.encoding)
        if book is None:
            self.book.add_all(session.messages)
        self.summarizer = summarizer
        self.model_cls = CACHE_MODELS[settings.provider]
        self.recorded_cold = any(r.recorded is not None and r.recorded.cold for r in requests)

    def cache_model(self, scale: float | None = None) -> CacheModel:
        return self.model_cls(self.price, scale=self.scale if scale is None else scale, ttl=self.settings.ttl)

    def env(self, *, track_ids: bool = False) -> ReplayEnv:
        env = ReplayEnv(self.session, self.settings, self.book, scale=self.scale, window=self.window,
                        cache_model=self.cache_model)
        env.track_ids = track_ids
        env.summarizer = self.summarizer
        return env

    def strategy(self, name: str, env: ReplayEnv) -> Strategy:
        spec = STRATEGIES.get(name)
        if spec is None:
            raise ConfigurationError(f"unknown strategy {name!r}; choose from {', '.join(strategy_names())}")
        return spec.factory(env)

    def context_at(self, name: str, request: int) -> list[Message]:
        strat = self.strategy(name, self.env())
        msgs = self.session.messages
        prev = 0
        for req in self.requests[:request + 1]:
            strat.step(req, msgs[prev:req.position])
            prev = req.position
        return strat.wire.materialize()

    def run_all(self, names: Sequence[str], facts: FactBook | None, snapshots: bool,
                progress: Callable[[str], None] | None = None,
                observe: Callable[[str], Callable] | None = None) -> tuple[dict[str, StrategyRun], float]:
        """Every strategy in lock-step, request by request: the strategies that prune share one
        incremental pruner (its verdicts do not depend on the strategy). Returns the runs and the
        seconds the shared pruner took (each run's ``seconds`` leaves it out)."""
        env = self.env(track_ids=facts is not None or observe is not None)
        lanes = [_Lane(self, name, env, facts, snapshots, observe) for name in names]
        msgs = self.session.messages
        prev = 0
        clock = _time.perf_counter
        feed = env.pruner_feed
        for req in self.requests:
            new = msgs[prev:req.position]
            prev = req.position
            for lane in lanes:
                if progress and req.index == 0:
                    progress(lane.run.name)
                shared_before = feed.seconds if feed else 0.0
                started = clock()
                lane.request(req, new)
                feed = env.pruner_feed
                lane.run.seconds += clock() - started - ((feed.seconds if feed else 0.0) - shared_before)
        return {lane.run.name: lane.run for lane in lanes}, (feed.seconds if feed else 0.0)


class _Lane:
    """One strategy's run: its state, its bills under each lens, its rows."""

    def __init__(self, runner: _Runner, name: str, env: ReplayEnv, facts: FactBook | None, snapshots: bool,
                 observe: Callable[[str], Callable] | None = None):
        self.runner = runner
        self.observer = observe(name) if observe is not None else None  # sees each request's context
        self.strat = runner.strategy(name, env)
        self.run = StrategyRun(name=name, summary=self.strat.summary, snapshots=[] if snapshots else None)
        self.check = FactCheck(facts) if facts is not None else None
        inherit = runner.settings.inherit_cold
        self.scaled = scaled = runner.cache_model()
        lenses = [(scaled, scaled.new_state(), inherit)]
        # Without inherited cold events (none recorded: the same bill) the second lens is the first.
        lenses.append((scaled, scaled.new_state(), False) if inherit and runner.recorded_cold else lenses[0])
        if runner.scale != 1.0:
            plain = runner.cache_model(1.0)
            lenses.append((plain, plain.new_state(), inherit))
        else:
            lenses.append(lenses[0])
        self.lenses = lenses
        self.use_recorded = name == "as_recorded"

    def request(self, req: Request, new: Sequence[Message]) -> None:
        runner, run, strat = self.runner, self.run, self.strat
        price, ttl, book, msgs = runner.price, runner.settings.ttl, runner.book, runner.session.messages
        step = strat.step(req, new)
        wire = strat.wire  # a strategy may swap in another wire
        rec = req.recorded
        if run.snapshots is not None:
            run.snapshots.append((tuple(wire.messages), dict(wire.substitutes)))
        if self.observer is not None:
            self.observer(req, wire)
        if rec is not None and rec.aborted:
            # Nothing was billed, and the cache saw nothing: later requests compare with the last billed one.
            run.rows.append(RequestRow(req.index, req.position, req.turn, len(wire), wire.tokens, 0, 0, 0, 0, 0,
                                       0.0, 0.0, 0.0, "aborted", False, True, wire.changed_at, step.events))
            return
        cold = rec is not None and rec.cold
        bills: list[tuple[CacheUsage, float]] = []
        seen: dict[int, tuple[CacheUsage, float]] = {}
        own_output = book.tokens(msgs[req.position])
        for model, state, inherits in self.lenses:
            key = id(state)
            if key in seen:
                bills.append(seen[key])
                continue
            usage = model.quote(state, wire, time=req.time, cold=inherits and cold)
            model.commit(state, wire, time=req.time, usage=usage)
            output = rec.output if rec is not None and model.scale == runner.scale else model.units(own_output)
            dollars = price.dollars(input=usage.fresh, cached=usage.cached, written=usage.written, output=output,
                                    ttl=ttl)
            for call in step.extra_calls:
                dollars += price.dollars(input=model.units(call.input_tokens), cached=0, written=0,
                                         output=model.units(call.output_tokens))
            seen[key] = (usage, dollars)
            bills.append((usage, dollars))
        (usage, dollars), (model_usage, not_inherited), (_, unscaled) = bills
        scaled = self.scaled
        output = rec.output if rec is not None else scaled.units(own_output)
        if self.use_recorded and rec is not None:
            usage = CacheUsage(rec.cache_read, rec.cache_write, rec.input, "recorded" if rec.cold else "")
            dollars = price.dollars(input=rec.input, cached=rec.cache_read, written=rec.cache_write,
                                    output=rec.output, ttl=ttl)
        facts_missing = None
        if self.check is not None:
            facts_missing = self.check.update(req.position, wire.ids, wire.entered, wire.left)
        extra_in = sum(scaled.units(c.input_tokens) for c in step.extra_calls)
        extra_out = sum(scaled.units(c.output_tokens) for c in step.extra_calls)
        n_messages = len(wire) + len(wire.substitutes)
        run.rows.append(RequestRow(
            req.index, req.position, req.turn, n_messages, wire.tokens, usage.input, usage.cached,
            usage.written, usage.fresh, output, dollars, not_inherited, unscaled, usage.miss,
            usage.input > runner.window, False, wire.changed_at, step.events, model_usage.cached, model_usage.miss,
            extra_in, extra_out, facts_missing))
        strat.billed(req, usage, dollars, cold=runner.settings.inherit_cold and cold)
        wire.mark()


def measure_scale(session: Session, requests: Sequence[Request], book: TokenBook) -> float | None:
    """Provider tokens per token of ours: the context the provider reported at the last request
    with recorded usage, over our count of what ``as_recorded`` sent there (None without usage)."""
    last = next((r for r in reversed(requests) if r.recorded is not None and not r.recorded.aborted), None)
    if last is None:
        return None
    ours = recorded_context_tokens(session, requests, book, last.index)
    return last.recorded.context / ours if ours else None


def recorded_context_tokens(session: Session, requests: Sequence[Request], book: TokenBook, upto: int) -> int:
    """Our token count of what ``as_recorded`` sends at request ``upto``."""
    from .strategies.as_recorded import AsRecorded

    env = ReplayEnv(session, ReplaySettings(), book, scale=1.0, window=1, cache_model=lambda: None)
    strat = AsRecorded(env)
    prev = 0
    for req in requests[:upto + 1]:
        strat.step(req, session.messages[prev:req.position])
        prev = req.position
    return strat.wire.tokens


def resolve_price(settings: ReplaySettings, prices: PriceTable) -> ModelPrice:
    return prices.get(settings.model_name, settings.provider)


def replay(session: Session, strategies: Iterable[str] | None = None, *, settings: ReplaySettings | None = None,
           prices: PriceTable | None = None, summarizer=None, snapshots: bool | None = None,
           progress: Callable[[str], None] | None = None, recall: bool = True) -> Replay:
    """Replay ``session`` under each of ``strategies`` (default: all registered) and bill every request.

    ``snapshots``: keep every request's context for ``Replay.context`` (default: when small).
    ``recall``: measure each strategy's context recall as it runs (``pruner.replay.recall``).
    Raises ``ConfigurationError`` for an unknown strategy, provider or model.
    """
    settings = settings or ReplaySettings()
    prices = prices or default_prices()
    names = list(dict.fromkeys(strategies)) if strategies is not None else strategy_names()
    for name in names:
        if name not in STRATEGIES:
            raise ConfigurationError(f"unknown strategy {name!r}; choose from {', '.join(strategy_names())}")
    if not names:
        raise ConfigurationError("no strategies to replay")
    price = resolve_price(settings, prices)
    window = settings.context_window or price.context_window
    if window is None:
        raise ConfigurationError(f"the price table gives no context window for {price.model}; pass one "
                                 "(--context-window)")
    requests = find_requests(session)
    book = TokenBook(settings.prune.encoding)
    book.add_all(session.messages)
    recorded = has_recorded_usage(requests)
    notes = []
    if settings.scale is not None:
        scale, source = float(settings.scale), "given"
    else:
        measured = measure_scale(session, requests, book)
        scale, source = (measured, "measured") if measured else (1.0, "none")
    if not recorded:
        notes.append("the session records no usage: every figure comes from the cache model and our own token "
                     "counts (tiktoken), with no inherited cold events")
    else:
        notes.append(f"provider tokens = our tokens x {scale:.4f} (measured at the last request with recorded usage); "
                     "a request the recording shows cold is cold for every strategy (inherited)")
    if source == "measured" and not 0.5 <= scale <= 2:
        first = next(r for r in requests if r.recorded is not None and not r.recorded.aborted)
        notes.append(f"the ratio {scale:.2f} is far from 1: most of what was sent is not in the transcript (the "
                     f"first request recorded {first.recorded.context:,} tokens against our "
                     f"{recorded_context_tokens(session, requests, book, first.index):,}: system prompt and tools)")
    if any(r.recorded is not None and r.recorded.aborted for r in requests):
        notes.append("requests recorded as aborted (zero usage) are billed at $0 for every strategy")
    facts = FactBook.of(session)
    runner = _Runner(session, settings, price, window, scale, requests, summarizer=summarizer, book=book)
    if snapshots is None:
        snapshots = len(requests) * (len(session.messages) + 1) <= SNAPSHOT_LIMIT
    collector = None
    if recall:
        from .recall import RecallCollector, measures
        from .summary_quality import offline_same_length
        collector = RecallCollector(session, requests, offline_budget=offline_same_length)
    runs, pruner_seconds = runner.run_all(names, facts, snapshots, progress,
                                          collector.observer if collector is not None else None)
    report = collector.report(names) if collector is not None else None
    if report is not None:
        for name, run in runs.items():
            run.measures.update(measures(report.strategies[name]))
    return Replay(session=session, settings=settings, price=price, prices_label=prices.label, window=window,
                  scale=scale, scale_source=source, requests=requests, runs=runs,
                  cache_description=runner.cache_model().describe(), recorded_usage=recorded, notes=tuple(notes),
                  summarizer=summarizer, pruner_seconds=pruner_seconds, recall=report)
