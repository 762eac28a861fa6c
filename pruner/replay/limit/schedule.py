"""A schedule of actions, as a strategy the replay runs like any other (one module's job: what a
schedule sends at each request, and pricing one schedule through the real replay).

A *schedule* names, per request index, one action; a request it does not name is ``none``:

* ``none``: append the new messages as they are (the empty schedule is ``full``);
* ``drop``: append the new messages the incremental pruner keeps, with its placeholders for their
  calls (what the passes remove on arrival; the cached prefix is not touched, so it is free; a result
  whose call was sent earlier is sent as it is, since its placeholder would change the prefix);
* ``prune``: send the pruner's whole context now (every removal and restoration the three passes
  make at this request); the prefix changes at the first message that differs;
* ``compact``: summarise what would be sent now with the project's compactor (``Compactor``, the
  offline summariser unless the replay has another) and send the system messages, the summary and the
  newest messages; the summarisation is billed as ``compact`` bills it;
* ``prune+compact``: ``prune``, then ``compact`` (what ``prune_then_compact`` does when over the
  trigger).

After a compaction, ``prune`` sends the pruner's context from the compaction's first kept message
on, behind the summary (as ``prune_then_compact`` does). ``replay_plan`` prices a schedule with
the replay's own machinery (``prepare``, ``Lane``, the cache models, the recall collector), so a
schedule's dollars here are exactly what a strategy doing the same would be billed.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress, count
from operator import is_not
from typing import Any, Mapping, Protocol, Sequence

from ...engine.context import Context
from ...model import Message, Session
from ..detect import resolve_settings
from ..feed import PrunerFeed
from ..lanes import ChainLane, Lane, Lens, lenses
from ..prices import PriceTable, default_prices
from ..recording import default_price, prepare, window_of
from ..requests import Request
from ..rows import StrategyRun
from ..settings import ReplaySettings
from ..strategies.compactor import Compactor
from ..strategy import Event, ExtraCall, ReplayEnv, Step, Strategy
from ..wire import TokenBook

ACTIONS = ("drop", "prune", "compact", "prune+compact")
NAME = "scheduled"
SUMMARY = "a schedule of prunes and compactions chosen in hindsight (pruner.replay.limit)"


class Plan(Protocol):
    """What a schedule is to the strategy: the action at a request index (a dict is one)."""

    def get(self, index: int, default: str, /) -> str: ...


class Scheduled(Strategy):
    """Sends what ``plan`` (request index -> action) says at each request; see the module docstring.

    Not registered: it exists for the hindsight bound, and every instance has its own plan."""

    uses_pruner = True

    def __init__(self, env: ReplayEnv, plan: Plan):
        super().__init__(env)
        self.plan = plan
        self.feed = PrunerFeed.of(env)
        self.compactor = Compactor(env)

    def step(self, request: Request, new: Sequence[Message]) -> Step:
        action = self.plan.get(request.index, "none")
        wire, env = self.wire, self.env
        ctx, _ = self.feed.advance(request, new)  # every request: the feed is shared and fed in order
        before = wire.tokens + env.book.total(new)
        sent_before = len(wire)
        events: list[Event] = []
        if action in ("prune", "prune+compact"):
            self._send_pruned(ctx)
            if wire.changed_at < sent_before or wire.tokens < before:
                events.append(Event("prune", before, wire.tokens, wire.changed_at, "the scheduled prune"))
        elif action == "drop":
            self._append_kept(ctx, request.position - len(new), new)
        else:
            wire.extend(new)
        calls: tuple[ExtraCall, ...] = ()
        if action in ("compact", "prune+compact"):
            pre = wire.tokens
            done = self.compactor.run(wire.materialize(), request)
            if done is not None:
                first, index_of, owner = done.first_kept, env.index_of, env.call_owner
                session = env.session.messages
                tail = [m for m in wire.messages
                        if index_of.get(m.id, -1) >= first and session[index_of[m.id]] is m]
                subs = {cid: t for cid, t in wire.substitutes.items() if owner.get(cid, -1) >= first}
                self._send([*done.head, done.summary, *tail], subs, len(done.head) + 1)
                events.append(done.event(pre, wire.tokens))
                calls = done.calls
        return Step(events=tuple(events), extra_calls=calls)

    # -- what is sent ----------------------------------------------------------------------------

    def _append_kept(self, ctx: Context, start: int, new: Sequence[Message]) -> None:
        env, wire = self.env, self.wire
        index_of = env.index_of
        kept = ctx.messages[bisect_left(ctx.messages, start, key=lambda m: index_of[m.id]):]
        kept_ids = {m.id for m in kept}
        owner = env.call_owner
        # A result whose call is already sent stays: leaving it out would need a placeholder after the call.
        out = [m for m in new if m.id in kept_ids or (m.tool_call_id is not None
                                                        and owner.get(m.tool_call_id, start) < start)]
        wire.extend(out)
        for m in out:
            for c in m.tool_calls:
                text = ctx.placeholders.get(c.id)
                if text is not None and c.id not in {x.tool_call_id for x in out}:
                    wire.set_substitute(c.id, text, len(wire))

    def _send_pruned(self, ctx: Context) -> None:
        done = self.compactor.current
        if done is None:
            self._send(list(ctx.messages), dict(ctx.placeholders), 0, tokens=ctx.tokens)
            return
        index_of, owner, first = self.env.index_of, self.env.call_owner, done.first_kept
        tail = ctx.messages[bisect_left(ctx.messages, first, key=lambda m: index_of[m.id]):]
        subs = {cid: t for cid, t in ctx.placeholders.items() if owner.get(cid, -1) >= first}
        self._send([*done.head, done.summary, *tail], subs, len(done.head) + 1)

    def _send(self, messages: list[Message], subs: dict[str, str], offset: int, tokens: int | None = None) -> None:
        """Send ``messages`` with ``subs``; the prefix changes at the first message that differs or the
        first call whose placeholder differs (``offset``: messages before the session-ordered tail)."""
        wire, env = self.wire, self.env
        old = wire.messages
        lcp = next(compress(count(), map(is_not, old, messages)), min(len(old), len(messages)))
        changed = {cid for cid, _ in wire.substitutes.items() ^ subs.items()}
        first = lcp
        if changed:
            # Where a changed placeholder goes grows with its call's session position (a binary search's
            # answer never decreases with what it looks for, and an unknown call goes last): the earliest
            # call answers for all, one search instead of one per call.
            tail = messages[offset:] if offset else messages
            owner = env.call_owner
            cid = min(changed, key=lambda c: (0, owner[c]) if c in owner else (1, 0))
            first = min(first, offset + env.position_after_call(tail, cid))
        if tokens is None:
            book = env.book
            tokens = book.total(messages) + sum(book.text(t) for t in subs.values())
        wire.switch(messages, subs, tokens)
        wire.changed_at = min(wire.changed_at, first)


def build(session: Session, settings: ReplaySettings | None, prices: PriceTable | None,
          summarizer: Any = None) -> tuple[ReplaySettings, tuple[Request, ...], Any]:
    """What a replay prepares before any strategy: (settings, requests, runner) for ``session``."""
    from ..engine import _Runner

    prices = prices or default_prices()
    # the session's provider and model when the settings name neither, as the replay itself resolves them
    settings, _ = resolve_settings(session, settings or ReplaySettings(), prices)
    price = default_price(settings, prices)
    window_of(settings, price, price)
    book = TokenBook(settings.prune.encoding)
    for _, conversation in session.chains:
        book.add_all(conversation.messages)
    requests, views = prepare(session, settings, prices, book)
    runner = _Runner(session, settings, requests, views, summarizer=summarizer, book=book)
    runner.needs_feed = True
    return settings, requests, runner


def plan_lane(runner: Any, plan: Plan, lens_set: tuple[Lens, ...] | None = None, observer: Any = None) -> Lane:
    """A lane that runs ``Scheduled(plan)`` on every chain, as the replay runs a registered strategy."""
    requests = runner.requests

    def make(chain: str, lens_names: Sequence[str]) -> ChainLane:
        env = runner.env(chain, True, True)
        return ChainLane(Scheduled(env, plan), env, runner.views[chain], True, None, lens_names)

    lane_lenses = lens_set if lens_set is not None else lenses(requests, runner.settings.inherit_cold)
    return Lane(NAME, SUMMARY, make, lane_lenses, False, runner.settings, runner.book, observer)


def replay_plan(session: Session, plan: Mapping[int, str], *, settings: ReplaySettings | None = None,
                prices: PriceTable | None = None, summarizer: Any = None) -> StrategyRun:
    """``plan`` replayed through the replay's machinery: its run (rows, totals with context recall)."""
    from ..recall import RecallCollector, measures

    settings, requests, runner = build(session, settings, prices, summarizer)
    collector = RecallCollector(session, requests, facts=False)
    lane = plan_lane(runner, plan, observer=collector.observer(NAME))
    for req in requests:
        lane.request(req)
    run = lane.run
    run.measures.update(measures(collector.report([NAME]).strategies[NAME]))
    return run
