"""Qwen Code, read for the bill and the cache ledger only: the recording's skeleton, streamed, not its text.

``read_usage`` reads a Qwen Code recording line by line (``usage_lines.Stream``: flat memory, hashed
once), each record decoded by msgspec into Structs that declare only what the bill and the ledger read
(a record's type, uuid, time, model, usage, chain, the session's fields, and of its parts only whether
a text is empty, whether it is thinking, the calls' ids and names and the results' call ids); tool
arguments and tool output, the bulk of a recording, are skipped unread. It keeps one message per record
in a ``usage_skeleton.Skeleton`` (messages the bill reads nothing of its own in are shared).

It follows ``pruner.formats.qwen_code.session_from_records`` and its ``SessionBuilder`` (this
repository, the same commit) step by step: records in file order, ``system`` records counted by
subtype, a sidechain's records (``isSidechain`` and ``agentId``) its own chain, an ``assistant`` record
one message with its model and ``qwen_code.qwen_usage`` itself, a result linked to its call, a user
text after a record's results.
``tests/unit/logs/test_logs_new_agents.py`` and ``tests/unit/formats/test_formats_qwen_code.py``
check the row is the full reader's on every fixture, the sample and generated files.

Where the full reader would do something this one does not model, it returns None and the caller reads
the file in full: a line msgspec refuses or whose fields have other types than declared (a part of a
kind not declared here among them), a message id used twice in a chain, two calls with one id, a result
answering no call or one already answered, a call or result the full reader refuses, a session that
records no ``cwd``, and what ``usage_lines`` leaves to the full reader.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Union

import msgspec
from msgspec import UNSET, UnsetType

from ..model import MAIN_CHAIN, Message, Session, ToolCall
from .builder import SessionBuilder
from .qwen_code import NAME, RECORD_TYPES, SESSION_FIELDS, qwen_usage
from .repairing import Repairs
from .usage_lines import Repeats, Stream, Unsure, identity
from .usage_skeleton import Skeleton

__all__ = ["read_usage"]

_CALL = ToolCall(id="call", name="tool", arguments={})  # a placeholder: only the number of calls is read
_KEYS = ("uuid",)  # qwen_code._identity


class _Call(msgspec.Struct):
    id: Any = None
    name: Any = None


class _Part(msgspec.Struct, forbid_unknown_fields=True):
    text: Any = UNSET
    thought: Any = None
    functionCall: Union[_Call, None, UnsetType] = UNSET
    functionResponse: Union[_Call, None, UnsetType] = UNSET
    thoughtSignature: str | None = None


class _Content(msgspec.Struct):
    parts: list[_Part] | None = None


class _Result(msgspec.Struct):
    status: Any = None


class _Record(msgspec.Struct):
    uuid: str | None = None
    sessionId: Any = None
    timestamp: Any = None
    type: Any = None
    subtype: Any = None
    cwd: Any = None
    version: Any = None
    gitBranch: Any = None
    message: _Content | None = None
    model: Any = None
    usageMetadata: Any = None
    isSidechain: Any = None
    agentId: Any = None


_decode = msgspec.json.Decoder(_Record).decode


def _text(parts: list[_Part]) -> bool:
    """Whether ``qwen_code._text`` gives a non-empty text (its thinking is not read by the bill)."""
    n, some = 0, False
    for p in parts:
        if isinstance(p.text, str):
            if p.thought is not True:
                n += 1
                some = some or bool(p.text)
        elif p.functionCall is UNSET and p.functionResponse is UNSET:
            return True  # "[kind]"
    return some or n > 1


class _Chain:
    """One chain's ``SessionBuilder``, as much of it as the bill reads."""

    def __init__(self, file: str, repairs: Repairs):
        self.repairs = repairs
        self.b = SessionBuilder(file=file, source_format=NAME, lenient=True, repairs=repairs)
        self.out = Skeleton()
        self.ids: set[str] = set()
        # original call id -> its calls grouped by message, oldest first: [message, calls unanswered]
        self.calls: dict[str, list[list[int]]] = {}

    def _id(self, uid: str) -> None:
        if uid in self.ids:
            raise Unsure()  # renamed by the builder: the full reader
        self.ids.add(uid)

    def record(self, r: _Record, n: int) -> None:
        recorded = r.uuid
        uid = recorded if recorded else f"r{n}"
        meta: dict[str, Any] = {"timestamp": r.timestamp} if isinstance(r.timestamp, str) else {}
        parts = [] if r.message is None or r.message.parts is None else r.message.parts
        if r.type == "assistant":
            if isinstance(r.model, str) and r.model:
                meta["model"] = r.model
                meta["source"] = {"model": r.model}
            self.b.line = n
            u = qwen_usage(self.b, r.usageMetadata, "usageMetadata")
            if u is not None:
                meta["usage"] = u
            self._id(uid)
            calls = 0
            for p in parts:
                call = p.functionCall
                if call is UNSET:
                    continue
                if call is None or not isinstance(call.id, str) or not call.id or not isinstance(call.name, str) \
                        or not call.name:
                    raise Unsure()  # refused: the full reader names it
                if call.id in self.calls:
                    self.repairs.add("renamed_call_ids", n)  # the builder's _free: another id, same links
                made = self.calls.setdefault(call.id, [])
                if not made or made[-1][0] != n:
                    made.append([n, 0])
                made[-1][1] += 1
                calls += 1
            self.out.reply(Message(id="m", role="assistant", content="x" if _text(parts) else "",
                                   tool_calls=(_CALL,) * calls, metadata=meta), meta)
            return
        results = 0
        for p in parts:
            response = p.functionResponse
            if response is UNSET:
                continue
            groups = self.calls.get(response.id) if response is not None and isinstance(response.id, str) else None
            if groups is None:
                raise Unsure()  # refused: no call id, or answering no call
            while groups and not groups[-1][1]:
                groups.pop()  # every call of the latest message with this id is answered
            if groups:
                groups[-1][1] -= 1
            else:
                self.repairs.add("unlinked_results", n)  # kept as unlinked tool output
            self._id(uid if results == 0 else f"{uid}.result{results}")
            results += 1
            self.out.plain("tool", "x", meta, "call" if groups else None)
        text = _text(parts)
        if text or not results:
            self._id(uid if not results else f"{uid}.text")
            self.out.plain("user", "x" if text else "", meta)

    def session(self, **kw: Any) -> Session:
        metadata = self.repairs.merge_into(kw.pop("metadata"))
        return Session(messages=tuple(self.out.finish(lambda m: m.metadata)), source_format=NAME,
                       metadata=metadata, **kw)


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Qwen Code recording ``path`` and the file's SHA-256, or None when the
    full reader must read it (see the module)."""
    try:
        with Stream(path) as stream:
            repairs = Repairs()
            chains: dict[str, _Chain] = {}
            info: dict[str, Any] = {}
            system: Counter[str] = Counter()
            repeats = Repeats(stream)
            for lineno, offset, raw in stream.lines():
                r = _decode(raw)
                key = identity(r, _KEYS)
                if key is not None and repeats.repeated(key, raw, offset):
                    continue
                if len(info) < len(SESSION_FIELDS):
                    for field in SESSION_FIELDS:
                        if field not in info and isinstance(getattr(r, field), str):
                            info[field] = getattr(r, field)
                kind = r.type
                if kind == "system":
                    system[str(r.subtype)[:60]] += 1
                    continue
                agent = r.agentId
                chain = agent if r.isSidechain is True and isinstance(agent, str) and agent \
                    and agent != MAIN_CHAIN else MAIN_CHAIN
                c = chains.get(chain)
                if c is None:
                    c = chains[chain] = _Chain(stream.file, repairs if chain == MAIN_CHAIN else Repairs())
                if kind not in RECORD_TYPES:
                    repairs.add("unknown_entries", lineno, type=f"record of type {kind!r}"[:60])
                    continue
                c.record(r, lineno)
            if not info.get("cwd"):
                return None  # recorded_cwd would look further, into the messages' sources
            main = chains.pop(MAIN_CHAIN, None) or _Chain(stream.file, repairs)
            subagents = tuple(c.session(name=name, metadata={"chain": name, "agent_id": name})
                              for name, c in chains.items())
            source: dict[str, Any] = dict(info)
            if system:
                source["system_records"] = dict(sorted(system.items()))
            return main.session(name=str(info.get("sessionId") or ""), metadata={"source": source},
                                subagents=subagents), stream.digest
    except Exception:  # Unsure, a line msgspec refuses, anything the full reader should name: it reads the file
        return None
