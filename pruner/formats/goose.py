"""Goose sessions: a session's fields, its conversation, and the tokens it used in all.

Source followed: Goose (Apache-2.0), block/goose, read 2026-12-05:
``crates/goose/src/session/session_manager.rs`` (the ``sessions`` and ``messages`` tables and the
``Session`` that ``goose session export`` prints, @dbec1655c17720cb591291603f1337ed7856afbd),
``crates/goose/src/conversation/message.rs`` (``Message`` and its ``MessageContent`` items,
@05132966065f7dd80b97af7d080a41328d103073) and ``crates/goose/src/conversation/tool_result_serde.rs``
(a tool call or result is ``{"status": "success", "value": ...}`` or ``{"status": "error",
"error": ...}``; a result's value a ``CallToolResult`` with ``content``, or in older sessions the
content list itself).

The document is a Goose ``Session`` as JSON (``goose session export``; ``pruner.logs.agents.goose``
builds the same from the database rows): ``id``, ``name``, ``working_dir``, the token counters,
``provider_name``, ``model_config`` (``model_name``) and ``conversation``, a list of messages
``{"id", "role", "created" (epoch seconds), "content": [...], "metadata": {"userVisible",
"agentVisible"}}``. Content items: ``text``, ``image`` (kept as ``[image MIME]``), ``toolRequest``
(a tool call: ``id``, ``toolCall.value.name`` / ``.arguments``), ``toolResponse`` (its result, in a
user message: one tool message per response), ``thinking`` / ``redactedThinking`` (the assistant's
``metadata["thinking"]``), and the notices Goose shows but does not send (``systemNotification``,
``actionRequired``, ``toolConfirmationRequest``, ``frontendToolRequest``: kept in the message's source).

Usage: Goose records no usage per request. A session records the tokens of its latest request
(``input_tokens`` / ``output_tokens``) and the sum over all of them
(``accumulated_input_tokens`` / ``accumulated_output_tokens``), no cache reads or writes and no cost.
So the session's accumulated tokens (its latest request's where no sum is recorded) are its last
assistant message's ``metadata["usage"]``, with ``metadata["usage_scope"] = "session"``: the bill's
total is Goose's own, but it is one lump, not a bill per request, and the cache is unknown (billed as
fresh input). ccusage reads the same counters (``rust/crates/ccusage/src/adapter/goose/parser.rs``,
ryoppippi/ccusage@5816e640e8824986f33427203da164b01394a161) and prices any ``total`` above input plus
output as output; here the sum of input and output is what is billed and the rest is kept in the
source. ``metadata["model"]`` is ``model_config.model_name``, ``["provider"]`` ``provider_name``.

>>> doc = ('{"id": "20260102_1", "name": "n", "working_dir": "/w", "accumulated_input_tokens": 900,'
...        ' "accumulated_output_tokens": 40, "provider_name": "anthropic",'
...        ' "model_config": {"model_name": "claude-sonnet-4-5"}, "conversation": ['
...        '{"role": "user", "created": 1767312000, "content": [{"type": "text", "text": "hi"}]},'
...        '{"role": "assistant", "created": 1767312001, "content": [{"type": "text", "text": "ok"}]}]}')
>>> s = loads(doc)
>>> [(m.role, m.content) for m in s.messages]
[('user', 'hi'), ('assistant', 'ok')]
>>> s.messages[1].metadata["usage"]
{'input': 900, 'output': 40, 'cache_read': 0, 'cache_write': 0}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

from ..errors import FormatError
from ..model import Session
from .builder import Draft, SessionBuilder
from .common import JsonObject, Probe, checked_usage, document, jpath, type_name, unmapped, with_source

NAME = "goose"
ORDER = 75  # where --help and FORMATS list it
DESCRIPTION = "Goose session JSON (goose session export: working_dir, token counters, conversation)"
#: Content items Goose shows the user but never sends the model: kept in the message's source.
NOTICES = ("systemNotification", "actionRequired", "toolConfirmationRequest", "frontendToolRequest")
_SESSION_USAGE = ("accumulated_input_tokens", "accumulated_output_tokens", "input_tokens", "output_tokens")


@dataclass(frozen=True)
class Record:
    """One JSON object and where it is, for errors: ``$.conversation[3]`` in an export, a table row
    (``messages row 12``) in Goose's database."""

    where: str
    data: JsonObject


@dataclass(frozen=True)
class Conversation:
    """A session's fields and its messages, in Goose's order."""

    info: Record
    messages: list[Record] = field(default_factory=list)


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.is_document or not isinstance(probe.document, dict):
        return 0.0
    doc = probe.document
    if not isinstance(doc.get("conversation"), list):
        return 0.0
    return 1.0 if "working_dir" in doc or "accumulated_total_tokens" in doc else 0.0


def _iso(seconds: Any) -> str | None:
    if isinstance(seconds, bool) or not isinstance(seconds, int) or not (0 < seconds < 10**11):
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def _string(b: SessionBuilder, data: JsonObject, key: str, where: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise b.error(f"field '{key}' must be text, got {type_name(value)}", jpath(where, key))
    return value


def _result_text(b: SessionBuilder, result: Any, where: str) -> tuple[str, bool]:
    """A ``toolResponse``'s ``toolResult`` as text, and whether it is an error."""
    if not isinstance(result, dict):
        raise b.error(f"field 'toolResult' must be an object, got {type_name(result)}", where)
    if result.get("status") == "error":
        return _string(b, result, "error", where), True
    if result.get("status") != "success":
        raise b.error(f"tool result status {result.get('status')!r} is not 'success' or 'error'",
                      jpath(where, "status"))
    value = result.get("value")
    items = value.get("content") if isinstance(value, dict) else value  # a CallToolResult, or the older list
    if not isinstance(items, list):
        raise b.error("a successful tool result must hold its content list", jpath(where, "value"))
    texts = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif isinstance(item, dict) and item.get("type") == "image":
            texts.append(f"[image {item.get('mimeType', '')}]")
        else:
            texts.append(json.dumps(item, ensure_ascii=False, sort_keys=True))
    error = isinstance(value, dict) and value.get("isError") is True
    return "\n".join(texts), error


def _message(b: SessionBuilder, k: int, m: Record) -> Draft | None:
    """One message: its text (and thinking, and tool calls) as a message, its tool responses as tool
    messages before it; the assistant draft, if it is one."""
    data = m.data
    role = data.get("role")
    if role not in ("user", "assistant"):
        raise b.error(f"message role {role!r} is not 'user' or 'assistant'", jpath(m.where, "role"))
    content = data.get("content")
    if not isinstance(content, list):
        raise b.error(f"field 'content' must be a list, got {type_name(content)}", jpath(m.where, "content"))
    recorded = data.get("id")
    mid = recorded if isinstance(recorded, str) and recorded else f"m{k}"
    meta: dict[str, Any] = {}
    time = _iso(data.get("created"))
    if time:
        meta["timestamp"] = time
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[tuple[str, JsonObject]] = []
    kept: list[Any] = []
    for j, item in enumerate(content):
        where = jpath(m.where, "content", j)
        if not isinstance(item, dict):
            raise b.error(f"a content item must be an object, got {type_name(item)}", where)
        kind = item.get("type")
        if kind == "text":
            texts.append(_string(b, item, "text", where))
        elif kind == "image":
            texts.append(f"[image {_string(b, item, 'mimeType', where)}]")
        elif kind == "thinking":
            thinking.append(_string(b, item, "thinking", where))
        elif kind == "redactedThinking":
            kept.append(item)
        elif kind == "toolRequest" and role == "assistant":
            calls.append((where, item))
        elif kind == "toolResponse":
            text, error = _result_text(b, item.get("toolResult"), jpath(where, "toolResult"))
            rmeta = dict(meta, is_error=error)
            b.add_result(original_call_id=item.get("id"), id=f"{mid}.result{j}", content=text, where=where,
                         metadata=rmeta)
        elif kind in NOTICES:
            kept.append(item)
        else:
            b.repairs.add("unknown_entries", b.line, type=f"content of type {kind!r}"[:60])
            kept.append(item)
    extra = unmapped(data, ("id", "role", "created", "content"))
    if kept:
        extra["content"] = kept
    text = "\n".join(t for t in texts if t)
    if role == "user":
        if text or not any(isinstance(i, dict) and i.get("type") == "toolResponse" for i in content):
            b.add(id=mid, role="user", content=text, where=m.where, metadata=with_source(meta, extra))
        return None
    draft = b.add(id=mid, role="assistant", content=text, where=m.where, metadata=with_source(meta, extra))
    if any(thinking):
        draft.metadata["thinking"] = "\n".join(t for t in thinking if t)
    for where, item in calls:
        call = item.get("toolCall")
        if not isinstance(call, dict):
            raise b.error(f"field 'toolCall' must be an object, got {type_name(call)}", jpath(where, "toolCall"))
        if call.get("status") == "success" and isinstance(call.get("value"), dict):
            value = call["value"]
            b.add_call(draft, original_id=item.get("id"), name=value.get("name"),
                       arguments=value.get("arguments") or {}, where=jpath(where, "toolCall", "value"))
        else:  # a call Goose could not parse: the model's text of it is lost, its error kept
            draft.metadata.setdefault("source", {}).setdefault("failed_tool_calls", []).append(item)
    return draft


def session_usage(b: SessionBuilder, info: Record) -> dict[str, Any] | None:
    """The session's tokens in the shared usage shape (see the module), or None when it records none."""
    d = info.data
    acc = d.get("accumulated_input_tokens") is not None or d.get("accumulated_output_tokens") is not None
    keys = ("accumulated_input_tokens", "accumulated_output_tokens") if acc else ("input_tokens", "output_tokens")
    if d.get(keys[0]) is None and d.get(keys[1]) is None:
        return None
    return checked_usage(b, info.where, {"input": (keys[0], d.get(keys[0])), "output": (keys[1], d.get(keys[1]))})


def build(conversation: Conversation, *, file: str, retrieval_tools: Iterable[str] | None = None) -> Session:
    """The Session of one Goose conversation (export or database rows; see the module)."""
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools, lenient=True)
    info = conversation.info.data
    model_config = info.get("model_config")
    model = model_config.get("model_name") if isinstance(model_config, dict) else None
    provider = info.get("provider_name")
    last: Draft | None = None
    for k, m in enumerate(conversation.messages):
        draft = _message(b, k, m)
        if draft is not None:
            last = draft
    usage = session_usage(b, conversation.info)
    if usage is not None:
        if last is None:  # tokens with no reply recorded: a message of its own holds them, so none is lost
            last = b.add(id=b.fresh_id("session-usage"), role="assistant", content="", where=conversation.info.where,
                         metadata={"source": {"usage_only": True}})
        last.metadata["usage"] = usage
        last.metadata["usage_scope"] = "session"
    for d in b.drafts:
        if d.role == "assistant":
            if isinstance(model, str) and model:
                d.metadata["model"] = model
            if isinstance(provider, str) and provider:
                d.metadata["provider"] = provider
    source: dict[str, Any] = {k: v for k, v in info.items() if k != "conversation"}
    working = info.get("working_dir")
    if isinstance(working, str) and working:
        source["cwd"] = working  # where pruner.logs.row.recorded_cwd looks
    name = info.get("name") if isinstance(info.get("name"), str) and info.get("name") else info.get("description")
    return b.build(name=name if isinstance(name, str) and name else str(info.get("id") or ""),
                   metadata={"source": source})


def conversation_of(doc: Any, *, file: str) -> Conversation:
    """An export document as a ``Conversation`` (its shape checked, places named)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("conversation"), list):
        raise FormatError(f"the top-level value is {type_name(doc)}; expected an object with a 'conversation' list "
                          "(a Goose session export)", file=file, path="$")
    out = Conversation(Record("$", doc))
    for i, m in enumerate(doc["conversation"]):
        where = jpath("$.conversation", i)
        if not isinstance(m, dict):
            raise FormatError(f"a message must be an object, got {type_name(m)}", file=file, path=where)
        out.messages.append(Record(where, m))
    return out


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    return build(conversation_of(document(text, file=file), file=file), file=file, retrieval_tools=retrieval_tools)


__all__ = ["Conversation", "Record", "build", "conversation_of", "detect", "loads", "session_usage"]
