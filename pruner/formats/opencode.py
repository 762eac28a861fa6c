"""OpenCode sessions: one session's info, its messages and each message's parts.

Source followed: OpenCode (MIT), ``packages/opencode/src/session/message-v2.ts`` (the message and
part schemas, anomalyco/opencode@007a9409bafea06d6b9084ff1f6d1fe9f5e3a803),
``packages/opencode/src/session/session.sql.ts`` (the ``session`` / ``message`` / ``part`` tables,
@063e8306d9895af9bdd175306cfa4fa3291fd83a) and ``packages/opencode/src/session/processor.ts``
(sst/opencode@31e22f65a23c498639b8cef24b90e6ae193cdcb6), read 2026-12-05.

The document is what ``opencode export <session>`` prints and what ``pruner.logs.agents.opencode``
builds from OpenCode's database rows: ``{"info": <session>, "messages": [{"info": <message>,
"parts": [<part>, ...]}, ...]}``. A session's ``info`` has ``id``, ``title``, ``directory`` (the
working folder) and ``parentID`` (a subagent's session names its parent's).

A user message (``role: "user"``) is its ``text`` parts (``file`` parts as ``[file NAME (MIME)]``,
a ``compaction`` part as the question OpenCode sends for it, ``What did we do so far?``).

An assistant message is one turn of the agent loop, and one turn is one or more requests: the
processor opens each request with a ``step-start`` part and closes it with a ``step-finish`` part
carrying THAT request's ``tokens`` and ``cost`` (``processor.ts``: ``case "step-finish"``). The
message's own ``tokens`` are overwritten by each step (``assistantMessage.tokens = usage.tokens``)
while its ``cost`` is added up (``assistantMessage.cost += usage.cost``), so they are the last
request's tokens and the whole turn's cost: a reader that bills the message's tokens (ccusage's
OpenCode adapter, ``rust/crates/ccusage/src/adapter/opencode/parser.rs``@5816e640) misses every
request but the last of a multi-step turn. Here each step becomes one assistant message (its
``text`` parts as content, ``reasoning`` as ``metadata["thinking"]``, ``tool`` parts as tool calls)
followed by one tool result per tool part (its ``state.output``; ``state.error`` as an error; a
call still ``pending`` or ``running`` as OpenCode sends it, ``[Tool execution was interrupted]``).
A turn with no ``step-finish`` (written before steps were recorded, or stopped before the first
finished) is one assistant message with the message's own ``tokens`` and ``cost``.

Usage (``metadata["usage"]``, the shared contract): ``tokens.input`` is the input outside the
cache (OpenCode subtracts the cached tokens where the provider counts them in), ``cache.read`` and
``cache.write`` the cache's, and ``tokens.reasoning`` is billed as output (OpenCode's own cost
prices it at the output rate), so ``output = output + reasoning``. ``usage["cost"]`` is the cost
OpenCode recorded (USD, computed from its models.dev prices; 0 for a subscription provider), which
the bill sums as ``billed_recorded_cost``. ``metadata["model"]`` and ``["provider"]`` are the
message's ``modelID`` and ``providerID``; ``request_id`` is the step-finish part's id.

This is an agent log: a token count or cost out of range drops that request's usage and is reported
(``invalid_usage``), a part of a type this reader does not know is kept in the message's source and
reported; a shape it cannot read (a message that is not an object, parts that are not a list) is
refused with the place named.

>>> doc = ('{"info": {"id": "ses_1", "title": "t", "directory": "/w"}, "messages": ['
...        '{"info": {"id": "msg_1", "role": "user", "time": {"created": 0}},'
...        ' "parts": [{"type": "text", "text": "hi"}]},'
...        '{"info": {"id": "msg_2", "role": "assistant", "modelID": "m", "providerID": "p", "time": {"created": 0}},'
...        ' "parts": [{"id": "prt_1", "type": "step-start"},'
...        ' {"id": "prt_2", "type": "text", "text": "ok"},'
...        ' {"id": "prt_3", "type": "step-finish", "cost": 0.5, "tokens": {"input": 10, "output": 2,'
...        ' "reasoning": 1, "cache": {"read": 5, "write": 0}}}]}]}')
>>> s = loads(doc)
>>> [(m.role, m.content) for m in s.messages]
[('user', 'hi'), ('assistant', 'ok')]
>>> s.messages[1].metadata["usage"]
{'input': 10, 'output': 3, 'cache_read': 5, 'cache_write': 0, 'reasoning': 1, 'cost': 0.5}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

from .common import MAX_REQUEST_COST
from ..errors import FormatError
from ..model import Session
from .builder import Draft, SessionBuilder
from .common import JsonObject, Probe, checked_usage, document, jpath, type_name, unmapped, with_source

NAME = "opencode"
ORDER = 72  # where --help and FORMATS list it
DESCRIPTION = "OpenCode session JSON (opencode export: info + messages, each with info and parts)"
#: What OpenCode sends the model for a tool call that never finished (message-v2.ts, toModelMessages).
INTERRUPTED = "[Tool execution was interrupted]"
#: What OpenCode sends for a compaction part (message-v2.ts, toModelMessages).
COMPACTION_QUESTION = "What did we do so far?"
_STEP_PARTS = ("text", "reasoning", "tool")
#: Parts that are no part of a request's text: kept in the message's source.
_OTHER_PARTS = ("snapshot", "patch", "agent", "retry", "subtask", "file", "compaction", "step-start",
                "step-finish")


@dataclass(frozen=True)
class Record:
    """One JSON object and where it is, for errors: ``$.messages[3].info`` in an export, a table
    row (``message msg_01 data``) in OpenCode's database."""

    where: str
    data: JsonObject


@dataclass(frozen=True)
class Conversation:
    """A session's info and its messages, each with its parts, in OpenCode's order."""

    info: Record
    messages: list[tuple[Record, list[Record]]] = field(default_factory=list)


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.is_document or not isinstance(probe.document, dict):
        return 0.0
    doc = probe.document
    info, messages = doc.get("info"), doc.get("messages")
    if not isinstance(info, dict) or not isinstance(messages, list):
        return 0.0
    head = [m for m in messages[:20] if isinstance(m, dict)]
    if head and all(isinstance(m.get("info"), dict) and isinstance(m.get("parts"), list) for m in head):
        return 1.0
    return 0.8 if not messages and isinstance(info.get("id"), str) and info["id"].startswith("ses") else 0.0


def _iso(ms: Any) -> str | None:
    """ISO 8601 (UTC, milliseconds) from OpenCode's epoch milliseconds, or None."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not (0 < ms < 1e14) or not math.isfinite(ms):
        return None
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def opencode_usage(b: SessionBuilder, tokens: Any, cost: Any, where: str) -> dict[str, Any] | None:
    """``metadata["usage"]`` from OpenCode's ``tokens`` and ``cost`` (see the module); damage drops
    the usage, reported."""
    if not isinstance(tokens, dict):
        return None
    cache: JsonObject = tokens["cache"] if isinstance(tokens.get("cache"), dict) else {}
    raw = checked_usage(b, where, {"input": ("input", tokens.get("input")), "output": ("output", tokens.get("output")),
                                   "cache_read": ("cache.read", cache.get("read")),
                                   "cache_write": ("cache.write", cache.get("write")),
                                   "reasoning": ("reasoning", tokens.get("reasoning"))})
    if raw is None:
        return None
    reasoning = raw.get("reasoning", 0)
    out: dict[str, Any] = {"input": raw["input"], "output": raw["output"] + reasoning, "cache_read": raw["cache_read"],
                           "cache_write": raw["cache_write"], "reasoning": reasoning}
    if cost is None:
        return out
    # The range first: a 400-digit integer cannot become a float for isfinite (OverflowError).
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not (
            0 <= cost <= MAX_REQUEST_COST and math.isfinite(cost)):
        b.repairs.add("invalid_usage", b.line, example=f"{jpath(where, 'cost')} = {repr(cost)[:40]}")
        return None
    out["cost"] = float(cost)
    return out


def _object(b: SessionBuilder, value: Any, where: str, what: str) -> JsonObject:
    if not isinstance(value, dict):
        raise b.error(f"{what} must be an object, got {type_name(value)}", where)
    return value


def _string(b: SessionBuilder, data: JsonObject, key: str, where: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise b.error(f"field '{key}' must be text, got {type_name(value)}", jpath(where, key))
    return value


def _user(b: SessionBuilder, mid: str, info: Record, parts: list[Record], meta: dict[str, Any]) -> None:
    texts: list[str] = []
    kept: list[Any] = []
    for p in parts:
        kind = p.data.get("type")
        if kind == "text":
            if not p.data.get("ignored"):  # OpenCode leaves an ignored text part out of the request
                texts.append(_string(b, p.data, "text", p.where))
        elif kind == "file":
            texts.append(f"[file {_string(b, p.data, 'filename', p.where) or 'file'} "
                         f"({_string(b, p.data, 'mime', p.where)})]")
        elif kind == "compaction":
            texts.append(COMPACTION_QUESTION)
        else:
            _other(b, p, kind, kept)
    model = info.data.get("model")
    if isinstance(model, dict):
        for key, name in (("model", "modelID"), ("provider", "providerID")):
            if isinstance(model.get(name), str) and model[name]:
                meta[f"requested_{key}"] = model[name]
    extra = unmapped(info.data, ("id", "role", "time"))
    if kept:
        extra["parts"] = kept
    b.add(id=mid, role="user", content="\n".join(t for t in texts if t), where=info.where,
          metadata=with_source(meta, extra))


def _other(b: SessionBuilder, p: Record, kind: Any, kept: list[Any]) -> None:
    """A part that is no request's text: kept in the source; one of a type not known is reported."""
    if kind not in _OTHER_PARTS:
        b.repairs.add("unknown_entries", b.line, type=f"part of type {kind!r}"[:60])
    kept.append(p.data)


def _steps(b: SessionBuilder, parts: list[Record], kept: list[Any]) -> list[tuple[list[Record], Record | None]]:
    """The requests of one assistant turn: each step's parts and its step-finish part (None: unfinished)."""
    steps: list[tuple[list[Record], Record | None]] = []
    current: list[Record] | None = None
    for p in parts:
        kind = p.data.get("type")
        if kind == "step-start":
            current = []
            steps.append((current, None))
        elif kind == "step-finish":
            if current is None:
                steps.append(([], p))
            else:
                steps[-1] = (current, p)
            current = None
        elif kind in _STEP_PARTS:
            if current is None:
                current = []
                steps.append((current, None))
            current.append(p)
        else:
            _other(b, p, kind, kept)
    return [(ps, finish) for ps, finish in steps if ps or finish is not None]


def _tool_result(b: SessionBuilder, p: Record, mid: str, k: int, time: str | None) -> None:
    state = _object(b, p.data.get("state"), jpath(p.where, "state"), "a tool part's 'state'")
    status = state.get("status")
    where = jpath(p.where, "state")
    if status == "completed":
        text, error = _string(b, state, "output", where), False
    elif status == "error":
        text, error = _string(b, state, "error", where), True
    elif status in ("pending", "running"):
        text, error = INTERRUPTED, True
    else:
        raise b.error(f"tool state status {status!r} is not one of pending, running, completed, error",
                      jpath(where, "status"))
    meta: dict[str, Any] = {"is_error": error}
    end = _iso((state.get("time") or {}).get("end")) if isinstance(state.get("time"), dict) else None
    if end or time:
        meta["timestamp"] = end or time
    b.add_result(original_call_id=p.data.get("callID"), id=f"{mid}.result{k}", content=text, where=p.where,
                 metadata=with_source(meta, {"status": status}), recorded_name=p.data.get("tool"))


def _assistant(b: SessionBuilder, mid: str, info: Record, parts: list[Record], meta: dict[str, Any]) -> None:
    data = info.data
    for key, name in (("model", "modelID"), ("provider", "providerID")):
        if isinstance(data.get(name), str) and data[name]:
            meta[key] = data[name]
    kept: list[Any] = []
    steps = _steps(b, parts, kept)
    whole = opencode_usage(b, data.get("tokens"), data.get("cost"), jpath(info.where, "tokens")) \
        if not any(finish is not None for _, finish in steps) else None
    if not steps:
        steps = [([], None)]
    time = meta.get("timestamp")
    result = 0
    for n, (step_parts, finish) in enumerate(steps):
        smeta = dict(meta)
        if time:
            smeta["timestamp"] = time
        extra = unmapped(data, ("id", "role", "time", "modelID", "providerID", "tokens", "cost")) if n == 0 else {}
        if n == 0 and kept:
            extra["parts"] = kept
        if finish is not None:
            usage = opencode_usage(b, finish.data.get("tokens"), finish.data.get("cost"), finish.where)
            if usage is not None:
                smeta["usage"] = usage
            if isinstance(finish.data.get("id"), str) and finish.data["id"]:
                smeta["request_id"] = finish.data["id"]
        elif whole is not None and n == len(steps) - 1:
            smeta["usage"] = whole
        draft: Draft = b.add(id=mid if n == 0 else f"{mid}.step{n + 1}", role="assistant", content="",
                             where=finish.where if finish is not None and not step_parts else info.where,
                             metadata=with_source(smeta, extra))
        tools = []
        for p in step_parts:
            kind = p.data["type"]
            if kind == "text":
                draft.append_text(_string(b, p.data, "text", p.where))
            elif kind == "reasoning":
                thought = _string(b, p.data, "text", p.where)
                if thought:
                    old = draft.metadata.get("thinking")
                    draft.metadata["thinking"] = f"{old}\n{thought}" if old else thought
            else:
                state = _object(b, p.data.get("state"), jpath(p.where, "state"), "a tool part's 'state'")
                b.add_call(draft, original_id=p.data.get("callID"), name=p.data.get("tool"),
                           arguments=state.get("input", {}), where=p.where)
                tools.append(p)
        for p in tools:
            result += 1
            _tool_result(b, p, mid, result, time)
            end = b.drafts[-1].metadata.get("timestamp")
            time = end if isinstance(end, str) else time


def build(conversation: Conversation, *, file: str, retrieval_tools: Iterable[str] | None = None) -> Session:
    """The Session of one OpenCode conversation (export or database rows; see the module)."""
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools, lenient=True)
    info = conversation.info
    for k, (minfo, parts) in enumerate(conversation.messages):
        data = minfo.data
        recorded = data.get("id")
        mid = recorded if isinstance(recorded, str) and recorded else f"m{k}"
        meta: dict[str, Any] = {}
        time = _iso((data.get("time") or {}).get("created")) if isinstance(data.get("time"), dict) else None
        if time:
            meta["timestamp"] = time
        role = data.get("role")
        if role == "user":
            _user(b, mid, minfo, parts, meta)
        elif role == "assistant":
            _assistant(b, mid, minfo, parts, meta)
        else:
            raise b.error(f"message role {role!r} is not 'user' or 'assistant'", jpath(minfo.where, "role"))
    source: dict[str, Any] = dict(info.data)
    directory = info.data.get("directory")
    if isinstance(directory, str) and directory:
        source["cwd"] = directory  # where pruner.logs.row.recorded_cwd looks
    title = info.data.get("title")
    name = title if isinstance(title, str) and title else str(info.data.get("id") or "")
    return b.build(name=name, metadata={"source": source})


def conversation_of(doc: Any, *, file: str) -> Conversation:
    """An export document as a ``Conversation`` (its shape checked, places named)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("info"), dict) or not isinstance(doc.get("messages"), list):
        raise FormatError(f"the top-level value is {type_name(doc)}; expected an object with an 'info' object and a "
                          "'messages' list (an OpenCode session export)", file=file, path="$")
    out = Conversation(Record("$.info", doc["info"]))
    for i, m in enumerate(doc["messages"]):
        where = jpath("$.messages", i)
        if not isinstance(m, dict) or not isinstance(m.get("info"), dict):
            raise FormatError(f"a message must be an object with an 'info' object, got {type_name(m)}", file=file,
                              path=where)
        parts = m.get("parts", [])
        if not isinstance(parts, list):
            raise FormatError(f"field 'parts' must be a list, got {type_name(parts)}", file=file,
                              path=jpath(where, "parts"))
        records = []
        for j, p in enumerate(parts):
            if not isinstance(p, dict):
                raise FormatError(f"a part must be an object, got {type_name(p)}", file=file,
                                  path=jpath(where, "parts", j))
            records.append(Record(jpath(where, "parts", j), p))
        out.messages.append((Record(jpath(where, "info"), m["info"]), records))
    return out


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    return build(conversation_of(document(text, file=file), file=file), file=file, retrieval_tools=retrieval_tools)


__all__ = ["Conversation", "Record", "build", "conversation_of", "detect", "loads", "opencode_usage"]
