"""Compaction inside a replay (shared by ``compact`` and ``prune_then_compact``): what a strategy
that compacts builds on (``Compactor(env)``; ``over``, ``run``). It registers no strategy itself.

The agent checks before each request: when the context exceeds window minus
reserve (provider tokens), it compacts with ``pruner.compaction.compact`` (Pi's
rules: keep the newest ``keep_recent_tokens``, summarise the rest, merge into the
previous summary) and then sends the system messages, the summary and the kept
messages. The summarisation is a model call of its own, billed like any request:
its input is the summariser's request (system prompt and the serialised
history), its output the summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ...compaction import CompactionSettings, OfflineSummarizer, compact
from ...model import Message, Session
from ..requests import Request, scale_of, window_of_request
from ..strategy import Event, ExtraCall, ReplayEnv


@dataclass(frozen=True)
class Compaction:
    summary: Message  # the message the model receives in place of the history
    first_kept: int  # index in session.messages of the first message kept verbatim
    head: tuple[Message, ...]  # leading system messages, kept ahead of the summary
    detail: str
    calls: tuple[ExtraCall, ...]

    def event(self, tokens_before: int, tokens_after: int) -> Event:
        return Event("compact", tokens_before, tokens_after, len(self.head), self.detail)


class Compactor:
    """The compaction trigger and the compaction itself, in the request's provider tokens: its
    model's window and the token scale at that request (both from the recording up to it)."""

    def __init__(self, env: ReplayEnv):
        self.env = env
        self.summarizer = env.summarizer or OfflineSummarizer()
        self.current: Compaction | None = None

    def threshold(self, request: Request) -> int:
        return window_of_request(request) - self.env.settings.reserve_tokens  # provider tokens

    def over(self, tokens: int, request: Request) -> bool:
        return scale_of(request).provider(tokens) > self.threshold(request)

    def settings(self, request: Request) -> CompactionSettings:
        s, scale = self.env.settings, scale_of(request)
        window = max(2, scale.ours(window_of_request(request)))
        # Our counts of the reserve and the kept tail: parts of a context, so the slope alone converts them.
        reserve = min(max(0, int(s.reserve_tokens / scale.slope)), window - 1)
        return CompactionSettings(context_window=window, reserve_tokens=reserve,
                                  keep_recent_tokens=int(s.keep_recent_tokens / scale.slope),
                                  encoding=s.prune.encoding)

    def run(self, context: Sequence[Message], request: Request) -> Compaction | None:
        """Compact ``context`` (what would be sent now); None when no cut is possible."""
        meta: dict[str, Any] = {}
        if self.current is not None:
            head = len(self.current.head)
            meta["recorded_compactions"] = [{"entry_id": self.current.summary.id, "first_kept_index": head + 1,
                                             "position_index": head}]
        session = Session(messages=tuple(context), name=self.env.session.name, metadata=meta)
        result = compact(session, self.settings(request), self.summarizer, force=True, use_usage=False, validate=False)
        cut_id = result.cut_message_id
        if result.cut_index is None or cut_id is None or cut_id not in self.env.index_of:
            return None
        pinned = len(result.pinned)
        summary = result.compacted.messages[pinned]
        book = self.env.book
        calls = []
        for what, req in (("summarise the history", result.request), ("summarise the split turn's start",
                                                                      result.prefix_request)):
            if req is not None:
                calls.append(ExtraCall(what, book.text(req.system_prompt) + book.text(req.user_message), 0))
        if calls:
            calls[-1] = ExtraCall(calls[-1].what, calls[-1].input_tokens, book.text(result.summary))
        first_kept = self.env.index_of[cut_id]
        summarised = len(result.to_summarize) + len(result.turn_prefix)
        detail = f"summarised {summarised} messages; kept the newest from {result.cut_message_id}"
        self.current = Compaction(summary=summary, first_kept=first_kept, head=tuple(result.pinned), detail=detail,
                                  calls=tuple(calls))
        return self.current
