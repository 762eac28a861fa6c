"""``prune_every_request``: the incremental pruner's context before every request.

Each request appends the new messages to one ``IncrementalPruner`` and sends its
``context()``: the kept messages, and a placeholder for each kept call whose
result was pruned. Whenever pruning removes (or restores) a message that was
already sent, the prefix changes there and the cache is lost from that point.
"""

from __future__ import annotations

from ...engine.incremental import IncrementalPruner
from ..strategy import Event, Step, Strategy, register_strategy


class PrunerFeed:
    """One incremental pruner fed request by request (shared by the pruning strategies)."""

    def __init__(self, env):
        self.env = env
        self.pruner = IncrementalPruner(env.settings.prune, name=env.session.name,
                                        source_format=env.session.source_format)

    def advance(self, new):
        if new:
            self.pruner.append(new)
        return self.pruner.context()


@register_strategy("prune_every_request", order=30,
                   summary="prunes before every request (the incremental pruner's context: kept messages plus "
                   "placeholders for pruned results)")
class PruneEveryRequest(Strategy):
    def __init__(self, env):
        super().__init__(env)
        self.feed = PrunerFeed(env)

    def step(self, request, new):
        wire = self.wire
        sent_before = len(wire)
        before = wire.tokens + self.env.book.total(new)
        ctx = self.feed.advance(new)
        wire.replace(ctx.messages)
        wire.sync_substitutes(ctx.placeholders,
                              position=lambda cid: self.env.position_after_call(wire.messages, cid))
        if wire.changed_at < sent_before or wire.tokens < before:
            return Step(events=(Event("prune", before, wire.tokens, wire.changed_at,
                                      "the pruner's verdicts changed"),))
        return Step()
