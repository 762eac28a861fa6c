"""``truncate``: keep the newest messages within a token budget, the baseline everyone uses.

The leading system messages are always kept. When the context exceeds the
budget (default: window minus reserve, where compaction would trigger), the
oldest messages after them are dropped until it fits, a call together with its
results (a result never arrives without its call), and the newest message is
always kept. Dropping from the front changes the prefix, so every truncating
request re-writes the cache after the system messages.
"""

from __future__ import annotations

from typing import Sequence

from ...model import Message
from ..requests import Request, scale_of, window_of_request
from ..strategy import Event, Step, Strategy, register_strategy


@register_strategy("truncate", order=20,
                   summary="keeps the system messages and the newest messages that fit a token budget "
                   "(default window minus reserve); calls and their results are dropped together")
class Truncate(Strategy):
    def budget(self, request: Request) -> int:
        """The budget at ``request`` in our tokens (its model's window, the scale there)."""
        s, window = self.env.settings, window_of_request(request)
        budget = s.truncate_budget if s.truncate_budget is not None else window - s.reserve_tokens
        return scale_of(request).ours(max(1, min(budget, window)))

    def step(self, request: Request, new: Sequence[Message]) -> Step:
        wire, book = self.wire, self.env.book
        wire.extend(new)
        budget = self.budget(request)
        if wire.tokens <= budget:
            return Step()
        before = wire.tokens
        msgs = wire.messages
        head = wire.head
        last = len(msgs) - 1  # the newest unit (a call with the results after it) is always kept
        while last > head and msgs[last].tool_call_id is not None:
            last -= 1
        stop = head
        removed = 0
        # Drop whole units from the front: an assistant message with the results that follow it.
        while stop < last and before - removed > budget:
            unit = stop + 1
            while unit < last and msgs[unit].tool_call_id is not None:
                unit += 1
            removed += book.total(msgs[stop:unit])
            stop = unit
        if stop == head:
            return Step()
        dropped = stop - head
        wire.delete(head, stop)
        return Step(events=(Event("truncate", before, wire.tokens, head, f"dropped the {dropped} oldest messages"),))
