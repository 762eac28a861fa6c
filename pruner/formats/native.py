"""pruner's own session file: JSON Lines, a header line then one message per line.

Header (line 1)::

    {"pruner_session": 1, "name": "...", "source_format": "...", "metadata": {...}}

Each further line is one message. Only ``id``, ``role`` and ``content`` are
required; the other fields are written only when they differ from the default::

    {"id": "m3", "role": "assistant", "content": "", "turn": 1,
     "tool_calls": [{"id": "c1", "name": "search", "arguments": {"q": "refunds"}}]}
    {"id": "m4", "role": "tool", "content": "...", "turn": 1, "tool_call_id": "c1",
     "tool_name": "search", "defines": ["refund_window"], "expires_after_turn": 9}

Fields: ``id``, ``role``, ``content``, ``turn``, ``tool_calls`` (``id``, ``name``,
``arguments``, optional ``key``), ``tool_call_id``, ``tool_name``,
``tool_call_key``, ``expires_after_turn``, ``defines``, ``refs``, ``required``,
``metadata``. A message line without ``turn`` gets its turn from the user
messages before it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ..errors import FormatError
from ..model import ROLES, Message, Session, ToolCall, validate_session
from ..errors import InvalidSessionError

NAME = "native"
DESCRIPTION = "pruner's own JSONL: a header line, then one message per line"
ORDER = 0  # where --help and FORMATS list it
HEADER_KEY = "pruner_session"
VERSION = 1
_MESSAGE_FIELDS = {"id", "role", "content", "turn", "tool_calls", "tool_call_id", "tool_name",
                   "tool_call_key", "expires_after_turn", "defines", "refs", "required", "metadata"}


def detect(text: str, records: list[Any] | None) -> float:
    """Confidence (0..1) that ``text`` is a native session file."""
    first = text.lstrip()[:200]
    return 1.0 if first.startswith("{") and f'"{HEADER_KEY}"' in first else 0.0


def message_to_dict(m: Message) -> dict[str, Any]:
    d: dict[str, Any] = {"id": m.id, "role": m.role, "content": m.content, "turn": m.turn}
    if m.tool_calls:
        d["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments, **({"key": c.key} if c.key else {})}
            for c in m.tool_calls]
    for fname in ("tool_call_id", "tool_name", "tool_call_key", "expires_after_turn", "required"):
        value = getattr(m, fname)
        if value is not None:
            d[fname] = value
    if m.defines:
        d["defines"] = list(m.defines)
    if m.refs:
        d["refs"] = list(m.refs)
    if m.metadata:
        d["metadata"] = dict(m.metadata)
    return d


def dumps(session: Session) -> str:
    """The session as native JSONL text (ends with a newline)."""
    header = {HEADER_KEY: VERSION, "name": session.name, "source_format": session.source_format,
              "metadata": dict(session.metadata)}
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [json.dumps(message_to_dict(m), ensure_ascii=False) for m in session.messages]
    return "\n".join(lines) + "\n"


def _str_list(value: Any, fname: str, file: str, line: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FormatError(f"field '{fname}' must be a list of strings", file=file, line=line)
    return tuple(value)


def message_from_dict(d: Any, *, file: str, line: int) -> Message:
    if not isinstance(d, dict):
        raise FormatError(f"expected a JSON object for a message, got {type(d).__name__}",
                          file=file, line=line)
    for req in ("id", "role"):
        if req not in d:
            raise FormatError(f"message has no '{req}' field", file=file, line=line)
    if not isinstance(d["id"], str) or not d["id"]:
        raise FormatError("field 'id' must be a non-empty string", file=file, line=line)
    if d["role"] not in ROLES:
        raise FormatError(f"field 'role' is {d['role']!r}; expected one of {', '.join(ROLES)}",
                          file=file, line=line)
    content = d.get("content", "")
    if not isinstance(content, str):
        raise FormatError(f"field 'content' must be a string, got {type(content).__name__}",
                          file=file, line=line)
    calls = []
    for j, c in enumerate(d.get("tool_calls") or []):
        if not isinstance(c, dict) or not isinstance(c.get("id"), str) or not isinstance(c.get("name"), str):
            raise FormatError(f"field 'tool_calls[{j}]' needs string 'id' and 'name'", file=file, line=line)
        calls.append(ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments", {}), key=c.get("key")))
    turn = d.get("turn", -1)
    if not isinstance(turn, int) or isinstance(turn, bool):
        raise FormatError("field 'turn' must be an integer", file=file, line=line)
    for fname in ("tool_call_id", "tool_name", "tool_call_key"):
        if d.get(fname) is not None and not isinstance(d[fname], str):
            raise FormatError(f"field '{fname}' must be a string", file=file, line=line)
    eat = d.get("expires_after_turn")
    if eat is not None and (not isinstance(eat, int) or isinstance(eat, bool)):
        raise FormatError("field 'expires_after_turn' must be an integer", file=file, line=line)
    required = d.get("required")
    if required is not None and not isinstance(required, bool):
        raise FormatError("field 'required' must be true or false", file=file, line=line)
    metadata = d.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise FormatError("field 'metadata' must be an object", file=file, line=line)
    extra = {k: v for k, v in d.items() if k not in _MESSAGE_FIELDS}
    if extra:  # keep what we do not model rather than dropping it
        metadata = {**metadata, "extra": extra}
    return Message(
        id=d["id"], role=d["role"], content=content, turn=turn, tool_calls=tuple(calls),
        tool_call_id=d.get("tool_call_id"), tool_name=d.get("tool_name"),
        tool_call_key=d.get("tool_call_key"), expires_after_turn=eat,
        defines=_str_list(d.get("defines", []), "defines", file, line),
        refs=_str_list(d.get("refs", []), "refs", file, line),
        required=required, metadata=metadata)


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False) -> Session:
    """Parse native JSONL text into a validated ``Session``; ``FormatError`` names the line."""
    lines = text.splitlines()
    header: dict[str, Any] | None = None
    messages: list[Message] = []
    skipped = 0
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            if skip_bad_lines and header is not None:
                skipped += 1
                continue
            raise FormatError(f"invalid JSON ({exc})", file=file, line=lineno) from None
        if header is None:
            if not isinstance(obj, dict) or HEADER_KEY not in obj:
                raise FormatError(f"first line must be the header with '{HEADER_KEY}'", file=file, line=lineno)
            header = obj
            continue
        try:
            messages.append(message_from_dict(obj, file=file, line=lineno))
        except FormatError:
            if skip_bad_lines:
                skipped += 1
                continue
            raise
    if header is None:
        raise FormatError("empty file: no header line", file=file)
    turn = 0
    numbered = []
    for m in messages:  # fill in turns the file left out
        if m.role == "user" and m.turn < 0:
            turn += 1
        elif m.turn >= 0:
            turn = m.turn
        numbered.append(m if m.turn >= 0 else replace(m, turn=turn))
    metadata = header.get("metadata") or {}
    if skipped:
        metadata = {**metadata, "skipped_bad_lines": skipped}
    session = Session(messages=tuple(numbered), name=str(header.get("name") or ""),
                      source_format=str(header.get("source_format") or NAME), metadata=metadata)
    try:
        validate_session(session)
    except InvalidSessionError as exc:
        raise FormatError(str(exc), file=file) from None
    return session
