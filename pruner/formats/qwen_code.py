"""Qwen Code chat recordings (``~/.qwen/projects/<project>/chats/<sessionId>.jsonl``).

Qwen Code is a fork of Gemini CLI, but its recording is not Gemini CLI's JSON document: it is JSON
Lines, one ``ChatRecord`` per line, appended as the session goes (QwenLM/qwen-code,
``packages/core/src/services/chatRecordingService.ts`` at commit
015346f1d5d7312fddaf84a7ef1f83c7d217d389, read 2026-12-05: ``ChatRecord``, ``recordUserMessage``,
``recordAssistantTurn``, ``recordToolResult``, ``ensureConversationFile``). A record has ``uuid``,
``parentUuid``, ``sessionId``, ``timestamp``, ``type`` (``user``, ``assistant``, ``tool_result``,
``system``), ``subtype``, ``cwd``, ``version``, ``gitBranch`` and ``message``: the API ``Content``
(``role`` and ``parts``: ``text``, ``thought`` text, ``functionCall`` with ``id`` / ``name`` /
``args``, ``functionResponse`` with ``id`` / ``name`` / ``response``). An ``assistant`` record is one
model response (one request) with ``model`` and ``usageMetadata`` (the Gemini API's
``GenerateContentResponseUsageMetadata``). Records a background subagent writes carry
``isSidechain`` and ``agentId``: they are that subagent's chain.

Usage (``metadata["usage"]``, the shared contract). ``promptTokenCount`` includes
``cachedContentTokenCount`` (Gemini's meaning, and the OpenAI-compatible path's ``prompt_tokens`` /
``cached_tokens``: ``packages/core/src/core/openaiContentGenerator/converter.ts`` at commit
049f7fa0c857768536034bea2f57d9b3f869695c); ``toolUsePromptTokenCount`` is prompt input outside it.
``thoughtsTokenCount`` is outside ``candidatesTokenCount`` on Gemini's own path but inside it on the
OpenAI-compatible path (``candidatesTokenCount`` is ``completion_tokens`` there), so the thoughts are
added to the output only when ``totalTokenCount`` counts them apart (total at least prompt + candidates
+ thoughts + tool use). So ``input = prompt - cached + tool use``, ``cache_read = cached``,
``cache_write = 0`` (the record has no cache-write count), ``output = candidates (+ thoughts when
apart)``, ``reasoning = thoughts``. Qwen Code records no cost.

Reading: the records in file order, every one (a rewind leaves the abandoned turns in the file, on a
dead branch of the ``parentUuid`` tree; they were requests, and billed, so they stay in the bill).
``system`` records (compression checkpoints, telemetry, titles, ...) are never sent as messages: they
are counted by subtype in ``Session.metadata["source"]["system_records"]``. This is an agent log, so
damage is repaired and reported, not refused: a line that is not a JSON object is skipped, an exact
repeat dropped, a usage out of range dropped.

>>> line = ('{"uuid":"a","sessionId":"s","timestamp":"t","type":"assistant","model":"qwen3-coder-plus",'
...         '"message":{"role":"model","parts":[{"text":"hi"}]},"usageMetadata":{"promptTokenCount":100,'
...         '"cachedContentTokenCount":60,"candidatesTokenCount":7,"thoughtsTokenCount":2,"totalTokenCount":107}}')
>>> loads(line).messages[0].metadata["usage"]
{'input': 40, 'output': 7, 'cache_read': 60, 'cache_write': 0, 'reasoning': 2}
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable

from ..model import MAIN_CHAIN, Session
from ..errors import FormatError
from .builder import SessionBuilder
from .common import (JsonObject, Probe, checked_usage, document, identity_by, jpath, parse_jsonl, token_count,
                     type_name, unmapped, with_source)
from .repairing import Repairs

NAME = "qwen_code"
ORDER = 66  # where --help and FORMATS list it
DESCRIPTION = "Qwen Code chat recording JSONL (ChatRecord lines: uuid / sessionId / type / message.parts)"
RECORD_TYPES = ("user", "assistant", "tool_result", "system")
#: Fields of the session kept from its first record that has them.
SESSION_FIELDS = ("sessionId", "cwd", "version", "gitBranch")
_identity = identity_by("uuid")
_KNOWN = ("uuid", "parentUuid", "sessionId", "timestamp", "type", "message", "model", "usageMetadata",
          "toolCallResult", "cwd", "version", "gitBranch", "isSidechain", "agentId")


def _older(doc: Any) -> bool:
    """A chat recording of Qwen Code's older layout: Gemini CLI's document, replies of type ``qwen``."""
    messages = doc.get("messages") if isinstance(doc, dict) else None
    return isinstance(messages, list) and any(isinstance(m, dict) and m.get("type") == "qwen" for m in messages)


def detect(text: str, probe: Probe | None) -> float:
    if probe is not None and probe.is_document and _older(probe.document):
        return 1.0
    if probe is None or not probe.records:
        return 0.0
    recs = [r for r in probe.records if isinstance(r, dict)]
    typed = [r for r in recs if "uuid" in r and "sessionId" in r and r.get("type") in RECORD_TYPES]
    gemini = any(isinstance(r.get("message"), dict) and "parts" in r["message"] for r in typed) or any(
        "usageMetadata" in r or r.get("type") == "tool_result" for r in typed)
    return 1.0 if typed and gemini and len(typed) >= max(1, len(recs) // 2) else 0.0


def qwen_usage(b: SessionBuilder, u: Any, where: str) -> dict[str, int] | None:
    """The recorded ``usageMetadata`` in the shared usage shape (see the module's docstring); damage
    (a count out of range, cached above the prompt) drops it, reported."""
    if not isinstance(u, dict):
        return None
    raw = checked_usage(b, where, {"input": ("promptTokenCount", u.get("promptTokenCount")),
                                   "output": ("candidatesTokenCount", u.get("candidatesTokenCount")),
                                   "cache_read": ("cachedContentTokenCount", u.get("cachedContentTokenCount")),
                                   "cache_write": ("toolUsePromptTokenCount", u.get("toolUsePromptTokenCount")),
                                   "reasoning": ("thoughtsTokenCount", u.get("thoughtsTokenCount"))})
    if raw is None:
        return None
    prompt, cached, tool, thoughts = raw["input"], raw["cache_read"], raw["cache_write"], raw.get("reasoning", 0)
    if cached > prompt:
        b.repairs.add("invalid_usage", b.line, example=f"{where}: cached {cached:,} above prompt {prompt:,}")
        return None
    total = token_count(u.get("totalTokenCount"))
    apart = total is not None and thoughts > 0 and total >= prompt + raw["output"] + thoughts + tool
    out = {"input": prompt - cached + tool, "output": raw["output"] + (thoughts if apart else 0),
           "cache_read": cached, "cache_write": 0}
    if "reasoning" in raw:
        out["reasoning"] = thoughts
    return out


def _parts(b: SessionBuilder, message: Any, where: str) -> list[JsonObject]:
    if message is None:
        return []
    if not isinstance(message, dict):
        raise b.error(f"field 'message' must be an object (role and parts), got {type_name(message)}", where)
    parts = message.get("parts")
    if parts is None:
        return []
    if not isinstance(parts, list):
        raise b.error(f"field 'parts' must be a list, got {type_name(parts)}", jpath(where, "parts"))
    for k, part in enumerate(parts):
        if not isinstance(part, dict):
            raise b.error(f"a part must be an object, got {type_name(part)}", jpath(where, "parts", k))
    return parts


def _text(parts: list[JsonObject]) -> tuple[str, str]:
    """(text, thinking) of a Content's parts; a part of another kind shows as ``[kind]``."""
    texts: list[str] = []
    thoughts: list[str] = []
    for part in parts:
        text = part.get("text")
        if isinstance(text, str):
            (thoughts if part.get("thought") is True else texts).append(text)
        elif "functionCall" not in part and "functionResponse" not in part:
            texts.append(f"[{next(iter(part), 'part')}]")
    return "\n".join(texts), "\n".join(thoughts)


def _response_text(response: Any) -> tuple[str, bool]:
    """A ``functionResponse.response`` as text, and whether it reports an error."""
    if isinstance(response, dict) and isinstance(response.get("output"), str):
        return response["output"], False
    if isinstance(response, dict) and "error" in response:
        err = response["error"]
        return (err if isinstance(err, str) else json.dumps(err, ensure_ascii=False, sort_keys=True)), True
    if isinstance(response, str):
        return response, False
    return ("" if response is None else json.dumps(response, ensure_ascii=False, sort_keys=True)), False


def _record(b: SessionBuilder, r: JsonObject, n: int) -> None:
    kind, where = r.get("type"), "message"
    recorded = r.get("uuid")
    uid = recorded if isinstance(recorded, str) and recorded else f"r{n}"
    meta: dict[str, Any] = {}
    if isinstance(r.get("timestamp"), str):
        meta["timestamp"] = r["timestamp"]
    extra = unmapped(r, _KNOWN)
    parts = _parts(b, r.get("message"), where)
    text, thinking = _text(parts)
    if kind == "assistant":
        if isinstance(r.get("model"), str) and r["model"]:
            meta["model"] = r["model"]
            extra["model"] = r["model"]  # where pruner.replay.detect looks for the recorded model
        u = qwen_usage(b, r.get("usageMetadata"), "usageMetadata")
        if u is not None:
            meta["usage"] = u
        if thinking:
            meta["thinking"] = thinking
        draft = b.add(id=uid, role="assistant", content=text, where=where, metadata=with_source(meta, extra))
        for k, part in enumerate(parts):
            call = part.get("functionCall")
            if call is None:
                continue
            cwhere = jpath(where, "parts", k, "functionCall")
            if not isinstance(call, dict):
                raise b.error(f"field 'functionCall' must be an object, got {type_name(call)}", cwhere)
            b.add_call(draft, original_id=call.get("id"), name=call.get("name"), arguments=call.get("args", {}),
                       where=cwhere)
        return
    status = r.get("toolCallResult", {}).get("status") if isinstance(r.get("toolCallResult"), dict) else None
    results = [(k, p["functionResponse"]) for k, p in enumerate(parts) if "functionResponse" in p]
    for j, (k, response) in enumerate(results):
        rwhere = jpath(where, "parts", k, "functionResponse")
        if not isinstance(response, dict):
            raise b.error(f"field 'functionResponse' must be an object, got {type_name(response)}", rwhere)
        body, error = _response_text(response.get("response"))
        rmeta = {**meta, "is_error": error or status == "error"}
        b.add_result(original_call_id=response.get("id"), id=uid if j == 0 else f"{uid}.result{j}", content=body,
                     where=rwhere, metadata=with_source(rmeta, dict(extra)), recorded_name=response.get("name"))
    if text or not results:
        b.add(id=uid if not results else f"{uid}.text", role="user", content=text, where=where,
              metadata=with_source(dict(meta), extra))


def session_from_records(records: Iterable[tuple[int, JsonObject]], *, file: str, repairs: Repairs,
                         retrieval_tools: Iterable[str] | None = None, skipped: int = 0) -> Session:
    """The session of Qwen Code's decoded records (the full reader and the bill-only one both use it)."""
    builders: dict[str, SessionBuilder] = {}
    info: dict[str, Any] = {}
    system: Counter[str] = Counter()
    for lineno, r in records:
        for key in SESSION_FIELDS:
            if key not in info and isinstance(r.get(key), str):
                info[key] = r[key]
        kind = r.get("type")
        if kind == "system":
            system[str(r.get("subtype"))[:60]] += 1
            continue
        chain = r["agentId"] if r.get("isSidechain") is True and isinstance(r.get("agentId"), str) \
            and r["agentId"] and r["agentId"] != MAIN_CHAIN else MAIN_CHAIN
        b = builders.get(chain)
        if b is None:
            b = builders[chain] = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools,
                                                 lenient=True, repairs=repairs if chain == MAIN_CHAIN else Repairs())
        b.line = lineno
        if kind not in RECORD_TYPES:
            repairs.add("unknown_entries", lineno, type=f"record of type {kind!r}"[:60])
            continue
        _record(b, r, lineno)
    main = builders.pop(MAIN_CHAIN, None) or SessionBuilder(file=file, source_format=NAME, lenient=True,
                                                            repairs=repairs)
    subagents = [b.build(name=chain, metadata={"chain": chain, "agent_id": chain}) for chain, b in builders.items()]
    source: dict[str, Any] = dict(info)
    if system:
        source["system_records"] = dict(sorted(system.items()))
    metadata: dict[str, Any] = {"source": source}
    if skipped:
        metadata["skipped_bad_lines"] = skipped
    main.line = None
    return main.build(name=str(info.get("sessionId") or ""), metadata=metadata, subagents=subagents)


def _older_usage(b: SessionBuilder, tokens: Any, where: str) -> dict[str, int] | None:
    """An older recording's ``tokens`` (Gemini CLI's names for the same ``usageMetadata``: ``input`` is
    ``promptTokenCount``, ``output`` ``candidatesTokenCount``, ``cached``, ``thoughts``, ``tool``, ``total``)
    read as ``qwen_usage`` reads the metadata itself."""
    if not isinstance(tokens, dict):
        return None
    names = {"input": "promptTokenCount", "output": "candidatesTokenCount", "cached": "cachedContentTokenCount",
             "thoughts": "thoughtsTokenCount", "tool": "toolUsePromptTokenCount", "total": "totalTokenCount"}
    return qwen_usage(b, {names[k]: v for k, v in tokens.items() if k in names}, where)


def read_older(doc: Any, *, file: str, retrieval_tools: Iterable[str] | None = None) -> Session:
    """Qwen Code's older recording (late-2025 releases: ``~/.qwen/tmp/<project hash>/chats/session-*.json``),
    Gemini CLI's chat recording document with the model's replies of type ``qwen``."""
    from .gemini_cli import read_document

    return read_document(doc, file=file, retrieval_tools=retrieval_tools, reply="qwen", source_format=NAME,
                         usage_of=_older_usage, provider=None)


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    if text.lstrip()[:1] == "{":
        try:
            doc = document(text, file=file)
        except FormatError:
            doc = None  # JSON lines (or damage the line reader reports)
        if _older(doc):
            return read_older(doc, file=file, retrieval_tools=retrieval_tools)
    parsed = parse_jsonl(text, file=file, skip_bad_lines=skip_bad_lines, identity=_identity)
    return session_from_records(parsed.records, file=file, repairs=parsed.repairs, retrieval_tools=retrieval_tools,
                                skipped=parsed.skipped)
