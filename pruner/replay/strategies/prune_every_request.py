"""``prune_every_request``: the incremental pruner's context before every request.

Each request appends the new messages to one ``IncrementalPruner`` and sends its
``context()``: the kept messages, and a placeholder for each kept call whose
result was pruned. Whenever pruning removes (or restores) a message that was
already sent, the prefix changes there and the cache is lost from that point.
"""

from __future__ import annotations

import time

from ...engine.context import ContextChange
from ...engine.incremental import IncrementalPruner
from ..strategy import Event, Step, Strategy, register_strategy

NO_CHANGE = ContextChange()


class PrunerFeed:
    """One incremental pruner fed request by request, shared by every pruning strategy of a replay
    (its verdicts depend on the messages only, not on the strategy). Strategies run in lock-step,
    so each request appends once; ``seconds`` is the time spent pruning."""

    def __init__(self, env):
        self.env = env
        self.pruner = IncrementalPruner(env.settings.prune, name=env.session.name,
                                        source_format=env.session.source_format)
        messages = env.session.messages
        index_of = env.index_of
        self.message_of = lambda mid: messages[index_of[mid]]
        self.seconds = 0.0
        self._at: int | None = None
        self._last = None

    @classmethod
    def of(cls, env) -> "PrunerFeed":
        if env.pruner_feed is None:
            env.pruner_feed = cls(env)
        return env.pruner_feed

    def advance(self, request, new):
        """The pruner's context at ``request`` (``new`` appended), and how it changed since the previous
        request (``ContextChange``)."""
        if self._at != request.index:
            started = time.perf_counter()
            change = self.pruner.append(new).change if new else NO_CHANGE
            self._last = (self.pruner.context(), change)
            self._at = request.index
            self.seconds += time.perf_counter() - started
        return self._last

    def send(self, wire, ctx, change) -> None:
        """Make ``wire`` send the pruner's context, from how it changed."""
        env = self.env
        wire.apply(ctx.messages, ctx.tokens, change, index_of=env.index_of, message_of=self.message_of,
                   call_owner=env.call_owner)


@register_strategy("prune_every_request", order=30,
                   summary="prunes before every request (the incremental pruner's context: kept messages plus "
                   "placeholders for pruned results)")
class PruneEveryRequest(Strategy):
    def __init__(self, env):
        super().__init__(env)
        self.feed = PrunerFeed.of(env)

    def step(self, request, new):
        wire = self.wire
        sent_before = len(wire)
        before = wire.tokens + self.env.book.total(new)
        ctx, change = self.feed.advance(request, new)
        self.feed.send(wire, ctx, change)
        if wire.changed_at < sent_before or wire.tokens < before:
            return Step(events=(Event("prune", before, wire.tokens, wire.changed_at,
                                      "the pruner's verdicts changed"),))
        return Step()
