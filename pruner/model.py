"""The session model: plain frozen values shared by every part of pruner.

>>> from pruner.model import Message, Session
>>> s = Session.of([Message(id="u1", role="user", content="hi")])
>>> s.messages[0].turn
1
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, MutableMapping, Protocol

from .errors import InvalidSessionError
from .jsonio import loads_json

ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool", "retrieved_doc", "summary")
"""Roles a message may have. ``tool`` is a tool result; ``retrieved_doc`` is a document put into
the context by retrieval; ``summary`` replaces compacted history."""

STATUSES: tuple[str, ...] = ("kept", "expired", "duplicate", "restored")
"""The four statuses a pruning decision can have, in display order."""


def canonical_json(value: Any) -> str:
    """Serialise ``value`` so equal values give equal strings (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def parse_arguments(arguments: Any) -> Any:
    """Tool arguments as a JSON value: strings that hold JSON are decoded.

    A string that is not strict JSON (``NaN``, a number too large, nesting too
    deep to read) stays the string it was, so an export sends it unchanged.
    """
    if isinstance(arguments, str):
        try:
            return loads_json(arguments)
        except (ValueError, RecursionError):
            return arguments
    return arguments


@dataclass(frozen=True)
class ToolCall:
    """One tool call made by an assistant message.

    ``arguments`` is a JSON value (usually an object); a string that is not
    valid JSON is kept as the string.
    """

    id: str
    name: str
    arguments: Any = field(default_factory=dict)
    key: str | None = None  # explicit supersession key; default is name + canonical arguments

    def call_key(self) -> str:
        """The supersession key: explicit key, else ``name(canonical-args)``."""
        if self.key:
            return self.key
        return f"{self.name}({canonical_json(parse_arguments(self.arguments))})"


@dataclass(frozen=True)
class Message:
    """One message of a conversation.

    Only ``id``, ``role`` and ``content`` are required. ``turn`` counts user
    messages: the first user message starts turn 1, anything before it is turn 0.
    """

    id: str
    role: str
    content: str
    turn: int = 0
    tool_calls: tuple[ToolCall, ...] = ()  # assistant messages: the calls it makes
    tool_call_id: str | None = None  # tool results: the call answered
    tool_name: str | None = None  # tool results: the tool that produced it
    tool_call_key: str | None = None  # explicit supersession key for this result
    expires_after_turn: int | None = None
    defines: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    required: bool | None = None  # ground truth for benchmarks and tests only
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_tool_result(self) -> bool:
        return self.tool_call_id is not None or self.role == "tool"


#: The chain id of a session's own conversation (its subagents' chains have their own ids).
MAIN_CHAIN = "main"


@dataclass(frozen=True)
class Session:
    """An ordered conversation plus where it came from.

    ``messages`` is the main conversation: what pruning, compaction and the
    explorer work on. ``subagents`` holds the other conversations the same
    session recorded (Claude Code's sidechains: a Task tool's subagent, with its
    own requests, context and cache); each is a ``Session`` whose
    ``metadata["chain"]`` names it. The bill and the replay walk every chain.
    """

    messages: tuple[Message, ...]
    name: str = ""
    source_format: str = "native"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    subagents: tuple["Session", ...] = ()

    @classmethod
    def of(cls, messages: Iterable[Message], *, name: str = "", source_format: str = "native",
           metadata: Mapping[str, Any] | None = None, number_turns: bool = True,
           subagents: Iterable["Session"] = ()) -> "Session":
        """Build a session, numbering turns from the user messages unless told not to."""
        msgs = tuple(messages)
        if number_turns:
            msgs = assign_turns(msgs)
        return cls(messages=msgs, name=name, source_format=source_format,
                   metadata=dict(metadata or {}), subagents=tuple(subagents))

    @property
    def chains(self) -> tuple[tuple[str, "Session"], ...]:
        """Every conversation of the session, the main one first: ``(chain id, conversation)``."""
        return ((MAIN_CHAIN, self),) + tuple(
            (str(s.metadata.get("chain") or f"subagent-{i + 1}"), s) for i, s in enumerate(self.subagents))

    def with_messages(self, messages: Iterable[Message]) -> "Session":
        return replace(self, messages=tuple(messages))

    @property
    def last_turn(self) -> int:
        return max((m.turn for m in self.messages), default=0)

    def by_id(self) -> dict[str, Message]:
        return {m.id: m for m in self.messages}


def assign_turns(messages: Iterable[Message]) -> tuple[Message, ...]:
    """Number turns: each user message starts a new one; before the first is turn 0."""
    turn = 0
    out = []
    for m in messages:
        if m.role == "user":
            turn += 1
        out.append(m if m.turn == turn else replace(m, turn=turn))
    return tuple(out)


def _where(i: int, m: Any) -> str:
    mid = getattr(m, "id", None)
    return f"message #{i}" + (f" (id {mid!r})" if isinstance(mid, str) else "")


def validate_session(session: Session) -> None:
    """Raise ``InvalidSessionError`` naming the message and field of the first problem.

    Checks: ids are unique non-empty strings, roles are known, content is a
    string, turns are integers, only assistant messages make tool calls, every
    tool result answers a call made by an earlier assistant message, and no call has two results (an export could
    only send one of them, and would have to choose). The session's own
    ``name`` and ``source_format`` are strings and its ``metadata`` a mapping.
    Each subagent is a valid ``Session`` of its own (ids are per conversation),
    without subagents of its own, and every chain id is distinct.
    """
    if not isinstance(session, Session):
        raise InvalidSessionError(f"expected a Session, got {type(session).__name__}")
    for fname in ("name", "source_format"):
        if not isinstance(getattr(session, fname), str):
            raise InvalidSessionError(f"session field {fname!r} must be a string, "
                                      f"got {type(getattr(session, fname)).__name__}")
    if not isinstance(session.metadata, Mapping):
        raise InvalidSessionError(f"session field 'metadata' must be a mapping, got {type(session.metadata).__name__}")
    validate_messages(session.messages, seen={}, call_ids=set(), answered={})
    if not isinstance(session.subagents, tuple):
        raise InvalidSessionError(f"session field 'subagents' must be a tuple, got {type(session.subagents).__name__}")
    chains = {MAIN_CHAIN}
    for k, sub in enumerate(session.subagents):
        where = f"subagent #{k}"
        if not isinstance(sub, Session):
            raise InvalidSessionError(f"{where}: expected a Session, got {type(sub).__name__}")
        if sub.subagents:
            raise InvalidSessionError(f"{where}: a subagent's own subagents belong to the session (one level)")
        try:
            validate_session(sub)
        except InvalidSessionError as exc:
            raise InvalidSessionError(f"{where} (chain {sub.metadata.get('chain')!r}): {exc}") from None
        name = str(sub.metadata.get("chain") or f"subagent-{k + 1}")  # as ``Session.chains`` names it
        if name in chains:
            raise InvalidSessionError(f"{where}: chain id {name!r} is used twice; every chain needs its own id")
        chains.add(name)
    session.__dict__["_validated"] = True  # a Session is immutable: valid once, valid for good


def is_validated(session: Session) -> bool:
    """Whether ``validate_session`` already passed this very session object."""
    return isinstance(session, Session) and session.__dict__.get("_validated", False) is True


class IdSet(Protocol):
    """What ``validate_messages`` needs of the call ids seen so far: a set, or a view that adds to one."""

    def __contains__(self, item: object, /) -> bool: ...

    def add(self, item: str, /) -> None: ...


def validate_messages(messages: Iterable[Message], *, seen: MutableMapping[str, int], call_ids: IdSet,
                      start: int = 0, answered: dict[str, int] | None = None) -> None:
    """Validate messages that follow ``start`` earlier ones (whose ids, call ids and
    answered call ids are in ``seen``, ``call_ids`` and ``answered``); all are
    updated as messages pass. Without ``answered``, only this batch is checked
    for calls with two results."""
    answered = {} if answered is None else answered
    for i, m in enumerate(messages, start=start):
        if not isinstance(m, Message):
            raise InvalidSessionError(f"message #{i}: expected a Message, got {type(m).__name__}")
        if not isinstance(m.id, str) or not m.id:
            raise InvalidSessionError(f"{_where(i, m)}: field 'id' must be a non-empty string")
        if m.id in seen:
            raise InvalidSessionError(
                f"{_where(i, m)}: field 'id' duplicates message #{seen[m.id]}; ids must be unique")
        seen[m.id] = i
        if m.role not in ROLES:
            raise InvalidSessionError(
                f"{_where(i, m)}: field 'role' is {m.role!r}; expected one of {', '.join(ROLES)}")
        if not isinstance(m.content, str):
            raise InvalidSessionError(
                f"{_where(i, m)}: field 'content' must be a string, got {type(m.content).__name__}")
        if not isinstance(m.turn, int) or isinstance(m.turn, bool) or m.turn < 0:
            raise InvalidSessionError(f"{_where(i, m)}: field 'turn' must be a non-negative integer")
        if m.expires_after_turn is not None and (
                not isinstance(m.expires_after_turn, int) or isinstance(m.expires_after_turn, bool)):
            raise InvalidSessionError(f"{_where(i, m)}: field 'expires_after_turn' must be an integer")
        for fname in ("defines", "refs"):
            keys = getattr(m, fname)
            if not isinstance(keys, tuple) or (keys and not all(isinstance(k, str) and k for k in keys)):
                raise InvalidSessionError(
                    f"{_where(i, m)}: field '{fname}' must be a list of non-empty strings")
        if m.tool_calls and m.tool_call_id is not None:
            raise InvalidSessionError(f"{_where(i, m)}: field 'tool_call_id' is set on a message that makes tool "
                                      "calls; a message either makes calls or answers one, not both")
        if m.tool_calls and m.role != "assistant":
            raise InvalidSessionError(f"{_where(i, m)}: field 'tool_calls' is set on a {m.role} message; only "
                                      "assistant messages make tool calls")
        for c in m.tool_calls:
            if not isinstance(c, ToolCall) or not isinstance(c.id, str) or not c.id:
                raise InvalidSessionError(f"{_where(i, m)}: field 'tool_calls' has a call without an id")
            if not isinstance(c.name, str):
                raise InvalidSessionError(
                    f"{_where(i, m)}: tool call {c.id!r} field 'name' must be a string")
            if c.id in call_ids:
                raise InvalidSessionError(
                    f"{_where(i, m)}: tool call id {c.id!r} is used by an earlier call")
            call_ids.add(c.id)
        if m.tool_call_id is not None:
            if m.tool_call_id not in call_ids:
                raise InvalidSessionError(
                    f"{_where(i, m)}: field 'tool_call_id' is {m.tool_call_id!r}, but no earlier "
                    "assistant message makes a call with that id")
            if m.tool_call_id in answered:
                raise InvalidSessionError(
                    f"{_where(i, m)}: field 'tool_call_id' is {m.tool_call_id!r}, a call message "
                    f"#{answered[m.tool_call_id]} already answers; a call has one result")
            answered[m.tool_call_id] = i


@dataclass(frozen=True)
class Decision:
    """What pruning did with one input message, and why.

    ``related`` is the id of the other message the decision points at: the newer
    result that superseded it, the kept original it duplicates, or the kept
    message that needed it restored.
    """

    id: str
    status: str  # one of STATUSES
    rule: str  # e.g. "superseded_call", "near_duplicate", "dependency"; "" when simply kept
    reason: str
    related: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "rule": self.rule,
                "reason": self.reason, "related": self.related}


#: Epoch seconds of 1000-01-01 and of 9999-12-31T23:59:59 (UTC): a time outside them is damage (Go's zero
#: time is year 1; 2^63-1 milliseconds is past year 9999), no ISO 8601 date of four digits can hold it.
FIRST_SECOND, LAST_SECOND = -30610224000, 253402300799


def calendar_seconds(value: Any) -> float | None:
    """Seconds since the epoch of a recorded time (ISO 8601, or epoch seconds or milliseconds), or None
    when it is none, or outside the years 1000 to 9999 (``FIRST_SECOND``, ``LAST_SECOND``)."""
    seconds: float | None = None
    if isinstance(value, str) and value:
        try:
            seconds = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except (ValueError, OverflowError):
            return None
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        seconds = value / 1000 if value > 1e11 else float(value)
    if seconds is None or not math.isfinite(seconds) or not FIRST_SECOND <= seconds <= LAST_SECOND:
        return None
    return seconds
