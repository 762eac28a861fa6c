"""Anthropic Messages: ``{"system": ..., "messages": [...]}`` or a bare list of messages.

Content is a string or a list of blocks: ``text``; ``tool_use`` (``id``,
``name``, ``input``) becomes a tool call; ``tool_result`` (``tool_use_id``,
``content`` as a string or blocks, ``is_error``) becomes a tool result;
``thinking`` goes to ``metadata["thinking"]``; other blocks (images,
documents, server tools) show as ``[type]`` and are kept in
``metadata["source"]``. A user message made only of ``tool_result`` blocks
is a tool result, not a new user turn.

>>> s = loads('{"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}')
>>> [(m.role, m.content) for m in s.messages]
[('system', 'Be brief.'), ('user', 'hi')]
"""

from __future__ import annotations

from typing import Any, Iterable

from ..errors import FormatError
from ..model import Session
from .builder import Draft, SessionBuilder
from .common import Probe, checked_usage, document, flatten_content, jpath, type_name, unmapped, with_source

NAME = "anthropic"
ORDER = 30  # where --help and FORMATS list it
DESCRIPTION = "Anthropic Messages (an object with 'system' and 'messages', or a list of messages)"
ROLES = ("user", "assistant")
# A tuple, not a set: a hostile file's block "type" may be a list, which a set lookup cannot hash.
_SIGNAL_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document",
                  "server_tool_use", "web_search_tool_result")


def _messages_of(doc: Any) -> list[Any] | None:
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        messages: list[Any] = doc["messages"]
        return messages
    if isinstance(doc, list):
        return doc
    return None


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.is_document:
        return 0.0
    items = _messages_of(probe.document)
    if items is None:
        return 0.0
    head = [m for m in items[:200] if isinstance(m, dict)]
    if not head or 2 * sum("role" in m for m in head[:50]) < len(items[:50]):
        return 0.0
    if any(m.get("role", "user") not in ROLES or "tool_calls" in m or "tool_call_id" in m for m in head):
        return 0.0
    for m in head:
        content = m.get("content")
        if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") in _SIGNAL_BLOCKS
                                             for p in content):
            return 0.9
    if isinstance(probe.document, dict) and "system" in probe.document:
        return 0.9
    return 0.5  # plain user/assistant text: Chat Completions' shape too


def anthropic_usage(b: SessionBuilder, u: Any, where: str) -> dict[str, int] | None:
    """``metadata["usage"]`` from an Anthropic ``usage`` object (None when there is none).

    ``cache_creation.ephemeral_1h_input_tokens``, where recorded, is the part of
    the cache write made with the 1-hour TTL (``cache_write_1h``); the rest is 5-minute.
    """
    if not isinstance(u, dict):
        return None
    fields: dict[str, tuple[str, Any]] = {
        "input": ("input_tokens", u.get("input_tokens")), "output": ("output_tokens", u.get("output_tokens")),
        "cache_read": ("cache_read_input_tokens", u.get("cache_read_input_tokens")),
        "cache_write": ("cache_creation_input_tokens", u.get("cache_creation_input_tokens"))}
    split = u.get("cache_creation")
    if isinstance(split, dict) and split.get("ephemeral_1h_input_tokens") is not None:
        fields["cache_write_1h"] = ("cache_creation.ephemeral_1h_input_tokens", split["ephemeral_1h_input_tokens"])
    return checked_usage(b, jpath(where, "usage"), fields)


def _blocks(content: Any, b: SessionBuilder, where: str) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if not isinstance(content, list):
        raise b.error(f"field 'content' must be a string or a list of blocks, got {type_name(content)}",
                      jpath(where, "content"))
    if b.lenient and any(isinstance(block, str) for block in content):
        # An agent log's list of plain strings (issue 23, defect 22): each string is a text block.
        content = [{"type": "text", "text": block} if isinstance(block, str) else block for block in content]
    blocks: list[Any] = content
    for k, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise b.error(f"a content block must be an object, got {type_name(block)}",
                          jpath(where, "content", k))
    return blocks


def add_assistant_blocks(b: SessionBuilder, draft: Draft, content: Any, where: str) -> None:
    """Append an assistant message's blocks to ``draft`` (text, tool calls, thinking)."""
    for k, block in enumerate(_blocks(content, b, where)):
        kind = block.get("type")
        bwhere = jpath(where, "content", k)
        if kind == "text" and isinstance(block.get("text"), str):
            draft.append_text(block["text"])
        elif kind == "tool_use":
            b.add_call(draft, original_id=block.get("id"), name=block.get("name"),
                       arguments=block.get("input", {}), where=bwhere)
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            old = draft.metadata.get("thinking")
            draft.metadata["thinking"] = f"{old}\n{block['thinking']}" if old else block["thinking"]
        else:
            draft.metadata.setdefault("source", {}).setdefault("blocks", []).append(block)
            if kind not in ("redacted_thinking",):
                draft.append_text(f"[{kind or 'block'}]")


def add_user_blocks(b: SessionBuilder, content: Any, *, id: str, where: str,
                    metadata: dict[str, Any] | None = None, result_metadata: dict[str, Any] | None = None,
                    role: str = "user") -> list[Draft]:
    """Tool results first (one message each), then the user's own text if there is any."""
    blocks = _blocks(content, b, where)
    out: list[Draft] = []
    texts: list[str] = []
    others: list[Any] = []
    n_results = sum(1 for bl in blocks if bl.get("type") == "tool_result")
    for k, block in enumerate(blocks):
        kind = block.get("type")
        bwhere = jpath(where, "content", k)
        if kind == "tool_result":
            text, parts = flatten_content(block.get("content"), file=b.file, where=jpath(bwhere, "content"),
                                          line=b.line)
            meta: dict[str, Any] = dict(result_metadata or {})
            meta["is_error"] = bool(block.get("is_error", False))
            extra = unmapped(block, ("type", "tool_use_id", "content", "is_error"))
            if parts:
                extra["content_parts"] = parts
            rid = id if n_results == 1 and not any(bl.get("type") != "tool_result" for bl in blocks) \
                else b.fresh_id(f"{id}_r{k}")
            out.append(b.add_result(original_call_id=block.get("tool_use_id"), id=rid, content=text,
                                    where=bwhere, metadata=with_source(meta, extra)))
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        else:
            others.append(block)
            texts.append(f"[{kind or 'block'}]")
    if texts or not blocks:
        meta = dict(metadata or {})
        if others:
            meta.setdefault("source", {})["blocks"] = others
        out.append(b.add(id=id if id not in {d.id for d in out} else b.fresh_id(id), role=role,
                         content="\n".join(texts), where=where, metadata=meta))
    return out


def system_text(system: Any, *, file: str) -> str:
    text, _ = flatten_content(system, file=file, where="$.system")
    return text


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    doc = document(text, file=file)
    messages = _messages_of(doc)
    if messages is None:
        raise FormatError(f"the top-level value is {type_name(doc)}; expected an object with a 'messages' "
                          "list (and optional 'system') or a list of messages", file=file, path="$")
    base = "$.messages" if isinstance(doc, dict) else "$"
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools)
    session_meta: dict[str, Any] = {}
    if isinstance(doc, dict):
        if doc.get("system") not in (None, "", []):
            b.add(id="system", role="system", content=system_text(doc["system"], file=file), where="$.system")
        extra = unmapped(doc, ("messages", "system"))
        if extra:
            session_meta["source"] = extra
    for i, m in enumerate(messages):
        where = jpath(base, i)
        if not isinstance(m, dict):
            raise b.error(f"a message must be an object, got {type_name(m)}", where)
        if "role" not in m:
            raise b.error("message has no 'role'; add 'user' or 'assistant'", where)
        role = m["role"]
        if role not in ROLES:
            raise b.error(f"unknown role {role!r}; Anthropic messages are 'user' or 'assistant' "
                          "(the system prompt goes in the top-level 'system')", jpath(where, "role"))
        extra = unmapped(m, ("role", "content", "usage", "id") + (("model",) if role == "assistant" else ()))
        meta = with_source({}, extra)
        mid = m["id"] if isinstance(m.get("id"), str) and m["id"] else f"m{i}"
        if role == "assistant":
            recorded = anthropic_usage(b, m.get("usage"), where)
            if recorded:
                meta["usage"] = recorded
            model = m.get("model", doc.get("model") if isinstance(doc, dict) else None)
            if isinstance(model, str) and model:
                meta["model"] = model
            if isinstance(m.get("id"), str) and m["id"]:
                meta["request_id"] = m["id"]
            draft = b.add(id=mid, role="assistant", content="", where=where, metadata=meta)
            add_assistant_blocks(b, draft, m.get("content"), where)
        else:
            add_user_blocks(b, m.get("content"), id=mid, where=where, metadata=meta)
    return b.build(metadata=session_meta)


def dumps(session: Session) -> str:
    """The session as an Anthropic Messages request body (``system`` + ``messages``) JSON."""
    from .export import dumps as export_dumps
    return export_dumps(session, to="anthropic")
