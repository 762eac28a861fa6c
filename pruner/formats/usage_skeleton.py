"""A bill-only reader's skeleton of a session: its messages in order, in flat memory.

A bill-only reader (``codex_usage``, ``pi_usage``, the Qwen Code reader, ...) streams a session file
(``usage_lines.Stream``) and keeps, per message, only what the bill and the cache ledger read. Most
messages between two requests carry nothing of their own the bill reads: ``Skeleton`` shares one
``Message`` per kind among them, so a 1 GB session's messages cost one pointer each.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..model import FIRST_SECOND, LAST_SECOND, Message

__all__ = ["OutsideCalendar", "Skeleton", "seconds"]


class OutsideCalendar(ValueError):
    """A recorded time outside the years 1000 to 9999: the full reader reads the file, and reports it
    (``invalid_time``, a damaged field); a bill-only reader leaves such a file to it."""


def seconds(value: Any) -> float | None:
    """``pruner.replay.requests.timestamp`` of a recorded ``timestamp`` string (None when it is none);
    ``OutsideCalendar`` for a time before year 1000 or after 9999."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    if not FIRST_SECOND <= t <= LAST_SECOND:
        raise OutsideCalendar(value[:40])
    return t


class Skeleton:
    """A skeleton's messages in order, in flat memory: a message the bill reads nothing of its own in
    (not a request, not a summary) is one shared ``Message`` per (role, content, link), without its time.

    The bill, the ledger and the row's facts read times in two ways only: a request's start (the time of
    the message right before it, else its own: ``pruner.replay.requests.chain_requests``) and the
    session's earliest and latest time. So a request right after a shared message carries that message's
    time as its own (its start is unchanged, and nothing else reads its own time), and at the end the
    message holding the earliest and the one holding the latest time get them back (a shared message its
    own copy; a request its own time, and the message before it its copy with its time). A 1 GB
    session's messages between requests then cost one pointer each."""

    def __init__(self) -> None:
        self.out: list[Any] = []
        self._shared: dict[tuple[str, str, str | None], Message] = {}
        self._last: str | None = None  # the time of the last message, when it is a shared one
        # (seconds, position, the time as recorded, the time of the shared message before it or None)
        self._low: tuple[float, int, str, str | None] | None = None
        self._high: tuple[float, int, str, str | None] | None = None
        # the last request, when it holds its start: (position, its metadata, its own time, its start)
        self._moved: tuple[int, dict[str, Any], Any, str] | None = None

    def _seen(self, value: Any, position: int, before: str | None, t: float | None) -> None:
        if t is not None:
            if self._low is None or t < self._low[0]:
                self._low = (t, position, value, before)
            if self._high is None or t > self._high[0]:
                self._high = (t, position, value, before)

    def plain(self, role: str, content: str, meta: dict[str, Any], tool_call_id: str | None = None) -> None:
        if any(k != "timestamp" for k in meta):  # a summary, a kind: its own message
            self.out.append(Message(id="m", role=role, content=content, tool_call_id=tool_call_id, metadata=meta))
            self._last = None
            return
        key = (role, content, tool_call_id)
        shared = self._shared.get(key)
        if shared is None:
            shared = self._shared[key] = Message(id="m", role=role, content=content, tool_call_id=tool_call_id)
        stamp = meta.get("timestamp")
        t = seconds(stamp)
        self._seen(stamp, len(self.out), None, t)
        self.out.append(shared)
        self._last = stamp if t is not None else None
        self._moved = None

    def reply(self, reply: Any, meta: dict[str, Any]) -> None:
        """A request (an assistant message, or what becomes one) whose metadata is ``meta``."""
        own, before = meta.get("timestamp"), self._last
        if self._moved is not None and self._moved[0] == len(self.out) - 1:
            self._restore(*self._moved)  # the request before this one: its own time is this one's start
        self._seen(own, len(self.out), before, seconds(own))
        self._moved = None
        if before is not None:
            meta["timestamp"] = before  # its start; its own time is kept only where it is read
            self._moved = (len(self.out), meta, own, before)
        self._last = None
        self.out.append(reply)

    def _restore(self, position: int, meta: dict[str, Any], own: Any, before: str) -> None:
        """A request its own time back, and the message before it its copy with the request's start."""
        if own is None:
            meta.pop("timestamp", None)
        else:
            meta["timestamp"] = own
        p = self.out[position - 1]
        if not p.metadata:
            self.out[position - 1] = Message(id="m", role=p.role, content=p.content, tool_call_id=p.tool_call_id,
                                             metadata={"timestamp": before})

    def finish(self, meta_of: Any = None) -> list[Any]:
        """The messages, the earliest and latest times where they were (``meta_of``: a request's metadata)."""
        for extreme in (self._low, self._high):
            if extreme is None:
                continue
            _, position, stamp, before = extreme
            m = self.out[position]
            if isinstance(m, Message) and m is self._shared.get((m.role, m.content, m.tool_call_id)):
                self.out[position] = Message(id="m", role=m.role, content=m.content, tool_call_id=m.tool_call_id,
                                             metadata={"timestamp": stamp})
            elif before is not None:  # a request holding its start: its own time back, its start before it
                meta: dict[str, Any] = m.metadata if isinstance(m, Message) else meta_of(m)  # type: ignore[assignment]
                self._restore(position, meta, stamp, before)
        return self.out
