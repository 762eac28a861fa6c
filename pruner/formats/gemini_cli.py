"""Gemini CLI chat recordings (``~/.gemini/tmp/<project>/chats/session-*.json``).

One JSON document: ``sessionId``, ``projectHash``, ``startTime``,
``lastUpdated`` and ``messages``. A message has ``id``, ``timestamp``,
``type`` and ``content`` (a string, or a list of parts with ``text``).
``type: "user"`` is the user; ``type: "gemini"`` is one model response (one
request) with ``model``, ``thoughts`` (``subject`` / ``description``, kept in
``metadata["thinking"]``), ``toolCalls`` (each with ``name``, ``args`` and
the ``result`` the CLI sent back, a list of ``functionResponse`` parts, which
becomes the tool message after the call) and ``tokens``.

Usage (``metadata["usage"]``, the shared contract: the inputs disjoint,
reasoning included in output). The recorded ``tokens`` are the API's
``usageMetadata``: ``input`` is ``promptTokenCount``, which *includes* the
``cached`` tokens; ``thoughts`` (``thoughtsTokenCount``) are not in
``output`` (``candidatesTokenCount``) but are billed as output; ``tool``
(``toolUsePromptTokenCount``) is prompt input outside ``input``. In both real
recordings ``total == input + output + thoughts + tool``, which is what this
reading assumes. So ``input = input - cached + tool``, ``cache_read =
cached``, ``cache_write = 0`` (implicit caching has no write fee),
``output = output + thoughts`` and ``reasoning = thoughts``.

Messages of type ``info``, ``warning`` and ``error`` are the CLI's own
notices, never sent to the model: they are kept in
``Session.metadata["source"]["notices"]``, not in the conversation. A message
of a type this reader does not know is kept there too and reported as a repair.

>>> text = ('{"sessionId": "s", "projectHash": "p", "messages": ['
...         '{"id": "u", "type": "user", "content": "hi"},'
...         '{"id": "g", "type": "gemini", "content": "hello", "model": "gemini-2.5-pro",'
...         ' "tokens": {"input": 5000, "output": 10, "cached": 4000, "thoughts": 20, "tool": 0}}]}')
>>> s = loads(text)
>>> [(m.role, m.content) for m in s.messages]
[('user', 'hi'), ('assistant', 'hello')]
>>> s.messages[1].metadata["usage"]
{'input': 1000, 'output': 30, 'cache_read': 4000, 'cache_write': 0, 'reasoning': 20}
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from ..errors import FormatError
from ..model import Session
from .builder import SessionBuilder
from .repairing import has_lone_surrogate, replace_lone_surrogates
from .common import JsonObject, Probe, checked_usage, document, flatten_content, jpath, type_name, unmapped, with_source

NAME = "gemini_cli"
ORDER = 65  # where --help and FORMATS list it
DESCRIPTION = "Gemini CLI chat recording JSON (sessionId / projectHash / messages of type user and gemini)"
MESSAGE_TYPES = ("user", "gemini")
NOTICE_TYPES = ("info", "warning", "error")  # the CLI's own notices: not part of the conversation
_KNOWN_GEMINI = ("id", "timestamp", "type", "content", "model", "thoughts", "toolCalls", "tokens")
_KNOWN_CALL = ("id", "name", "args", "result", "status")


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.is_document or not isinstance(probe.document, dict):
        return 0.0
    doc = probe.document
    messages = doc.get("messages")
    if not isinstance(messages, list):
        return 0.0
    head = [m for m in messages[:50] if isinstance(m, dict)]
    if any("role" in m for m in head):
        return 0.0  # a chat-style message list (OpenAI / Anthropic)
    if any(m.get("type") == "qwen" for m in messages if isinstance(m, dict)):
        return 0.0  # Qwen Code's older recording of the same layout: pruner.formats.qwen_code reads it
    typed = sum(1 for m in head if m.get("type") in MESSAGE_TYPES + NOTICE_TYPES)
    if "sessionId" in doc and ("projectHash" in doc or (head and typed == len(head))):
        return 1.0
    if head and typed == len(head) and any(m.get("type") == "gemini" for m in head):
        return 0.9
    return 0.0


def gemini_usage(b: SessionBuilder, tokens: Any, where: str) -> dict[str, int] | None:
    """The recorded ``tokens`` in the shared usage shape (see the module's docstring).

    Each recorded count is checked as every format's are (``checked_usage``: a whole number
    from 0 to 10**12); cached tokens above the input are damage too. Damage drops the usage
    and is reported (this is an agent log)."""
    if not isinstance(tokens, dict):
        return None
    raw = checked_usage(b, where, {"input": ("input", tokens.get("input")), "output": ("output", tokens.get("output")),
                                   "cache_read": ("cached", tokens.get("cached")),
                                   "cache_write": ("tool", tokens.get("tool")),
                                   "reasoning": ("thoughts", tokens.get("thoughts"))})
    if raw is None:
        return None
    cached, thoughts, tool = raw["cache_read"], raw.get("reasoning", 0), raw["cache_write"]
    if cached > raw["input"]:
        b.repairs.add("invalid_usage", b.line, example=f"{where}: cached {cached:,} above input {raw['input']:,}")
        return None
    return {"input": raw["input"] - cached + tool, "output": raw["output"] + thoughts, "cache_read": cached,
            "cache_write": 0, "reasoning": thoughts}


def _thinking(thoughts: Any) -> str:
    if not isinstance(thoughts, list):
        return ""
    parts = []
    for t in thoughts:
        if isinstance(t, dict):
            subject, body = t.get("subject"), t.get("description")
            text = "\n".join(str(x).strip() for x in (subject, body) if isinstance(x, str) and x.strip())
            if text:
                parts.append(text)
    return "\n\n".join(parts)


def _result_text(b: SessionBuilder, result: Any, where: str) -> tuple[str, bool]:
    """A tool call's recorded ``result`` (at ``where``) as text, and whether it reports an error."""
    if isinstance(result, str):
        return result, False
    if not isinstance(result, list):
        return ("" if result is None else json.dumps(result, ensure_ascii=False, sort_keys=True)), False
    texts, error = [], False
    for k, part in enumerate(result):
        call = part.get("functionResponse", {}) if isinstance(part, dict) else {}
        if not isinstance(call, dict):  # the API's FunctionResponse: an object (id, name, response), never null
            raise b.error(f"field 'functionResponse' must be an object (the call's id, name and response), got "
                          f"{type_name(call)}", jpath(where, k, "functionResponse"))
        response = call.get("response")
        if isinstance(response, dict) and isinstance(response.get("output"), str):
            texts.append(response["output"])
        elif isinstance(response, dict) and "error" in response:
            error = True
            err = response["error"]
            texts.append(err if isinstance(err, str) else json.dumps(err, ensure_ascii=False, sort_keys=True))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            texts.append(json.dumps(part, ensure_ascii=False, sort_keys=True))
    return "\n".join(texts), error


#: A model response's ``tokens`` in the shared usage shape: Gemini CLI's (``gemini_usage``) or Qwen Code's.
UsageOf = Callable[[SessionBuilder, Any, str], "dict[str, int] | None"]


def _gemini(b: SessionBuilder, m: JsonObject, mid: str, where: str, meta: dict[str, Any],
            usage_of: UsageOf = gemini_usage, provider: str | None = "google") -> bool:
    """Add one model response and its tool results; True when a call's ``args`` is JSON text holding a
    lone surrogate (inside a string, so the file-level scan cannot see it)."""
    content, parts = flatten_content(m.get("content", ""), file=b.file, where=jpath(where, "content"))
    extra = unmapped(m, _KNOWN_GEMINI)
    if parts:
        extra["content_parts"] = parts
    if isinstance(m.get("model"), str) and m["model"]:
        meta["model"] = m["model"]
        extra["model"] = m["model"]  # where pruner.replay.detect looks for the recorded model
        if provider:
            extra["provider"] = provider
    u = usage_of(b, m.get("tokens"), jpath(where, "tokens"))
    if u is not None:
        meta["usage"] = u
        rest = unmapped(m["tokens"], ("input", "output", "cached", "thoughts", "tool"))
        if rest:
            extra["tokens"] = rest
    thinking = _thinking(m.get("thoughts"))
    if thinking:
        meta["thinking"] = thinking
    draft = b.add(id=mid, role="assistant", content=content, where=where, metadata=with_source(meta, extra))
    calls = m.get("toolCalls")
    if calls is None:
        return False
    if not isinstance(calls, list):
        raise b.error(f"field 'toolCalls' must be a list, got {type_name(calls)}", jpath(where, "toolCalls"))
    answered, surrogates = [], False
    for j, c in enumerate(calls):
        surrogates |= isinstance(c, dict) and isinstance(c.get("args"), str) and has_lone_surrogate(c["args"])
        cwhere = jpath(where, "toolCalls", j)
        if not isinstance(c, dict):
            raise b.error(f"a tool call must be an object, got {type_name(c)}", cwhere)
        b.add_call(draft, original_id=c.get("id"), name=c.get("name"), arguments=c.get("args", {}), where=cwhere)
        if "result" in c:
            answered.append((j, c))
    for j, c in answered:
        cwhere = jpath(where, "toolCalls", j)
        text, error = _result_text(b, c["result"], jpath(cwhere, "result"))
        rmeta: dict[str, Any] = {"is_error": error or c.get("status") == "error"}
        if isinstance(c.get("timestamp"), str):
            rmeta["timestamp"] = c["timestamp"]
        cextra = unmapped(c, _KNOWN_CALL + ("timestamp",))
        cextra["status"] = c.get("status")
        b.add_result(original_call_id=c.get("id"), id=f"{mid}.result{j}", content=text, where=jpath(cwhere, "result"),
                     metadata=with_source(rmeta, cextra), recorded_name=c.get("name"))
    return surrogates


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    return read_document(document(text, file=file), file=file, retrieval_tools=retrieval_tools)


def read_document(doc: Any, *, file: str, retrieval_tools: Iterable[str] | None = None, reply: str = "gemini",
                  source_format: str = NAME, usage_of: UsageOf = gemini_usage,
                  provider: str | None = "google") -> Session:
    """The session of a decoded chat recording whose model responses are messages of type ``reply``
    (Gemini CLI's ``gemini``; Qwen Code's older recordings, of the same layout, ``qwen``)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise FormatError(f"the top-level value is {type_name(doc)}; expected an object with a 'messages' "
                          "list (a Gemini CLI chat recording)", file=file, path="$")
    b = SessionBuilder(file=file, source_format=source_format, retrieval_tools=retrieval_tools, lenient=True)
    notices: list[dict[str, Any]] = []
    surrogates = False
    for i, m in enumerate(doc["messages"]):
        where = jpath("$.messages", i)
        if not isinstance(m, dict):
            raise b.error(f"a message must be an object, got {type_name(m)}", where)
        kind = m.get("type")
        recorded_id = m.get("id")
        mid = recorded_id if isinstance(recorded_id, str) and recorded_id else f"m{i}"
        meta: dict[str, Any] = {}
        if isinstance(m.get("timestamp"), str):
            meta["timestamp"] = m["timestamp"]
        if kind == "user":
            content, parts = flatten_content(m.get("content", ""), file=file, where=jpath(where, "content"))
            extra = unmapped(m, ("id", "timestamp", "type", "content"))
            if parts:
                extra["content_parts"] = parts
            b.add(id=mid, role="user", content=content, where=where, metadata=with_source(meta, extra))
        elif kind == reply:
            surrogates |= _gemini(b, m, mid, where, meta, usage_of, provider)
        elif kind in NOTICE_TYPES:  # the CLI's own notice, never sent to the model: kept beside the conversation
            notices.append({"index": i, **m})
        else:  # a type this reader does not know: skipped, and said so
            b.repairs.add("unknown_entries", None, type=f"message of type {kind!r}"[:60])
            notices.append({"index": i, **m})
    source = unmapped(doc, ("messages",))
    if notices:
        source["notices"] = notices
    metadata: dict[str, Any] = {"source": source}
    session = b.build(name=str(doc.get("sessionId") or ""), metadata=metadata)
    return replace_lone_surrogates(session, None, file=file) if surrogates else session
