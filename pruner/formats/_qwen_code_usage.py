"""Qwen Code, read for the bill and the cache ledger only (``pruner logs`` without strategies).

Each line is decoded by a typed msgspec decoder declaring only what the bill and the ledger read (a
record's type, ids, time, model, usage, the session's fields, and of its Content only the text parts'
text, the calls' ids and names, the results' ids and names); tool arguments and tool output, the bulk
of a recording, are skipped unread. The records go through the full reader's own
``qwen_code.session_from_records``, with a call's arguments ``{}`` and a result's output ``"x"``, so the
messages, chains, usage and repairs are the full reader's. Anything it is unsure of goes to the full
reader (``read_usage`` returns None): see ``_usage_lines``, plus a part of a kind not declared here, a
number only the strict reader refuses (an exponent of three digits, thousands of digits) and a session
that records no ``cwd``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..model import Session
from ._usage_lines import Unsupported, lines, risky
from .qwen_code import session_from_records
from .repairing import Repairs


class _Call(msgspec.Struct):
    id: Any = None
    name: Any = None


class _Part(msgspec.Struct, forbid_unknown_fields=True):
    text: str | None = None
    thought: bool | None = None
    functionCall: _Call | None = None
    functionResponse: _Call | None = None
    thoughtSignature: str | None = None


class _Content(msgspec.Struct):
    parts: list[_Part] | None = None


class _Usage(msgspec.Struct):
    promptTokenCount: int | None = None
    candidatesTokenCount: int | None = None
    cachedContentTokenCount: int | None = None
    toolUsePromptTokenCount: int | None = None
    thoughtsTokenCount: int | None = None
    totalTokenCount: int | None = None


class _Result(msgspec.Struct):
    status: str | None = None


class _Record(msgspec.Struct):
    uuid: str | None = None
    sessionId: str | None = None
    timestamp: str | None = None
    type: str | None = None
    subtype: str | None = None
    cwd: str | None = None
    version: str | None = None
    gitBranch: str | None = None
    message: _Content | None = None
    model: str | None = None
    usageMetadata: _Usage | None = None
    toolCallResult: _Result | None = None
    isSidechain: bool | None = None
    agentId: str | None = None


_decode = msgspec.json.Decoder(_Record).decode
_FIELDS = ("uuid", "sessionId", "timestamp", "type", "subtype", "cwd", "version", "gitBranch", "model",
           "isSidechain", "agentId")


def _decode_line(line: bytes) -> _Record:
    if risky(line):
        raise Unsupported()
    return _decode(line)


def _part(p: _Part) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if p.text is not None:
        out["text"] = "x" if p.text else ""
    if p.thought is not None:
        out["thought"] = p.thought
    if p.functionCall is not None:
        out["functionCall"] = {"id": p.functionCall.id, "name": p.functionCall.name, "args": {}}
    if p.functionResponse is not None:
        out["functionResponse"] = {"id": p.functionResponse.id, "name": p.functionResponse.name,
                                   "response": {"output": "x"}}
    if not out:
        raise Unsupported()  # a part of no kind: the full reader shows its first key
    return out


def _as_record(r: _Record) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k in _FIELDS if (v := getattr(r, k)) is not None}
    if r.message is not None:
        out["message"] = {"parts": None if r.message.parts is None else [_part(p) for p in r.message.parts]}
    if r.usageMetadata is not None:
        out["usageMetadata"] = msgspec.structs.asdict(r.usageMetadata)
    if r.toolCallResult is not None:
        out["toolCallResult"] = {"status": r.toolCallResult.status}
    return out


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Qwen Code recording ``path`` and the file's SHA-256, or None when the
    full reader must read it (see the module)."""
    try:
        file, decoded, digest = lines(path, _decode_line)
        if not any(r.cwd for _, r in decoded):
            return None  # recorded_cwd would look further, into the messages' sources
        records = [(n, _as_record(r)) for n, r in decoded]
        return session_from_records(records, file=file, repairs=Repairs()), digest
    except Exception:  # Unsupported, or anything the full reader should name: it reads the file
        return None
