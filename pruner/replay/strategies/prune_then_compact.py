"""``prune_then_compact``: prune before every request; compact only when still over the trigger.

Pruning runs on the whole conversation (one incremental pruner). Before a
compaction the request sends the pruner's context; after one, the system
messages, the summary, and the pruner's kept messages from the compaction's
first kept message on. Compaction triggers as in ``compact``, on the pruned size.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Sequence

from ...engine.context import Context, ContextChange
from ...model import Message
from ..requests import Request
from ..strategy import Event, ReplayEnv, Step, Strategy, register_strategy
from .compactor import Compactor
from ..feed import PrunerFeed


@register_strategy("prune_then_compact", order=60,
                   summary="prunes before every request and compacts (as compact does) only when the pruned "
                   "context still exceeds window minus reserve")
class PruneThenCompact(Strategy):
    uses_pruner = True

    def __init__(self, env: ReplayEnv):
        super().__init__(env)
        self.feed = PrunerFeed.of(env)
        self.compactor = Compactor(env)

    def _send(self, ctx: Context, change: ContextChange | None = None) -> None:
        """Send the pruner's context (after a compaction: the part from the first kept message on,
        behind the system messages and the summary); ``change`` is how it changed (None: resync)."""
        wire, env = self.wire, self.env
        done = self.compactor.current
        if done is None:
            # before any compaction every call passes the pruner's change; the resync (None) follows one
            assert change is not None
            self.feed.send(wire, ctx, change)
            return
        index_of = env.index_of
        first = done.first_kept
        tail = ctx.messages[bisect_left(ctx.messages, first, key=lambda m: index_of[m.id]):]
        head = [*done.head, done.summary]
        wire.replace(head + list(tail))
        call_owner = env.call_owner
        if change is None:
            wire.resync_substitutes(ctx.placeholders, relevant=lambda cid: call_owner.get(cid, -1) >= first)
            return
        for cid, text in change.placeholders.items():  # only what the pruner changed
            if call_owner.get(cid, -1) < first:
                continue
            position = len(head) + env.position_after_call(tail, cid)
            if text is not None:
                wire.set_substitute(cid, text, position)
            elif cid in wire.substitutes:
                wire.drop_substitute(cid)
                wire.changed_at = min(wire.changed_at, position)

    def step(self, request: Request, new: Sequence[Message]) -> Step:
        wire = self.wire
        sent_before = len(wire)
        before = wire.tokens + self.env.book.total(new)
        ctx, change = self.feed.advance(request, new)
        self._send(ctx, change)
        events: list[Event] = []
        if wire.changed_at < sent_before or wire.tokens < before:
            events.append(Event("prune", before, wire.tokens, wire.changed_at, "the pruner's verdicts changed"))
        if not self.compactor.over(wire.tokens, request):
            return Step(events=tuple(events))
        pruned = wire.tokens
        done = self.compactor.run(wire.materialize(), request)
        if done is None:
            return Step(events=tuple(events))
        self._send(ctx)  # the kept part, behind the new summary
        events.append(done.event(pruned, wire.tokens))
        return Step(events=tuple(events), extra_calls=done.calls)

