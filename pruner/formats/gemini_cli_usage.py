"""Gemini CLI, read for the bill and the cache ledger only: the recording's skeleton, not its text.

A Gemini CLI recording is one JSON document (the CLI rewrites it whole). ``read_usage`` decodes it
once with msgspec into Structs that declare only the fields ``gemini_cli.loads`` reads (message text,
thoughts, arguments are skipped; a tool call's result is decoded only to check it), and follows that
reader (this repository, the same commit): each ``user`` message, each ``gemini`` response (its usage by
``gemini_cli.gemini_usage`` itself, its model, provider ``google``), each call's result as the tool
message after it (linked to an unanswered call with its id, timed by the call's ``timestamp``); the
CLI's notices and unknown types are left out. ``tests/unit/logs/test_logs_fast_readers.py`` checks the row is
the full reader's on the shared real recordings, the sample and generated files.

It returns None (the full reader reads the file) where that reader would do something it does not
model: a file over ``DEFAULT_MAX_BYTES`` or charged over it, a file not text (``check_text_bytes``),
invalid UTF-8, a document msgspec refuses or whose fields have other types than declared, a top-level
field the recording does not define (detection would be another question), a message with a ``role``
(not Gemini CLI's), a message or call the full reader refuses, any ``cwd`` field (``recorded_cwd``
would find it), and a document the other formats' detectors also claim.
"""

from __future__ import annotations

import hashlib
from typing import Any, Union

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..files import read_limited
from ..model import Message, Session, ToolCall
from .usage_lines import Unsure, check
from .builder import SessionBuilder
from .usage_skeleton import seconds
from .codex_usage import _content, _text
from .common import Probe
from .gemini_cli import NAME, NOTICE_TYPES, gemini_usage
from .repairing import Repairs

__all__ = ["read_usage"]

_CALL = ToolCall(id="call", name="tool", arguments={})  # a placeholder: only the number of calls is read
#: Where a key named ``cwd`` could hide (escaped letters): such a file goes to the full reader.
_CWD = (b'"cwd"', b"\\u0063", b"\\u0077", b"\\u0064")


class _Call(msgspec.Struct):
    id: Any = None
    name: Any = None
    result: Union[Raw, UnsetType] = UNSET
    status: Any = None
    timestamp: Any = None


class _Message(msgspec.Struct):
    id: Any = UNSET
    type: Any = UNSET
    role: Any = UNSET
    timestamp: Any = UNSET
    content: Union[Raw, UnsetType] = UNSET
    model: Any = UNSET
    tokens: Any = UNSET
    toolCalls: Union[list[_Call], None, UnsetType] = UNSET


class _Recording(msgspec.Struct, forbid_unknown_fields=True):
    messages: list[_Message]
    sessionId: Any = UNSET
    projectHash: Any = UNSET
    startTime: Any = UNSET
    lastUpdated: Any = UNSET
    summary: Any = UNSET
    directories: Any = UNSET
    kind: Any = UNSET


_decode = msgspec.json.Decoder(_Recording).decode
_generic = msgspec.json.Decoder().decode


def _fields(struct: msgspec.Struct, placeholder: tuple[str, ...]) -> dict[str, Any]:
    """The fields ``struct`` was given, as detection sees them (``placeholder`` ones as ``"x"``)."""
    return {k: ("x" if k in placeholder else getattr(struct, k)) for k in struct.__struct_fields__
            if getattr(struct, k) is not UNSET}


def _detected(doc: _Recording, head: str) -> bool:
    """Whether ``detect_format`` calls the document Gemini CLI: every registered detector, on the
    document as its fields are (text, tool calls and results as placeholders)."""
    from . import FORMATS

    skeleton = _fields(doc, ("messages",))
    skeleton["messages"] = [_fields(m, ("content", "toolCalls")) for m in doc.messages]
    probe = Probe(document=skeleton, is_document=True)
    scores = [(fmt.detect(head, probe), name) for name, fmt in FORMATS.items()]
    best = max(s for s, _ in scores)
    return best > 0 and [name for s, name in scores if s == best] == [NAME]


def _result(raw: Union[Raw, UnsetType]) -> None:
    """``gemini_cli._result_text`` would take it (a part's ``functionResponse``, when given, an object)."""
    if isinstance(raw, Raw) and bytes(raw)[:1] == b"[":
        for part in _generic(raw):
            if isinstance(part, dict) and "functionResponse" in part and not isinstance(part["functionResponse"], dict):
                raise Unsure()


def _session(doc: _Recording, file: str) -> Session:
    repairs = Repairs()
    b = SessionBuilder(file=file, source_format=NAME, lenient=True, repairs=repairs)
    out: list[Message] = []
    calls: dict[str, int] = {}  # original call id -> calls not yet answered
    for i, m in enumerate(doc.messages):
        meta: dict[str, Any] = {"timestamp": m.timestamp} if isinstance(m.timestamp, str) else {}
        seconds(m.timestamp)  # a time outside the calendar: the full reader reports it (OutsideCalendar)
        text = _text(None if m.content is UNSET else _content(m.content))  # flatten_content's check
        if m.type == "user":
            out.append(Message(id="m", role="user", content="x", metadata=meta))
        elif m.type == "gemini":
            if isinstance(m.model, str) and m.model:
                meta["model"] = m.model
                meta["source"] = {"model": m.model, "provider": "google"}
            b.line = None
            u = gemini_usage(b, None if m.tokens is UNSET else m.tokens, f"$.messages[{i}].tokens")
            if u is not None:
                meta["usage"] = u
            made = m.toolCalls if isinstance(m.toolCalls, list) else []
            for c in made:
                if not isinstance(c.id, str) or not c.id or not isinstance(c.name, str) or not c.name:
                    raise Unsure()
                calls[c.id] = calls.get(c.id, 0) + 1
            out.append(Message(id="m", role="assistant", content="x" if text else "",
                               tool_calls=(_CALL,) * len(made), metadata=meta))
            for c in made:
                if c.result is UNSET:
                    continue
                _result(c.result)
                linked = calls[c.id] > 0
                calls[c.id] -= linked
                rmeta = {"timestamp": c.timestamp} if isinstance(c.timestamp, str) else {}
                seconds(c.timestamp)
                out.append(Message(id="m", role="tool", content="x", tool_call_id="call" if linked else None,
                                   metadata=rmeta))
        elif m.type not in NOTICE_TYPES:
            repairs.add("unknown_entries", None)
    metadata: dict[str, Any] = {"source": {}}
    repairs.merge_into(metadata)
    name = "" if doc.sessionId is UNSET else str(doc.sessionId or "")
    return Session(messages=tuple(out), name=name, source_format=NAME, metadata=metadata)


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Gemini CLI recording ``path`` and the file's SHA-256, or None when the
    full reader (``pruner.formats.load_session``) must read it (see the module)."""
    from . import DEFAULT_MAX_BYTES, _check_size, check_text_bytes

    try:
        file, data = read_limited(path, DEFAULT_MAX_BYTES)
        digest = hashlib.sha256(data).hexdigest()
        check_text_bytes(data, file=file)
        _check_size(data, DEFAULT_MAX_BYTES, file)
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        if any(k in data for k in _CWD):
            return None
        check(data)  # UTF-8, and no number only the strict reader refuses
        stripped = data.lstrip()
        first, _, rest = stripped.partition(b"\n")
        if stripped[:1] == b"{" and rest.strip():
            try:
                if isinstance(_generic(first), dict):
                    return None  # JSON Lines to the detection
            except Exception:
                pass
        doc = _decode(data)
        if any(m.role is not UNSET for m in doc.messages[:50]):
            return None
        if not _detected(doc, stripped[:4096].decode("utf-8", "ignore")):
            return None
        return _session(doc, file), digest
    except Exception:  # Unsure, a document msgspec refuses, anything the full reader should name: it reads it
        return None
