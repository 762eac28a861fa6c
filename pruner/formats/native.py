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

A session's subagent conversations (``Session.subagents``) follow the main
conversation, each opened by its own header line and followed by its messages::

    {"pruner_subagent": 1, "name": "...", "source_format": "...", "metadata": {"chain": "a485154", ...}}
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import FormatError, InvalidSessionError
from ..jsonio import JsonProblem, dumps_json, escape_unsafe, loads_json
from ..model import ROLES, Message, Session, ToolCall, validate_session
from .common import Probe, type_name
from .repairing import REPAIRS_KEY, Repairs

NAME = "native"
DESCRIPTION = "pruner's own JSONL: a header line, then one message per line"
ORDER = 0  # where --help and FORMATS list it
HEADER_KEY = "pruner_session"
SUBAGENT_KEY = "pruner_subagent"
VERSION = 1
_PLAIN_FIELDS = frozenset({"id", "role", "content", "turn"})
_MESSAGE_FIELDS = {"id", "role", "content", "turn", "tool_calls", "tool_call_id", "tool_name",
                   "tool_call_key", "expires_after_turn", "defines", "refs", "required", "metadata"}


def detect(text: str, probe: Probe | None) -> float:
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
    """The session as native JSONL text (ends with a newline).

    Every line is JSON any reader splits correctly: U+2028, U+2029, C1 controls
    and lone surrogates inside strings are written as ``\\u`` escapes (see
    ``pruner.jsonio``). The repairs made when the session was read are left
    out: they describe the file it came from, not this one.
    """
    metadata = {k: v for k, v in dict(session.metadata).items() if k != REPAIRS_KEY}
    header = {HEADER_KEY: VERSION, "name": session.name, "source_format": session.source_format,
              "metadata": metadata}
    lines = [dumps_json(header, escape=False)]
    lines += [dumps_json(message_to_dict(m), escape=False) for m in session.messages]
    for sub in session.subagents:
        sub_meta = {k: v for k, v in dict(sub.metadata).items() if k != REPAIRS_KEY}
        lines.append(dumps_json({SUBAGENT_KEY: VERSION, "name": sub.name, "source_format": sub.source_format,
                                 "metadata": sub_meta}, escape=False))
        lines += [dumps_json(message_to_dict(m), escape=False) for m in sub.messages]
    return escape_unsafe("\n".join(lines) + "\n")


def _str_list(value: Any, fname: str, file: str, line: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FormatError(f"field '{fname}' must be a list of strings", file=file, line=line)
    return tuple(value)


def message_from_dict(d: Any, *, file: str, line: int, previous_turn: int = 0) -> Message:
    """The message a line holds; a line without ``turn`` gets ``previous_turn``, plus one for a user."""
    if type(d) is dict and d.keys() <= _PLAIN_FIELDS:  # the common short message: the same checks, fewer steps
        mid, role, content, turn = d.get("id"), d.get("role"), d.get("content", ""), d.get("turn", -1)
        if type(mid) is str and mid and role in ROLES and type(content) is str and type(turn) is int:
            return Message(id=mid, role=role, content=content,
                           turn=turn if turn >= 0 else previous_turn + (role == "user"))
    if not isinstance(d, dict):
        raise FormatError(f"expected a JSON object for a message, got {type_name(d)}",
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
        raise FormatError(f"field 'content' must be a string, got {type_name(content)}",
                          file=file, line=line)
    calls = []
    raw_calls = d.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        raise FormatError(f"field 'tool_calls' must be a list, got {type_name(raw_calls)}", file=file, line=line)
    for j, c in enumerate(raw_calls or []):
        if not isinstance(c, dict) or not isinstance(c.get("id"), str) or not isinstance(c.get("name"), str):
            raise FormatError(f"field 'tool_calls[{j}]' needs string 'id' and 'name'", file=file, line=line)
        if c.get("key") is not None and not isinstance(c["key"], str):
            raise FormatError(f"field 'tool_calls[{j}].key' must be a string", file=file, line=line)
        calls.append(ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments", {}), key=c.get("key")))
    turn = d.get("turn", -1)
    if not isinstance(turn, int) or isinstance(turn, bool):
        raise FormatError("field 'turn' must be an integer", file=file, line=line)
    if turn < 0:  # left out: count it from the user messages before it
        turn = previous_turn + (d["role"] == "user")
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
    unknown = d.keys() - _MESSAGE_FIELDS
    if unknown:  # keep what we do not model rather than dropping it
        metadata = {**metadata, "extra": {k: v for k, v in d.items() if k in unknown}}
    return Message(
        id=d["id"], role=d["role"], content=content, turn=turn, tool_calls=tuple(calls),
        tool_call_id=d.get("tool_call_id"), tool_name=d.get("tool_name"),
        tool_call_key=d.get("tool_call_key"), expires_after_turn=eat,
        defines=_str_list(d["defines"], "defines", file, line) if "defines" in d else (),
        refs=_str_list(d["refs"], "refs", file, line) if "refs" in d else (),
        required=required, metadata=metadata)


def _header(obj: Any, *, file: str, line: int, key: str = HEADER_KEY) -> dict[str, Any]:
    if not isinstance(obj, dict) or key not in obj:
        raise FormatError(f"first line must be the header with '{key}'", file=file, line=line)
    if obj[key] != VERSION:
        raise FormatError(f"header field '{key}' is {obj[key]!r}; this reader knows version {VERSION}",
                          file=file, line=line)
    for fname in ("name", "source_format"):
        if obj.get(fname) is not None and not isinstance(obj[fname], str):
            raise FormatError(f"header field '{fname}' must be a string, got {type_name(obj[fname])}",
                              file=file, line=line)
    if obj.get("metadata") is not None and not isinstance(obj["metadata"], dict):
        raise FormatError(f"header field 'metadata' must be an object, got {type_name(obj['metadata'])}",
                          file=file, line=line)
    return obj


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False) -> Session:
    """Parse native JSONL text into a validated ``Session``; ``FormatError`` names the line.

    Lines are separated by ``\\n`` only (JSON Lines), never by U+2028 or the
    other separators ``str.splitlines`` knows.
    """
    header: dict[str, Any] | None = None
    messages: list[Message] = []
    line_of: list[int] = []
    # (header, its line, messages, their lines) per subagent, in file order
    subagents: list[tuple[dict[str, Any], int, list[Message], list[int]]] = []
    repairs = Repairs()
    for lineno, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = loads_json(raw)
        except (JsonProblem, RecursionError) as exc:
            if skip_bad_lines and header is not None:
                repairs.add("skipped_lines", lineno)
                continue
            what = (f"{exc.msg} (column {exc.colno})" if isinstance(exc, JsonProblem)
                    else "nested too deeply to read")
            raise FormatError(f"invalid JSON: {what}; fix or delete this line (or skip such lines)",
                              file=file, line=lineno, setting="skip_bad_lines" if header is not None else None) \
                from None
        if header is None:
            header = _header(obj, file=file, line=lineno)
            continue
        if isinstance(obj, dict) and SUBAGENT_KEY in obj:
            subagents.append((_header(obj, file=file, line=lineno, key=SUBAGENT_KEY), lineno, [], []))
            continue
        into, lines_of = (subagents[-1][2], subagents[-1][3]) if subagents else (messages, line_of)
        try:
            into.append(message_from_dict(obj, file=file, line=lineno, previous_turn=into[-1].turn if into else 0))
        except FormatError:
            if skip_bad_lines:
                repairs.add("skipped_lines", lineno)
                continue
            raise
        lines_of.append(lineno)
    if header is None:
        raise FormatError("empty file: no header line", file=file)
    metadata = {k: v for k, v in (header.get("metadata") or {}).items() if k != REPAIRS_KEY}
    skipped = sum(r["count"] for r in repairs.as_metadata())
    if skipped:
        metadata["skipped_bad_lines"] = skipped
    subs = []
    for sub_header, sub_line, sub_messages, sub_lines in subagents:
        sub = Session(messages=tuple(sub_messages), name=sub_header.get("name") or "",
                      source_format=sub_header.get("source_format") or NAME,
                      metadata={k: v for k, v in (sub_header.get("metadata") or {}).items() if k != REPAIRS_KEY})
        try:
            validate_session(sub)
        except InvalidSessionError as exc:
            raise FormatError(f"subagent of line {sub_line}: {exc}", file=file,
                              line=_line_named(str(exc), sub_lines) or sub_line) from None
        subs.append(sub)
    session = Session(messages=tuple(messages), name=header.get("name") or "",
                      source_format=header.get("source_format") or NAME, metadata=repairs.merge_into(metadata),
                      subagents=tuple(subs))
    try:
        validate_session(session)
    except InvalidSessionError as exc:
        raise FormatError(str(exc), file=file, line=_line_named(str(exc), line_of)) from None
    return session


def _line_named(message: str, line_of: list[int]) -> int | None:
    """The file line of the message an ``InvalidSessionError`` names ("message #3 ...")."""
    found = re.match(r"message #(\d+)", message)
    index = int(found.group(1)) if found else -1
    return line_of[index] if 0 <= index < len(line_of) else None
