"""Pi, read for the bill and the cache ledger only: the session's skeleton, streamed, not its text.

``read_usage`` reads a Pi session file line by line (``usage_lines.Stream``),
each entry decoded by msgspec into Structs that declare only the fields
``pi.loads`` reads (tool results' and messages' text, thinking and arguments
are skipped, never decoded), and keeps per entry only its id, parent, type,
time and what the bill reads of it. It then follows ``pruner.formats.pi.loads``
(this repository, the same commit): the path from the last entry back to the
root (version 2 and 3; version 1 is linear), each message entry as that reader
makes it (an assistant message's usage by ``pi.pi_usage`` itself, with Pi's
recorded cost; its model and provider its own, else the latest
``model_change``'s on the path, else the header's; a tool result linked to an
unanswered call with its id), compactions with their first kept message.
``tests/unit/logs/test_logs_fast_readers.py`` checks that the row is the full reader's.

It returns None (the full reader reads the file) where that reader would do
something it does not model: a file ``detect_format`` does not call Pi, a line
msgspec refuses or whose fields have other types than declared, a header of a
version other than 1 to 3, two entries with one id, a tree the full reader
refuses (a missing id, a parent naming no entry, a cycle), a message it
refuses, a header without ``cwd``, and what ``usage_lines`` leaves to it.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..model import Message, Session, ToolCall
from .usage_lines import Repeats, Stream, Unsure, detected, identity
from .usage_skeleton import Skeleton
from .builder import SessionBuilder
from .claude_code_usage import loads_line
from .pi import NAME, pi_usage
from .repairing import Repairs

__all__ = ["read_usage"]

_CALL = ToolCall(id="call", name="tool", arguments={})  # a placeholder: only the number of calls is read
_KEYS = ("id", "timestamp")  # pi._identity


class _Block(msgspec.Struct):
    type: Any = None
    text: Any = None
    id: Any = None
    name: Any = None


class _Msg(msgspec.Struct):
    role: Any = UNSET
    content: Union[Raw, UnsetType] = UNSET
    usage: Any = None
    model: Any = None
    provider: Any = None
    toolCallId: Any = None


class _Entry(msgspec.Struct):
    type: Any = None
    id: Any = None
    parentId: Any = None
    timestamp: Any = None
    message: Union[_Msg, UnsetType] = UNSET
    content: Union[Raw, UnsetType] = UNSET
    firstKeptEntryId: Any = None
    firstKeptEntryIndex: Any = None
    modelId: Any = None
    provider: Any = None
    name: Any = None


_decode = msgspec.json.Decoder(_Entry).decode
class _Part(msgspec.Struct):
    """A content part: any object (``flatten_content`` reads its text; the bill reads none of it)."""


_parts = msgspec.json.Decoder(list[Union[str, _Part]]).decode  # a list of strings and objects: flatten_content's
_blocks = msgspec.json.Decoder(list[_Block]).decode


def _takes(content: Union[Raw, UnsetType]) -> bool:
    """Whether ``flatten_content`` would take it (a string, null, or a list of strings and objects)."""
    if content is UNSET:
        return True
    raw = bytes(content)
    if raw[:1] in (b'"', b"n"):  # a string or null (the line was read whole before: ``usage_lines.check``)
        return True
    try:
        _parts(content)  # its strings and objects' fields skipped, not decoded
    except Exception:
        return False
    return True


def _reply(content: Union[Raw, UnsetType]) -> tuple[bool, list[tuple[Any, Any]]] | None:
    """An assistant message's blocks as the bill reads them: (has text, its calls' ids and names); None
    where the full reader refuses the content (not a list of objects)."""
    if content is UNSET:
        return None
    try:
        blocks = _blocks(content)
    except Exception:
        return None
    text = any(b.type == "text" and isinstance(b.text, str) and b.text for b in blocks)
    return text, [(b.id, b.name) for b in blocks if b.type == "toolCall"]


def _slim(e: _Entry) -> _Entry:
    """``e`` with its content read now, as the flags ``_Builder`` uses, and no longer held: a ``Raw`` holds
    the whole line, and every entry is kept until the path is known."""
    if isinstance(e.message, _Msg):
        m = e.message
        m.content = _reply(m.content) if m.role == "assistant" else _takes(m.content)  # type: ignore[assignment]
    e.content = _takes(e.content)  # type: ignore[assignment]
    return e


def _checked(taken: Any) -> None:
    if taken is False:
        raise Unsure()  # flatten_content refuses it


class _Builder:
    """``pi.loads`` from the path's entries: the messages the bill and the ledger read."""

    def __init__(self, file: str, repairs: Repairs, header: dict[str, Any]):
        self.repairs = repairs
        self.b = SessionBuilder(file=file, source_format=NAME, lenient=True, repairs=repairs)
        self.out = Skeleton()
        self.calls: dict[str, int] = {}  # original call id -> calls not yet answered
        self.made: set[str] = set()
        self.current = {key: header[field] for key, field in (("model", "modelId"), ("provider", "provider"))
                        if isinstance(header.get(field), str) and header[field]}

    def message(self, lineno: int, msg: Union[_Msg, UnsetType], meta: dict[str, Any]) -> bool:
        """One message entry; False for a role the reader skips (an unknown entry)."""
        if not isinstance(msg, _Msg) or msg.role is UNSET:
            raise Unsure()  # no message, or no role: refused
        role = msg.role
        if role == "user" or role in ("custom", "hookMessage"):
            _checked(msg.content)
            self.out.plain("user", "x", meta)
        elif role == "assistant":
            read: Any = msg.content
            if not isinstance(read, tuple):
                raise Unsure()  # not a list of blocks: refused
            text, made = read
            if isinstance(msg.usage, dict):
                self.b.line = lineno
                recorded = pi_usage(self.b, msg.usage)
                if recorded is not None:
                    meta["usage"] = recorded
            for key, value in (("model", msg.model), ("provider", msg.provider)):
                if isinstance(value, str) and value:
                    meta[key] = value
                elif self.current.get(key):
                    meta[key] = self.current[key]
            for call, name in made:
                if not isinstance(call, str) or not call or not isinstance(name, str) or not name:
                    raise Unsure()
                self.calls[call] = self.calls.get(call, 0) + 1
                self.made.add(call)
            self.out.reply(Message(id="m", role="assistant", content="x" if text else "",
                                   tool_calls=(_CALL,) * len(made), metadata=meta), meta)
        elif role == "toolResult":
            _checked(msg.content)
            call = msg.toolCallId
            if not isinstance(call, str) or not call or call not in self.made:
                raise Unsure()
            linked = self.calls[call] > 0
            self.calls[call] -= linked
            self.out.plain("tool", "x", meta, "call" if linked else None)
        elif role == "bashExecution":
            self.out.plain("user", "x", meta)
        elif role in ("branchSummary", "compactionSummary"):
            kind = "branch_summary" if role == "branchSummary" else "compaction"
            self.out.plain("summary", "x", {**meta, "kind": kind})
        else:
            return False
        return True


def _path(entries: list[tuple[int, str, _Entry]]) -> list[tuple[int, str, _Entry]]:
    """``pi._path`` for entries whose ids are unique."""
    if not entries:
        return []
    by_id = {eid: (lineno, eid, e) for lineno, eid, e in entries}
    path, seen = [], set()
    current: tuple[int, str, _Entry] | None = entries[-1]
    while current is not None:
        path.append(current)
        seen.add(current[1])
        parent = current[2].parentId
        if parent is None:
            break
        if not isinstance(parent, str) or parent not in by_id or parent in seen:
            raise Unsure()  # the full reader names the broken tree
        current = by_id[parent]
    path.reverse()
    return path


def _session(file: str, header: dict[str, Any], entries: list[tuple[int, str, _Entry]], repairs: Repairs
             ) -> Session:
    version = header.get("version", 1)
    if version not in (1, 2, 3) or not isinstance(header.get("cwd"), str) or not header["cwd"]:
        raise Unsure()
    if version == 1:
        path = entries
    else:
        ids = [eid for _, eid, _ in entries]
        if len(set(ids)) != len(ids):
            raise Unsure()  # the full reader renames repeated ids
        path = _path(entries)
    b = _Builder(file, repairs, header)
    first_message: dict[str, int] = {}
    compactions: list[dict[str, Any]] = []
    name = ""
    for lineno, eid, e in path:
        first_message[eid] = len(b.out.out)
        kind = e.type
        meta: dict[str, Any] = {"timestamp": e.timestamp} if isinstance(e.timestamp, str) else {}
        if kind == "message":
            if not b.message(lineno, e.message, meta):
                repairs.add("unknown_entries", lineno)
        elif kind == "compaction":
            first_kept = e.firstKeptEntryId
            if first_kept is None and isinstance(e.firstKeptEntryIndex, int):
                idx = e.firstKeptEntryIndex
                first_kept = entries[idx][1] if 0 <= idx < len(entries) else None
            compactions.append({"entry_id": eid, "summary": "x", "first_kept": first_kept,
                                "tokens_before": None, "position_index": len(b.out.out)})
            b.out.plain("summary", "x", {**meta, "kind": "compaction"})
        elif kind == "branch_summary":
            b.out.plain("summary", "x", {**meta, "kind": "branch_summary"})
        elif kind == "custom_message":
            _checked(e.content)
            b.out.plain("user", "x", {**meta, "kind": "custom_message"})
        else:
            if kind == "model_change" and isinstance(e.modelId, str) and e.modelId:
                b.current = {"model": e.modelId, **({"provider": e.provider}
                                                    if isinstance(e.provider, str) and e.provider else {})}
            if kind == "session_info" and isinstance(e.name, str):
                name = e.name
    out = b.out.finish()
    recorded = []
    for c in compactions:
        fk = c.pop("first_kept")
        kept = first_message.get(fk) if fk is not None else None
        c["first_kept_index"] = kept if kept is not None and kept < len(out) else None
        c["first_kept_message_id"] = "m" if c["first_kept_index"] is not None else None
        recorded.append(c)
    metadata: dict[str, Any] = {"source": {"header": {"cwd": header["cwd"]}}}
    if recorded:
        metadata["recorded_compactions"] = recorded
    repairs.merge_into(metadata)
    return Session(messages=tuple(out), name=name or str(header.get("id") or ""), source_format=NAME,
                   metadata=metadata)


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Pi session file ``path`` and the file's SHA-256, or None when the full
    reader (``pruner.formats.load_session``) must read it (see the module)."""
    try:
        with Stream(path) as stream:
            repeats = Repeats(stream)
            header: dict[str, Any] | None = None
            entries: list[tuple[int, str, _Entry]] = []
            for lineno, offset, raw in stream.lines():
                if header is None:
                    if not detected(stream, NAME):
                        return None
                    first = loads_line(raw)  # the header, whole: the full reader keeps it
                    if not isinstance(first, dict) or first.get("type") != "session":
                        return None
                    header = first
                    key = identity(_decode(raw), _KEYS)
                    if key is not None:
                        repeats.repeated(key, raw, offset)
                    continue
                e = _decode(raw)
                key = identity(e, _KEYS)
                if key is not None and repeats.repeated(key, raw, offset):
                    continue
                eid = e.id if isinstance(e.id, str) and e.id else None
                entries.append((lineno, eid or "", _slim(e)))
            if header is None:
                return None
            version = header.get("version", 1)
            if version == 1:
                if any(e.id is not None and not isinstance(e.id, str) for _, _, e in entries):
                    return None  # an id of another type: the full reader keeps it as it is
                entries = [(n, eid or f"e{n}", e) for n, eid, e in entries]
            elif any(not eid for _, eid, _ in entries):
                return None  # an entry without an id: refused
            return _session(stream.file, header, entries, Repairs()), stream.digest
    except Exception:  # Unsure, a line msgspec refuses, anything the full reader should name: it reads the file
        return None
