"""GitHub Copilot CLI, read for the bill and the cache ledger only (``pruner logs`` without strategies).

Each event is decoded by a typed msgspec decoder declaring only what the bill and the ledger read (an
event's type, ids, time, chain; a message's text, model, output tokens, API call and tool requests' ids
and names; a tool result's call and outcome; the usage events and the shutdown totals); tool arguments,
tool output and the many other event kinds' payloads are skipped unread. The events go through the
full reader's own ``copilot_cli.session_from_records`` with texts ``"x"`` (or ``""``) and arguments
``{}``, so messages, chains, usage and repairs are the full reader's. Anything it is unsure of goes to
the full reader (``read_usage`` returns None): see ``_usage_lines``, plus a number only the strict
reader refuses and a session that records no ``cwd``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..model import Session
from ._usage_lines import Unsupported, lines, risky
from .copilot_cli import session_from_records
from .repairing import Repairs


class _Request(msgspec.Struct):
    toolCallId: Any = None
    name: Any = None


class _Context(msgspec.Struct):
    cwd: str | None = None


class _Result(msgspec.Struct):
    content: str | None = None


class _Error(msgspec.Struct):
    message: str | None = None


class _Usage(msgspec.Struct):
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheReadTokens: int | None = None
    cacheWriteTokens: int | None = None
    reasoningTokens: int | None = None


class _ModelMetric(msgspec.Struct):
    usage: _Usage | None = None


class _AgentMetric(msgspec.Struct):
    modelMetrics: dict[str, _ModelMetric] | None = None


class _Data(msgspec.Struct):
    sessionId: str | None = None
    selectedModel: str | None = None
    copilotVersion: str | None = None
    context: _Context | None = None
    content: str | None = None
    transformedContent: str | None = None
    messageId: str | None = None
    apiCallId: str | None = None
    model: str | None = None
    outputTokens: int | None = None
    toolRequests: list[_Request] | None = None
    toolCallId: str | None = None
    success: bool | None = None
    result: _Result | None = None
    error: _Error | None = None
    inputTokens: int | None = None
    cacheReadTokens: int | None = None
    cacheWriteTokens: int | None = None
    reasoningTokens: int | None = None
    agentMetrics: dict[str, _AgentMetric] | None = None
    modelMetrics: dict[str, _ModelMetric] | None = None


class _Event(msgspec.Struct):
    type: str | None = None
    id: str | None = None
    timestamp: str | None = None
    agentId: str | None = None
    data: _Data | None = None


_decode = msgspec.json.Decoder(_Event).decode
_TEXTS = ("content", "transformedContent")
_PLAIN = ("sessionId", "selectedModel", "copilotVersion", "messageId", "apiCallId", "model", "outputTokens",
          "toolCallId", "success", "inputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


def _decode_line(line: bytes) -> _Event:
    if risky(line):
        raise Unsupported()
    return _decode(line)


def _x(text: str) -> str:
    return "x" if text else ""


def _models(models: dict[str, _ModelMetric] | None) -> dict[str, Any] | None:
    if models is None:
        return None
    return {k: {} if m.usage is None else {"usage": msgspec.structs.asdict(m.usage)} for k, m in models.items()}


def _data(d: _Data) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k in _PLAIN if (v := getattr(d, k)) is not None}
    out.update({k: _x(v) for k in _TEXTS if (v := getattr(d, k)) is not None})
    if d.context is not None:
        out["context"] = {} if d.context.cwd is None else {"cwd": d.context.cwd}
    if d.toolRequests is not None:
        out["toolRequests"] = [{"toolCallId": r.toolCallId, "name": r.name, "arguments": {}} for r in d.toolRequests]
    if d.result is not None:
        out["result"] = {} if d.result.content is None else {"content": _x(d.result.content)}
    if d.error is not None:
        out["error"] = {} if d.error.message is None else {"message": _x(d.error.message)}
    if d.modelMetrics is not None:
        out["modelMetrics"] = _models(d.modelMetrics)
    if d.agentMetrics is not None:
        out["agentMetrics"] = {k: {} if a.modelMetrics is None else {"modelMetrics": _models(a.modelMetrics)}
                               for k, a in d.agentMetrics.items()}
    return out


def _as_event(e: _Event) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k in ("type", "id", "timestamp", "agentId") if (v := getattr(e, k)) is not None}
    if e.data is not None:
        out["data"] = _data(e.data)
    return out


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Copilot CLI event log ``path`` and the file's SHA-256, or None when the
    full reader must read it (see the module)."""
    try:
        file, decoded, digest = lines(path, _decode_line)
        if not any(e.type == "session.start" and e.data is not None and e.data.context is not None
                   and e.data.context.cwd for _, e in decoded):
            return None  # recorded_cwd would look further, into the messages' sources
        records = [(n, _as_event(e)) for n, e in decoded]
        return session_from_records(records, file=file, repairs=Repairs()), digest
    except Exception:  # Unsupported, or anything the full reader should name: it reads the file
        return None
