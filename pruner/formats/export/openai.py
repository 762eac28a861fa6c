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

from typing import Any, Mapping

from ...errors import ExportError
from ...jsonio import dumps_json
from ...model import Message, Session
from ...engine.prune import PruneResult

MISSING_RESULT = "[no result was recorded for this call]"
RETRIEVED_PREFIX = "[Retrieved document]\n"
SUMMARY_PREFIX = "[Summary of the earlier conversation]\n"
TOOL_OUTPUT_PREFIX = "[Tool output]\n"


def _session_and_placeholders(source: Session | PruneResult,
                              placeholders: Mapping[str, str] | None) -> tuple[Session, Mapping[str, str]]:
    if isinstance(source, PruneResult):
        return source.kept, {**source.placeholders, **(placeholders or {})}
    return source, placeholders or {}


def _plain_message(m: Message) -> dict[str, Any]:
    if m.role == "retrieved_doc":
        return {"role": "user", "content": RETRIEVED_PREFIX + m.content}
    if m.role == "summary":
        return {"role": "user", "content": SUMMARY_PREFIX + m.content}
    return {"role": m.role, "content": m.content}


def to_openai_messages(source: Session | PruneResult, *,
                       placeholders: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """OpenAI Chat Completions ``messages`` for the (kept) session; always API-valid.

    An assistant message with no text and no tool calls (an aborted reply) is
    left out: it tells the model nothing. ``openai_export`` also says how many.
    """
    return openai_export(source, placeholders=placeholders)[0]


def results_by_call(session: Session) -> dict[str, Message]:
    """Each call id's result; ``ExportError`` if a call has two (an export would have to pick one)."""
    results: dict[str, Message] = {}
    for m in session.messages:
        if m.tool_call_id is not None:
            if m.tool_call_id in results:
                raise ExportError(f"message {m.id!r} and message {results[m.tool_call_id].id!r} both answer tool "
                                  f"call {m.tool_call_id!r}; a call has one result")
            results[m.tool_call_id] = m
    return results


def arguments_json(call_id: str, arguments: Any) -> str:
    """A call's arguments as the JSON string the API wants (a string stays as it was)."""
    if isinstance(arguments, str):
        return arguments
    try:
        return dumps_json(arguments)
    except ExportError as exc:
        raise ExportError(f"tool call {call_id!r}: {exc}") from None


def openai_export(source: Session | PruneResult, *,
                  placeholders: Mapping[str, str] | None = None) -> tuple[list[dict[str, Any]], int]:
    """``(messages, empty assistant messages left out)``; see ``to_openai_messages``."""
    session, holders = _session_and_placeholders(source, placeholders)
    results = results_by_call(session)
    out: list[dict[str, Any]] = []
    dropped = 0
    for m in session.messages:
        if m.tool_call_id is not None:
            continue  # emitted right after its call below, or dropped when its call is missing
        if m.role == "assistant" and m.tool_calls:
            out.append({
                "role": "assistant", "content": m.content or None,
                "tool_calls": [{"id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": arguments_json(c.id, c.arguments)}}
                               for c in m.tool_calls]})
            for c in m.tool_calls:
                r = results.get(c.id)
                content = r.content if r is not None else holders.get(c.id, MISSING_RESULT)
                out.append({"role": "tool", "tool_call_id": c.id, "content": content})
        elif m.role == "assistant" and not m.content.strip():
            dropped += 1  # an aborted reply: nothing to send
        elif m.role == "tool":  # a tool message without a call id cannot be sent as a tool result
            out.append({"role": "user", "content": f"{TOOL_OUTPUT_PREFIX}{m.content}"})
        else:
            out.append(_plain_message(m))
    return out, dropped


def validate_openai_messages(messages: list[dict[str, Any]]) -> None:
    """Raise ``ExportError`` if the Chat Completions API would reject ``messages``.

    Checks that there is a message, roles, content types, that every tool call is answered by tool
    messages straight after it, and that every tool message answers such a call.
    """
    if not isinstance(messages, list) or not messages:
        raise ExportError("there is no message to send; the API needs at least one")
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
