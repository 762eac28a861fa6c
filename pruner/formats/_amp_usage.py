"""Amp, read for the bill and the cache ledger only: the thread's skeleton, not its text.

The thread document is decoded by a typed msgspec decoder declaring only what the bill and the ledger
read (each message's role, id, time, usage and credits, its blocks' kinds, whether a text is empty, the
calls' ids and names and the results' call ids, the ledger's token counts, the workspace); tool inputs
and tool output are skipped unread (``usage_lines.document``: the file hashed once and read whole by
msgspec's generic decoder first). It keeps one message per Amp message, or per tool result, in a
``usage_skeleton.Skeleton``.

It follows ``pruner.formats.amp.session_from_document`` (this repository, the same commit) step by step:
``info`` messages kept out, an assistant message with its model and ``amp.amp_usage`` itself (recorded
credits as cost), else the older ``usageLedger`` event's tokens, a result linked as
``SessionBuilder.add_result`` links it, a user text after a message's results.
``tests/unit/logs/test_logs_new_agents.py`` and ``tests/unit/formats/test_formats_amp.py``
check the row is the full reader's.

Anything it is unsure of goes to the full reader (``read_usage`` returns None): a document msgspec
refuses or whose fields have other types than declared, a call or result the full reader refuses, a
thread that records no workspace, and what ``usage_lines.document`` leaves to the full reader.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..model import Message, Session, ToolCall
from .amp import NAME, ROLES, amp_usage, iso_ms, workspace
from .builder import SessionBuilder
from .common import checked_usage, jpath
from .repairing import Repairs
from .usage_lines import Unsure, document
from .usage_skeleton import Skeleton

__all__ = ["read_usage"]

_CALL = ToolCall(id="call", name="tool", arguments={})  # a placeholder: only the number of calls is read
_QUIET = ("thinking", "tool_use", "redacted_thinking")  # assistant blocks that add no text


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


def _ledger(b: SessionBuilder, t: _Thread) -> dict[Any, tuple[dict[str, Any], str | None]]:
    """``amp._ledger``."""
    out: dict[Any, tuple[dict[str, Any], str | None]] = {}
    events = t.usageLedger.events if t.usageLedger is not None else None
    for k, e in enumerate(events or ()):
        if e.tokens is None:
            continue
        u = checked_usage(b, jpath("$.usageLedger.events", k, "tokens"),
                          {"input": ("input", e.tokens.input), "output": ("output", e.tokens.output)})
        if u is not None and not isinstance(e.toMessageId, bool):
            out[e.toMessageId] = (u, e.model if e.model else None)
    return out


def _text(blocks: list[_Block], quiet: tuple[str, ...]) -> bool:
    """Whether the message's texts (text blocks, ``[kind]`` for a block of another kind) join to text."""
    n, some = 0, False
    for blk in blocks:
        if blk.type == "text" and blk.text is not None:
            n += 1
            some = some or bool(blk.text)
        elif blk.type not in quiet:
            return True
    return some or n > 1


class _Reader:
    def __init__(self, file: str):
        self.repairs = Repairs()
        self.b = SessionBuilder(file=file, source_format=NAME, lenient=True, repairs=self.repairs)
        self.out = Skeleton()
        # original call id -> its calls grouped by message, oldest first: [message, calls unanswered]
        self.calls: dict[str, list[list[int]]] = {}

    def message(self, m: _Message, i: int, usage: dict[str, Any] | None, model: str | None) -> None:
        """``amp._message``."""
        stamp = iso_ms(m.meta.sentAt) if m.meta is not None else None
        if m.usage is not None and m.usage.timestamp is not None:
            stamp = m.usage.timestamp
        meta: dict[str, Any] = {"timestamp": stamp} if stamp else {}
        blocks = [_Block(type="text", text=m.content)] if isinstance(m.content, str) else m.content or []
        if m.role == "assistant":
            if model:
                meta["model"] = model
            if usage is not None:
                meta["usage"] = usage
            meta["source"] = {"model": model} if model else {}
            calls = 0
            for blk in blocks:
                if blk.type != "tool_use":
                    continue
                if not isinstance(blk.id, str) or not blk.id or not isinstance(blk.name, str) or not blk.name:
                    raise Unsure()  # refused: the full reader names it
                if blk.id in self.calls:
                    self.repairs.add("renamed_call_ids", None)  # the builder's _free: another id, same links
                made = self.calls.setdefault(blk.id, [])
                if not made or made[-1][0] != i:
                    made.append([i, 0])
                made[-1][1] += 1
                calls += 1
            self.out.reply(Message(id="m", role="assistant", content="x" if _text(blocks, _QUIET) else "",
                                   tool_calls=(_CALL,) * calls, metadata=meta), meta)
            return
        results = 0
        for blk in blocks:
            if blk.type != "tool_result":
                continue
            groups = self.calls.get(blk.toolUseID) if isinstance(blk.toolUseID, str) else None
            if groups is None:
                raise Unsure()  # refused: no call id, or answering no call
            while groups and not groups[-1][1]:
                groups.pop()  # every call of the latest message with this id is answered
            if groups:
                groups[-1][1] -= 1
            else:
                self.repairs.add("unlinked_results", None)  # kept as unlinked tool output
            results += 1
            self.out.plain("tool", "x", dict(meta), "call" if groups else None)
        texts = [blk for blk in blocks if blk.type != "tool_result"]
        if texts or not results:
            self.out.plain("user", "x" if _text(texts, ()) else "", meta)

    def session(self, t: _Thread) -> Session:
        """``amp.session_from_document``."""
        if t.messages is None:
            raise Unsure()  # refused: not a thread
        recorded = any(m.role == "assistant" and m.usage is not None for m in t.messages)
        ledger = {} if recorded else _ledger(self.b, t)
        for i, m in enumerate(t.messages):
            if m.role not in ROLES:
                self.repairs.add("unknown_entries", None, type=f"message with role {m.role!r}"[:60])
                continue
            if m.role == "info":
                continue
            usage, model = None, None
            if m.role == "assistant" and m.usage is not None:
                usage = amp_usage(self.b, {k: v for k, v in msgspec.structs.asdict(m.usage).items() if v is not None},
                                  jpath("$.messages", i, "usage"))
                model = m.usage.model if m.usage.model else None
            elif m.role == "assistant" and m.messageId in ledger:
                usage, model = ledger[m.messageId]
            self.message(m, i, usage, model)
        trees = t.env.initial.trees if t.env is not None and t.env.initial is not None else None
        cwd = workspace({"env": {"initial": {"trees": [{"uri": tree.uri} for tree in trees or ()]}}})
        if not cwd:
            raise Unsure()  # recorded_cwd would look further, into the messages' sources
        metadata = self.repairs.merge_into({"source": {"cwd": cwd}})
        return Session(messages=tuple(self.out.finish(lambda m: m.metadata)), name=str(t.id or ""),
                       source_format=NAME, metadata=metadata)


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Amp thread ``path`` and the file's SHA-256, or None when the full
    reader must read it (see the module)."""
    try:
        file, thread, digest = document(path, _decode)
        return _Reader(file).session(thread), digest
    except Exception:  # Unsure, or anything the full reader should name: it reads the file
        return None
