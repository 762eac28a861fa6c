"""``prune_every_request``: the incremental pruner's context before every request.

Each request appends the new messages to one ``IncrementalPruner`` and sends its
``context()``: the kept messages, and a placeholder for each kept call whose
result was pruned. Whenever pruning removes (or restores) a message that was
already sent, the prefix changes there and the cache is lost from that point.
"""

from __future__ import annotations

from typing import Sequence

from ...model import Message
from ..feed import PrunerFeed
from ..requests import Request
from ..strategy import Event, ReplayEnv, Step, Strategy, register_strategy

__all__ = ["PrunerFeed", "PruneEveryRequest"]


@register_strategy("prune_every_request", order=30,
                   summary="prunes before every request (the incremental pruner's context: kept messages plus "
                   "placeholders for pruned results)")
class PruneEveryRequest(Strategy):
    uses_pruner = True

    def __init__(self, env: ReplayEnv):
        super().__init__(env)
        self.feed = PrunerFeed.of(env)

    def step(self, request: Request, new: Sequence[Message]) -> Step:
        wire = self.wire
        sent_before = len(wire)
        before = wire.tokens + self.env.book.total(new)
        ctx, change = self.feed.advance(request, new)
        self.feed.send(wire, ctx, change)
        if wire.changed_at < sent_before or wire.tokens < before:
            return Step(events=(Event("prune", before, wire.tokens, wire.changed_at,
                                      "the pruner's verdicts changed"),))
        return Step()
