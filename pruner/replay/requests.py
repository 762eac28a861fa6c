"""Requests: the points where the model was called, with what the recording says about each.

A request is made before each assistant message: its context is everything
before that message. Requests are numbered from 0; the turn (a user message
starts one) is kept beside the number, because an agent makes many requests
per turn. When the transcript records usage per assistant message
(``metadata["usage"]``: input / output / cache_read / cache_write, in the
provider's tokens, the three inputs disjoint), the request carries it; when it
records timestamps, the request carries its start time: the time of the message
that completed its context (the user's message or the tool's result), else the
assistant message's own time.

>>> from pruner.model import Message, Session
>>> s = Session.of([Message(id="u", role="user", content="hi"),
...                 Message(id="a", role="assistant", content="hello",
...                         metadata={"usage": {"input": 5, "output": 2, "cache_read": 0, "cache_write": 0}})])
>>> r = find_requests(s)[0]
>>> r.index, r.position, r.turn, r.recorded.input, r.recorded.cold
(0, 1, 1, 5, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from ..formats._common import _token_count
from ..model import Message, Session


@dataclass(frozen=True)
class RecordedUsage:
    """What the provider reported for one request (provider tokens; inputs disjoint)."""

    input: int
    output: int
    cache_read: int
    cache_write: int

    @property
    def context(self) -> int:
        """Everything the request sent: uncached + read + written."""
        return self.input + self.cache_read + self.cache_write

    @property
    def aborted(self) -> bool:
        """All zero: the request was aborted before the provider reported usage (nothing billed)."""
        return self.context == 0 and self.output == 0

    @property
    def cold(self) -> bool:
        """The request read nothing from the cache although it sent something."""
        return self.context > 0 and self.cache_read == 0


@dataclass(frozen=True)
class Request:
    index: int  # from 0
    position: int  # index in session.messages of the assistant message this request produced
    turn: int
    time: float | None  # start, in seconds since the epoch (None: no timestamp recorded)
    recorded: RecordedUsage | None  # None: the transcript records no usage for it


def _number(value: Any) -> int | None:
    # The importers' own bound (a whole number of tokens up to 10**12): a session built by hand or a
    # native file's metadata is not checked at import, and 1e308 tokens made the dollars infinite.
    return _token_count(value)


def recorded_usage(m: Message) -> RecordedUsage | None:
    """The message's recorded usage, or None when it has none (or a malformed one)."""
    usage = m.metadata.get("usage") if isinstance(m.metadata, Mapping) else None
    if not isinstance(usage, Mapping):
        return None
    values = [_number(usage.get(k, 0)) for k in ("input", "output", "cache_read", "cache_write")]
    if any(v is None for v in values):
        return None
    return RecordedUsage(*values)


def timestamp(m: Message) -> float | None:
    """Seconds since the epoch from ``metadata["timestamp"]`` (ISO 8601, or epoch seconds or
    milliseconds), or None."""
    value = m.metadata.get("timestamp") if isinstance(m.metadata, Mapping) else None
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return value / 1000 if value > 1e11 else float(value)
    return None


def find_requests(session: Session) -> tuple[Request, ...]:
    """One request before each assistant message, in order."""
    out = []
    msgs = session.messages
    for i, m in enumerate(msgs):
        if m.role != "assistant":
            continue
        start = timestamp(msgs[i - 1]) if i > 0 else None
        if start is None:
            start = timestamp(m)
        out.append(Request(index=len(out), position=i, turn=m.turn, time=start, recorded=recorded_usage(m)))
    return tuple(out)


def has_recorded_usage(requests: tuple[Request, ...]) -> bool:
    """True when some request records a non-zero usage (so the bill can be reproduced)."""
    return any(r.recorded is not None and not r.recorded.aborted for r in requests)
