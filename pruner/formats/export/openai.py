"""Export to OpenAI Chat Completions ``messages``: something the API accepts.

The Chat Completions API rejects a tool result without its call and a call
without its result, so the export never orphans either: each assistant
message's calls are followed at once by their results, a call whose result was
pruned gets the placeholder ``prune`` chose (or a generic one), and a result
whose call is missing is dropped.

>>> from pruner import Message, Session, ToolCall
>>> s = Session.of([Message(id="u", role="user", content="hi"),
...     Message(id="a", role="assistant", content="", tool_calls=(ToolCall("c1", "clock", {}),))])
>>> [m["role"] for m in to_openai_messages(s)]
['user', 'assistant', 'tool']
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ...errors import ExportError
from ...model import Message, Session
from ...engine.prune import PruneResult

MISSING_RESULT = "[no result was recorded for this call]"
RETRIEVED_PREFIX = "[Retrieved document]\n"
SUMMARY_PREFIX = "[Summary of the earlier conversation]\n"


def _session_and_placeholders(source: Session | PruneResult,
                              placeholders: Mapping[str, str] | None) -> tuple[Session, Mapping[str, str]]:
    if isinstance(source, PruneResult):
        return source.kept, {**source.placeholders, **(placeholders or {})}
    return source, placeholders or {}


def _arguments_string(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _plain_message(m: Message) -> dict[str, Any]:
    if m.role == "retrieved_doc":
        return {"role": "user", "content": RETRIEVED_PREFIX + m.content}
    if m.role == "summary":
        return {"role": "user", "content": SUMMARY_PREFIX + m.content}
    return {"role": m.role, "content": m.content}


def to_openai_messages(source: Session | PruneResult, *,
                       placeholders: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """OpenAI Chat Completions ``messages`` for the (kept) session; always API-valid."""
    session, holders = _session_and_placeholders(source, placeholders)
    results: dict[str, Message] = {}
    for m in session.messages:
        if m.tool_call_id is not None:
            results.setdefault(m.tool_call_id, m)
    out: list[dict[str, Any]] = []
    for m in session.messages:
        if m.tool_call_id is not None:
            continue  # emitted right after its call below, or dropped when its call is missing
        if m.role == "assistant" and m.tool_calls:
            out.append({
                "role": "assistant", "content": m.content or None,
                "tool_calls": [{"id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": _arguments_string(c.arguments)}}
                               for c in m.tool_calls]})
            for c in m.tool_calls:
                r = results.get(c.id)
                content = r.content if r is not None else holders.get(c.id, MISSING_RESULT)
                out.append({"role": "tool", "tool_call_id": c.id, "content": content})
        elif m.role == "tool":  # a tool message without a call id cannot be sent as a tool result
            out.append({"role": "user", "content": f"[Tool output]\n{m.content}"})
        else:
            out.append(_plain_message(m))
    return out


def validate_openai_messages(messages: list[dict[str, Any]]) -> None:
    """Raise ``ExportError`` if the Chat Completions API would reject ``messages``.

    Checks roles, content types, that every tool call is answered by tool
    messages straight after it, and that every tool message answers such a call.
    """
    pending: list[str] = []
    seen_ids: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in ("system", "user", "assistant", "tool", "developer"):
            raise ExportError(f"messages[{i}]: unknown role {role!r}")
        if role == "tool":
            cid = msg.get("tool_call_id")
            if cid not in pending:
                raise ExportError(f"messages[{i}]: tool message {cid!r} does not answer a pending call")
            pending.remove(cid)
            if not isinstance(msg.get("content"), str):
                raise ExportError(f"messages[{i}]: tool content must be a string")
            continue
        if pending:
            raise ExportError(f"messages[{i}]: calls {pending} have no result before this message")
        content = msg.get("content")
        if role == "assistant" and msg.get("tool_calls"):
            if content is not None and not isinstance(content, str):
                raise ExportError(f"messages[{i}]: assistant content must be a string or null")
            for c in msg["tool_calls"]:
                cid = c.get("id")
                if not isinstance(cid, str) or not cid or cid in seen_ids:
                    raise ExportError(f"messages[{i}]: tool call id {cid!r} missing or repeated")
                fn = c.get("function") or {}
                if c.get("type") != "function" or not isinstance(fn.get("name"), str) \
                        or not isinstance(fn.get("arguments"), str):
                    raise ExportError(f"messages[{i}]: tool call {cid!r} is not a function call")
                seen_ids.add(cid)
                pending.append(cid)
        elif not isinstance(content, str):
            raise ExportError(f"messages[{i}]: content must be a string")
    if pending:
        raise ExportError(f"calls {pending} have no result at the end of the conversation")
