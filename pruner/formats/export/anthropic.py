"""Turn a (pruned) session into an Anthropic Messages request body.

The Messages API wants ``system`` apart, roles alternating user/assistant
starting with a user, every ``tool_use`` answered by a ``tool_result`` at the
start of the very next user message, and no empty text. So: leading system
messages become ``system``; consecutive same-role messages are merged; each
assistant message's calls are followed by a user message holding their
results (a pruned result gets the placeholder ``prune`` chose, as in
``pruner.formats.export.openai``); a result whose call is missing is dropped; retrieved
documents, summaries, later system messages and unlinked tool output are sent
as labelled user text. Tool-use ids are made API-safe (``[A-Za-z0-9_-]``).

>>> from pruner import Message, Session, ToolCall
>>> s = Session.of([Message(id="u", role="user", content="hi"),
...     Message(id="a", role="assistant", content="", tool_calls=(ToolCall("c1", "clock", {}),))])
>>> body = to_anthropic_messages(s)
>>> [(m["role"], [b["type"] for b in m["content"]]) for m in body["messages"]]
[('user', ['text']), ('assistant', ['tool_use']), ('user', ['tool_result'])]
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ...errors import ExportError
from .openai import (MISSING_RESULT, RETRIEVED_PREFIX, SUMMARY_PREFIX, TOOL_OUTPUT_PREFIX, _session_and_placeholders,
                     results_by_call)
from ...model import Message, Session, parse_arguments
from ...engine.prune import PruneResult

SYSTEM_PREFIX = "[System]\n"
#: Sent as the first user message when the conversation would otherwise start with the assistant.
CONTINUATION = "[The conversation continues.]"
EMPTY_RESULT = "[empty result]"
_ID_OK = re.compile(r"^[A-Za-z0-9_-]+$")


class _Ids:
    """Maps call ids to API-safe, unique tool-use ids (stable within one export)."""

    def __init__(self) -> None:
        self.map: dict[str, str] = {}
        self.used: set[str] = set()
        self.suffix: dict[str, int] = {}

    def __call__(self, cid: str) -> str:
        if cid in self.map:
            return self.map[cid]
        base = cid if _ID_OK.match(cid) else (re.sub(r"[^A-Za-z0-9_-]", "_", cid) or "call")
        out, n = base, self.suffix.get(base, 2)
        while out in self.used:
            out, n = f"{base}_{n}", n + 1
        self.suffix[base] = n  # the next try: many ids that clean up alike cost O(1) each
        self.used.add(out)
        self.map[cid] = out
        return out


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _input(arguments: Any) -> dict[str, Any]:
    args = parse_arguments(arguments)
    return args if isinstance(args, dict) else {"input": args}


def _user_text(m: Message) -> str:
    if m.role == "retrieved_doc":
        return RETRIEVED_PREFIX + m.content
    if m.role == "summary":
        return SUMMARY_PREFIX + m.content
    if m.role == "system":
        return SYSTEM_PREFIX + m.content
    if m.role == "tool":
        return TOOL_OUTPUT_PREFIX + m.content
    return m.content


def to_anthropic_messages(source: Session | PruneResult, *,
                          placeholders: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``{"system": str | None, "messages": [...]}`` for the (kept) session; always API-valid.

    A message with no text (and no tool calls) is left out: the API refuses
    empty content. ``anthropic_export`` also says how many.
    """
    return anthropic_export(source, placeholders=placeholders)[0]


def anthropic_export(source: Session | PruneResult, *,
                     placeholders: Mapping[str, str] | None = None) -> tuple[dict[str, Any], int]:
    """``(body, empty messages left out)``; see ``to_anthropic_messages``."""
    session, holders = _session_and_placeholders(source, placeholders)
    results = results_by_call(session)
    ids = _Ids()
    system_parts: list[str] = []
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    dropped = 0

    def emit(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        # The API wants alternating roles: merge. Results always follow their assistant
        # message, so they open their user message and merged text comes after them.
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, list(blocks)))

    leading = True
    for m in session.messages:
        if m.tool_call_id is not None:
            continue  # sent right after its call below, or dropped when its call is missing
        if m.role == "system" and leading:
            if m.content.strip():
                system_parts.append(m.content)
            else:
                dropped += 1
            continue
        leading = False
        if m.role == "assistant":
            blocks = [_text(m.content)] if m.content.strip() else []
            blocks += [{"type": "tool_use", "id": ids(c.id), "name": c.name, "input": _input(c.arguments)}
                       for c in m.tool_calls]
            dropped += not blocks
            emit("assistant", blocks)
            answers = []
            for c in m.tool_calls:
                r = results.get(c.id)
                text = r.content if r is not None else holders.get(c.id, MISSING_RESULT)
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": ids(c.id),
                                         "content": text if text.strip() else EMPTY_RESULT}
                if r is not None and r.metadata.get("is_error") is True:
                    block["is_error"] = True
                answers.append(block)
            emit("user", answers)
        else:
            text = _user_text(m)
            dropped += not text.strip()
            emit("user", [_text(text)] if text.strip() else [])
    if turns and turns[0][0] == "assistant":
        turns.insert(0, ("user", [_text(CONTINUATION)]))
    body = {"system": "\n\n".join(system_parts) if system_parts else None,
            "messages": [{"role": role, "content": blocks} for role, blocks in turns]}
    return body, dropped


def validate_anthropic_messages(body: Mapping[str, Any] | list[dict[str, Any]]) -> None:
    """Raise ``ExportError`` if the Messages API would reject ``body`` (or its ``messages``).

    Checks: ``system`` is a string or absent; roles alternate starting with
    ``user``; content is a non-empty list of blocks with non-empty text;
    ``tool_use`` ids are unique and API-safe with object ``input``; each
    assistant message's ``tool_use`` blocks are all answered by ``tool_result``
    blocks at the start of the next user message, and every ``tool_result``
    answers a ``tool_use`` of the assistant message just before it.
    """
    messages = body.get("messages") if isinstance(body, Mapping) else body
    if isinstance(body, Mapping) and body.get("system") is not None and not isinstance(body["system"], str):
        raise ExportError("system must be a string")
    if not isinstance(messages, list) or not messages:
        raise ExportError("there is no user or assistant message to send; the API needs at least one")
    seen: set[str] = set()
    pending: list[str] = []
    for i, msg in enumerate(messages):
        role = msg.get("role")
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            raise ExportError(f"messages[{i}]: role is {role!r}; expected {expected!r} (roles must alternate, "
                              "starting with user)")
        content = msg.get("content")
        if not isinstance(content, list) or not content:
            raise ExportError(f"messages[{i}]: content must be a non-empty list of blocks")
        answered: list[str] = []
        leading_results = True
        for k, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            where = f"messages[{i}].content[{k}]"
            if kind == "text":
                if not isinstance(block.get("text"), str) or not block["text"].strip():
                    raise ExportError(f"{where}: text blocks must be non-empty strings")
                leading_results = False
            elif kind == "tool_use" and role == "assistant":
                tid = block.get("id")
                if not isinstance(tid, str) or not _ID_OK.match(tid) or tid in seen:
                    raise ExportError(f"{where}: tool_use id {tid!r} is missing, repeated or not API-safe")
                if not isinstance(block.get("name"), str) or not isinstance(block.get("input"), dict):
                    raise ExportError(f"{where}: tool_use needs a string name and an object input")
                seen.add(tid)
                answered.append(tid)
            elif kind == "tool_result" and role == "user":
                if not leading_results:
                    raise ExportError(f"{where}: tool_result blocks must come before other content")
                tid = block.get("tool_use_id")
                if tid not in pending:
                    raise ExportError(f"{where}: tool_result {tid!r} answers no tool_use of the previous message")
                pending.remove(tid)
                c = block.get("content")
                if not isinstance(c, (str, list)):
                    raise ExportError(f"{where}: tool_result content must be a string or blocks")
            else:
                raise ExportError(f"{where}: block type {kind!r} is not allowed in a {role} message here")
        if pending:
            raise ExportError(f"messages[{i}]: tool_use {pending} of the previous message have no tool_result")
        pending = answered
    if pending:
        raise ExportError(f"tool_use {pending} have no tool_result at the end of the conversation")
