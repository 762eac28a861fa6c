"""GitHub Copilot CLI, read for the bill and the cache ledger only: the event log's skeleton, streamed.

``read_usage`` reads a Copilot CLI event log line by line (``usage_lines.Stream``: flat memory, hashed
once), each event decoded by msgspec into Structs that declare only what the bill and the ledger read
(an event's type, id, time, chain; of a message whether its text is empty, its model, output tokens,
API call and tool requests' ids and names; a tool result's call; the usage events and the shutdown
totals); tool arguments, tool output and the many other event kinds' payloads are skipped unread. It
keeps one message per event in a ``usage_skeleton.Skeleton``.

It follows ``pruner.formats.copilot_cli.session_from_records`` (this repository, the same commit) step
by step: an API call's chunks one request (its output the largest recorded), calls joining their
message, a result linked as ``SessionBuilder.add_result`` links it (a tool the person ran, answering no
model call, is no message), ``assistant.usage`` events on their request, else the shutdown's totals on
each (chain, model)'s last request, else the output tokens alone. ``tests/unit/logs/test_logs_new_agents.py`` and
``tests/unit/formats/test_formats_copilot_cli.py`` check the row is the full reader's.

Anything it is unsure of goes to the full reader (``read_usage`` returns None): a line msgspec refuses or
whose fields have other types than declared, a call the full reader refuses, a session that records no
``cwd``, and what ``usage_lines`` leaves to the full reader (``Stream``: every line read whole by
msgspec's generic decoder first, exact repeats dropped as the full reader drops them).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..model import MAIN_CHAIN, Message, Session, ToolCall
from .builder import SessionBuilder
from .common import token_count
from .copilot_cli import NAME, Totals, add_shutdown, copilot_usage, place_totals, totals_source
from .repairing import Repairs
from .usage_lines import Repeats, Stream, Unsure, identity
from .usage_skeleton import Skeleton

__all__ = ["read_usage"]

_CALL = ToolCall(id="call", name="tool", arguments={})  # a placeholder: only the number of calls is read
_USAGE = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


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


class _Detail(msgspec.Struct):
    tokenCount: int | None = None


class _ModelMetric(msgspec.Struct):
    usage: _Usage | None = None
    tokenDetails: dict[str, _Detail] | None = None


class _AgentMetric(msgspec.Struct):
    modelMetrics: dict[str, _ModelMetric] | None = None


class _Data(msgspec.Struct):
    sessionId: str | None = None
    selectedModel: str | None = None
    newModel: str | None = None
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


class _Reply:
    """An assistant message being assembled (chunks, usage and totals arrive later)."""

    __slots__ = ("text", "calls", "meta", "output")

    def __init__(self, text: bool, meta: dict[str, Any]):
        self.text, self.calls, self.meta = text, 0, meta
        self.output: int | None = None


class _Chain:
    """``copilot_cli._Chain`` and its ``SessionBuilder``, as much of them as the bill reads."""

    def __init__(self, file: str, repairs: Repairs):
        self.repairs = repairs
        self.b = SessionBuilder(file=file, source_format=NAME, lenient=True, repairs=repairs)
        self.out = Skeleton()  # Message, or _Reply until the end
        self.replies: dict[str, _Reply] = {}
        self.by_model: dict[str, list[_Reply]] = {}
        self.last: _Reply | None = None
        # original call id -> its calls grouped by message, oldest first: [message, calls unanswered]
        self.calls: dict[str, list[list[Any]]] = {}

    def reply(self, meta: dict[str, Any], model: str) -> _Reply:
        r = _Reply(False, meta)
        self.out.reply(r, meta)
        self.by_model.setdefault(model, []).append(r)
        self.last = r
        return r

    def assistant(self, e: _Event, d: _Data, selected: str | None) -> None:
        key = d.apiCallId if d.apiCallId else None
        draft = self.replies.get(key) if key is not None else None
        output = token_count(d.outputTokens)
        if draft is None:
            meta: dict[str, Any] = {"timestamp": e.timestamp} if isinstance(e.timestamp, str) else {}
            model = d.model if d.model else selected
            if model:
                meta["model"] = model
            if key:
                meta["request_id"] = key
            meta["source"] = {"model": model} if model else {}
            draft = self.reply(meta, model or "")
            draft.text = bool(d.content)
            if key is not None:
                self.replies[key] = draft
        elif d.content:
            draft.text = True
        if output is not None:
            draft.output = max(draft.output or 0, output)
        for call in d.toolRequests or ():
            cid, name = call.toolCallId, call.name
            if not isinstance(cid, str) or not cid or not isinstance(name, str) or not name:
                raise Unsure()  # refused: the full reader names it
            if cid in self.calls:
                self.repairs.add("renamed_call_ids", self.b.line)  # the builder's _free: another id, same links
            groups = self.calls.setdefault(cid, [])
            if not groups or groups[-1][0] is not draft:
                groups.append([draft, 0])
            groups[-1][1] += 1
            draft.calls += 1

    def result(self, e: _Event, d: _Data) -> None:
        groups = self.calls.get(d.toolCallId) if isinstance(d.toolCallId, str) else None
        if groups is None:
            return  # a tool the person ran: not part of the chat
        while groups and not groups[-1][1]:
            groups.pop()  # every call of the latest message with this id is answered
        if groups:
            groups[-1][1] -= 1
        else:
            self.repairs.add("unlinked_results", self.b.line)  # kept as unlinked tool output
        meta = {"timestamp": e.timestamp} if isinstance(e.timestamp, str) else {}
        self.out.plain("tool", "x", meta, "call" if groups else None)

    def usage(self, d: _Data) -> bool:
        draft = self.replies.get(d.apiCallId) if d.apiCallId is not None else None
        if draft is None:
            draft = self.last
        u = copilot_usage(self.b, {k: getattr(d, k) for k in _USAGE}, "data")
        if draft is None or u is None:
            return False
        draft.meta["usage"] = u
        return True

    def session(self, **kw: Any) -> Session:
        out = self.out.finish(lambda r: r.meta)
        for i, m in enumerate(out):
            if isinstance(m, _Reply):
                if "usage" not in m.meta and m.output is not None:
                    m.meta["usage"] = {"input": 0, "output": m.output, "cache_read": 0, "cache_write": 0}
                out[i] = Message(id="m", role="assistant", content="x" if m.text else "",
                                 tool_calls=(_CALL,) * m.calls, metadata=m.meta)
        metadata = self.repairs.merge_into(kw.pop("metadata"))
        return Session(messages=tuple(out), source_format=NAME, metadata=metadata, **kw)


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Copilot CLI event log ``path`` and the file's SHA-256, or None when the
    full reader must read it (see the module)."""
    try:
        with Stream(path) as stream:
            repairs = Repairs()
            chains = {MAIN_CHAIN: _Chain(stream.file, repairs)}
            info: dict[str, Any] = {}
            shutdowns: list[tuple[int, _Data]] = []
            run_started = False  # copilot_cli.session_from_records
            selected: dict[str, str] = {}
            usage_events = False
            repeats = Repeats(stream)
            for lineno, offset, raw in stream.lines():
                e = _decode(raw)
                key = identity(e, ("id",))  # copilot_cli._identity
                if key is not None and repeats.repeated(key, raw, offset):
                    continue
                d = e.data
                if d is None:
                    continue  # counted as another event
                agent = e.agentId
                name = agent if agent and agent not in ("main", MAIN_CHAIN) else MAIN_CHAIN
                c = chains.get(name)
                if c is None:
                    c = chains[name] = _Chain(stream.file, Repairs())
                c.b.line = lineno
                kind = e.type
                if kind == "session.start" or kind == "session.resume":
                    run_started = True
                    if d.selectedModel:
                        selected[MAIN_CHAIN] = d.selectedModel
                    if kind == "session.resume":
                        continue
                    info.update({k: v for k in ("sessionId", "selectedModel", "copilotVersion")
                                 if isinstance(v := getattr(d, k), str)})
                    if d.context is not None and d.context.cwd is not None:
                        info["cwd"] = d.context.cwd
                elif kind == "user.message":
                    body = d.transformedContent if d.transformedContent is not None else d.content
                    meta = {"timestamp": e.timestamp} if isinstance(e.timestamp, str) else {}
                    c.out.plain("user", "x" if body else "", meta)
                elif kind == "session.model_change":
                    if d.newModel:
                        selected[name] = d.newModel
                elif kind == "assistant.message":
                    c.assistant(e, d, selected.get(name) or selected.get(MAIN_CHAIN))
                elif kind == "tool.execution_complete":
                    c.result(e, d)
                elif kind == "assistant.usage":
                    usage_events |= c.usage(d)
                elif kind == "session.shutdown":
                    if shutdowns and not run_started:
                        repairs.add("overlapping_shutdowns", lineno)
                    shutdowns.append((lineno, d))
                    run_started = False
            if not info.get("cwd"):
                return None  # recorded_cwd would look further, into the messages' sources
            main = chains[MAIN_CHAIN]
            totals: Totals = {}
            for lineno, d in shutdowns if not usage_events else ():
                main.b.line = lineno
                add_shutdown(totals, msgspec.to_builtins(d), main.b)
            main.b.line = None
            if totals:
                def new(chain: str, model: str) -> _Reply:  # not one of the model's requests
                    return chains[chain].reply({"model": model, "source": {
                        "model": model, "from": "session.shutdown totals"}}, "\0")

                place_totals(totals, {n: c.by_model for n, c in chains.items()}, lambda r: r.output or 0,
                             lambda r: r.meta, new)
            del chains[MAIN_CHAIN]
            source: dict[str, Any] = dict(info)
            source["usage_totals"] = ("assistant.usage events" if usage_events else totals_source(len(shutdowns))
                                      if shutdowns else "absent: no session.shutdown yet, output tokens only")
            subagents = tuple(c.session(name=name, metadata={"chain": name, "agent_id": name})
                              for name, c in chains.items())
            return main.session(name=str(info.get("sessionId") or ""), metadata={"source": source},
                                subagents=subagents), stream.digest
    except Exception:  # Unsure, a line msgspec refuses, anything the full reader should name: it reads the file
        return None
