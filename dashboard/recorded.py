"""The one "context size" every page shows for a session that records provider usage.

The context the model really had at a request is what the provider billed as its input:
``input + cache_read + cache_write`` of that request's recorded usage (provider tokens). It is
what the Replay page's ``as_recorded`` strategy sends at that request, what the Compaction page
calls the recorded context, and what the explorer names beside the whole conversation's size, so
one session has one context size on every page. Where the session records compactions, that
context is smaller than the whole conversation: pages say so and show both, each named.

>>> from pruner import Message, Session
>>> s = Session.of([Message(id="u", role="user", content="hi", turn=1),
...                 Message(id="a", role="assistant", content="yo", turn=1,
...                         metadata={"usage": {"input": 3, "output": 5, "cache_read": 90, "cache_write": 7}})])
>>> r = recorded_context(s)
>>> r.position, r.tokens, r.compactions
(1, 100, 0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from pruner import Session

SENT_FIELDS = ("input", "cache_read", "cache_write")


@dataclass(frozen=True)
class RecordedContext:
    """The context the provider recorded at a session's last request, and the session's compactions."""

    position: int  # the assistant message answering that request (its index in the session)
    tokens: int  # input + cache_read + cache_write, in the provider's tokens
    compactions: int  # compactions the session records

    def sentence(self, whole_tokens: int, counter: str) -> str:
        """How this figure and the whole conversation's size relate, for a caption."""
        if self.compactions:
            why = (f"after the session's {self.compactions:,} recorded compaction"
                   f"{'s' if self.compactions != 1 else ''}, the model no longer had the whole conversation")
        else:
            why = "the session records no compaction"
        return (f"Recorded context at the last request (message #{self.position:,}): {self.tokens:,} tokens, the "
                f"provider's count of what it was sent ({why}). The whole conversation is {whole_tokens:,} tokens "
                f"counted with {counter}.")


def sent_tokens(usage: object) -> int | None:
    """input + cache_read + cache_write of a recorded usage, or ``None`` (no usage, or an aborted request)."""
    if not isinstance(usage, Mapping):
        return None
    total = 0
    for name in SENT_FIELDS:
        value = usage.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return None
        total += value
    return total or None


def recorded_context(session: Session) -> RecordedContext | None:
    """The provider's recorded context at the session's last request with usage, or ``None``."""
    meta = session.metadata if isinstance(session.metadata, Mapping) else {}
    compactions = meta.get("recorded_compactions")
    count = len(compactions) if isinstance(compactions, list) else 0
    for i in range(len(session.messages) - 1, -1, -1):
        m = session.messages[i]
        if m.role != "assistant" or not isinstance(m.metadata, Mapping) or m.metadata.get("synthetic"):
            continue
        tokens = sent_tokens(m.metadata.get("usage"))
        if tokens is not None:
            return RecordedContext(position=i, tokens=tokens, compactions=count)
    return None


def recorded_series(session: Session) -> list[tuple[int, int]]:
    """(turn, recorded context) at every request with usage: the context the model really had, turn by turn
    (the last request of a turn stands for it)."""
    by_turn: dict[int, int] = {}
    for m in session.messages:
        if m.role == "assistant" and isinstance(m.metadata, Mapping) and not m.metadata.get("synthetic"):
            tokens = sent_tokens(m.metadata.get("usage"))
            if tokens is not None:
                by_turn[m.turn] = tokens
    return sorted(by_turn.items())


def compaction_turns(session: Session) -> list[int]:
    """The turns of the compactions the session records (where the context the model had shrank)."""
    meta = session.metadata if isinstance(session.metadata, Mapping) else {}
    out = []
    for entry in meta.get("recorded_compactions") or ():
        index = entry.get("position_index") if isinstance(entry, Mapping) else None
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(session.messages):
            out.append(session.messages[index].turn)
    return out
