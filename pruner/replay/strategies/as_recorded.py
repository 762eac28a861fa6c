"""``as_recorded``: what the session really sent, following its recorded compactions.

After a recorded compaction (a Pi ``compaction`` entry, or a summary written by
``pruner compact``), a request sends the leading system messages, the summary,
and the messages from the compaction's first kept message on. Without recorded
compactions it sends what ``full`` sends. Its dollars come from the recorded
usage when the session has it (the replay bills it exactly as reported).
"""

from __future__ import annotations

from typing import Sequence

from ...compaction.cut import context_window, is_summary_message
from ...model import Message
from ..requests import Request
from ..strategy import Event, Step, Strategy, register_strategy


@register_strategy("as_recorded", order=0, counterfactual=False,
                   summary="what the session really sent: the whole conversation, following its recorded "
                   "compactions; billed from the recorded usage when there is one")
class AsRecorded(Strategy):
    def step(self, request: Request, new: Sequence[Message]) -> Step:
        if not any(is_summary_message(m) for m in new):
            self.wire.extend(new)
            return Step()
        # A recorded compaction: rare, so the window is worked out again from the session.
        session = self.env.session
        before = self.wire.tokens + self.env.book.total(new)
        order = context_window(session.with_messages(session.messages[:request.position])).context()
        self.wire.replace([session.messages[i] for i in order])
        return Step(events=(Event("compact", before, self.wire.tokens, self.wire.changed_at,
                                  "compaction recorded in the session"),))
