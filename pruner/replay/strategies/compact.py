"""``compact``: Pi's compaction, with the offline summariser by default.

Before each request, when the context exceeds window minus reserve, the older
history is summarised and the request sends the system messages, the summary
and the newest ``keep_recent_tokens`` verbatim (``pruner.compaction``). The
summarisation request is billed like any request, so compaction is not free,
and it rewrites the prefix after the system messages once.
"""

from __future__ import annotations

from typing import Sequence

from ...model import Message
from ..requests import Request
from ..strategy import ReplayEnv, Step, Strategy, register_strategy
from .compactor import Compactor


@register_strategy("compact", order=50,
                   summary="Pi's compaction: when the context exceeds window minus reserve, summarise the older "
                   "history (offline summariser) and keep the newest messages; the summarisation is billed")
class Compact(Strategy):
    def __init__(self, env: ReplayEnv):
        super().__init__(env)
        self.compactor = Compactor(env)

    def step(self, request: Request, new: Sequence[Message]) -> Step:
        wire = self.wire
        wire.extend(new)
        if not self.compactor.over(wire.tokens, request):
            return Step()
        before = wire.tokens
        done = self.compactor.run(wire.messages, request)
        if done is None:
            return Step()
        kept = self.env.session.messages[done.first_kept:request.position]
        wire.replace([*done.head, done.summary, *kept])
        return Step(events=(done.event(before, wire.tokens),), extra_calls=done.calls)
