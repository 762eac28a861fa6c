"""Amp, read for the bill and the cache ledger only (``pruner logs`` without strategies).

The thread document is decoded by a typed msgspec decoder declaring only what the bill and the ledger
read (each message's role, id, time, usage and credits, its blocks' kinds, texts and call ids and
names, the ledger's token counts, the workspace); tool inputs and tool output are skipped unread. The
document goes through the full reader's own ``amp.session_from_document`` with texts ``"x"`` (or
``""``), inputs ``{}`` and results ``"x"``, so messages, usage, recorded cost and repairs are the full
reader's. Anything it is unsure of goes to the full reader (``read_usage`` returns None): see
``usage_lines.document``, plus a thread that records no workspace.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..model import Session
from .amp import session_from_document
from .repairing import Repairs
from .usage_lines import document


class _Run(msgspec.Struct):
    status: Any = None


class _Block(msgspec.Struct):
    type: str | None = None
    text: str | None = None
    id: Any = None
    name: Any = None
    toolUseID: Any = None
    run: _Run | None = None


class _Usage(msgspec.Struct):
    model: str | None = None
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheCreationInputTokens: int | None = None
    cacheReadInputTokens: int | None = None
    credits: float | None = None
    timestamp: str | None = None


class _Meta(msgspec.Struct):
    sentAt: int | None = None


class _Message(msgspec.Struct):
    role: str | None = None
    messageId: Any = None
    content: list[_Block] | str | None = None
    usage: _Usage | None = None
    meta: _Meta | None = None


class _Tokens(msgspec.Struct):
    input: int | None = None
    output: int | None = None


class _Event(msgspec.Struct):
    tokens: _Tokens | None = None
    model: str | None = None
    toMessageId: Any = None


class _Ledger(msgspec.Struct):
    events: list[_Event] | None = None


class _Tree(msgspec.Struct):
    uri: str | None = None


class _Initial(msgspec.Struct):
    trees: list[_Tree] | None = None


class _Env(msgspec.Struct):
    initial: _Initial | None = None


class _Thread(msgspec.Struct):
    id: Any = None
    messages: list[_Message] | None = None
    usageLedger: _Ledger | None = None
    env: _Env | None = None


_decode = msgspec.json.Decoder(_Thread).decode


def _x(text: str) -> str:
    return "x" if text else ""


def _block(b: _Block) -> dict[str, Any]:
    out: dict[str, Any] = {} if b.type is None else {"type": b.type}
    if b.text is not None:
        out["text"] = _x(b.text)
    if b.type == "tool_use":
        out.update(id=b.id, name=b.name, input={})
    if b.type == "tool_result":
        out["toolUseID"] = b.toolUseID
        if b.run is not None:
            out["run"] = {"status": b.run.status, "result": "x"}
    return out


def _message(m: _Message) -> dict[str, Any]:
    out: dict[str, Any] = {"messageId": m.messageId} if m.messageId is not None else {}
    if m.role is not None:
        out["role"] = m.role
    if isinstance(m.content, str):
        out["content"] = _x(m.content)
    elif m.content is not None:
        out["content"] = [_block(b) for b in m.content]
    if m.usage is not None:
        out["usage"] = {k: v for k, v in msgspec.structs.asdict(m.usage).items() if v is not None}
    if m.meta is not None:
        out["meta"] = {} if m.meta.sentAt is None else {"sentAt": m.meta.sentAt}
    return out


def _as_document(t: _Thread) -> dict[str, Any]:
    out: dict[str, Any] = {} if t.id is None else {"id": t.id}
    if t.messages is not None:
        out["messages"] = [_message(m) for m in t.messages]
    if t.usageLedger is not None and t.usageLedger.events is not None:
        out["usageLedger"] = {"events": [
            {"tokens": None if e.tokens is None else {k: v for k, v in msgspec.structs.asdict(e.tokens).items()
                                                      if v is not None},
             "model": e.model, "toMessageId": e.toMessageId} for e in t.usageLedger.events]}
    if t.env is not None and t.env.initial is not None and t.env.initial.trees is not None:
        out["env"] = {"initial": {"trees": [{"uri": tree.uri} for tree in t.env.initial.trees]}}
    return out


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Amp thread ``path`` and the file's SHA-256, or None when the full
    reader must read it (see the module)."""
    from .amp import workspace

    try:
        file, thread, digest = document(path, _decode)
        doc = _as_document(thread)
        if not workspace(doc):
            return None  # recorded_cwd would look further, into the messages' sources
        return session_from_document(doc, file=file, repairs=Repairs()), digest
    except Exception:  # Unsure, or anything the full reader should name: it reads the file
        return None
