"""OpenAI Responses API items.

Accepted shapes: a list of items, or an object with ``input`` and/or
``output`` item lists (a request body or a stored response; ``instructions``
becomes the system message). Items: ``message`` (roles user / assistant /
system / developer; a bare ``{"role", "content"}`` counts as a message),
``function_call`` (``call_id``, ``name``, ``arguments``) and
``custom_tool_call`` (``input``), their ``*_output`` items (``call_id``,
``output``), and ``reasoning`` (its summary text goes to the next assistant
message's ``metadata["thinking"]``). Consecutive calls join one assistant
message, as Chat Completions would send them. Other items are kept in
``Session.metadata["source"]["unmapped_items"]``.

>>> s = loads('[{"role": "user", "content": "time?"},'
...           ' {"type": "function_call", "call_id": "c1", "name": "clock", "arguments": "{}"},'
...           ' {"type": "function_call_output", "call_id": "c1", "output": "12:00"}]')
>>> [(m.role, m.tool_name) for m in s.messages]
[('user', None), ('assistant', None), ('tool', 'clock')]
"""

from __future__ import annotations

from typing import Any, Iterable

from ..errors import FormatError
from ..jsonio import loads_json
from ..model import Session
from .builder import Draft, SessionBuilder
from .common import JsonObject, Probe, document, flatten_content, jpath, stamp_model, type_name, unmapped, with_source

NAME = "openai_responses"
ORDER = 20  # where --help and FORMATS list it
DESCRIPTION = "OpenAI Responses API items (a list, or an object with 'input'/'output')"
ITEM_TYPES = ("message", "function_call", "function_call_output", "custom_tool_call",
              "custom_tool_call_output", "reasoning", "local_shell_call", "local_shell_call_output")
MESSAGE_ROLES = ("user", "assistant", "system", "developer")


class ItemReader:
    """Turns Responses items into drafts on a ``SessionBuilder`` (shared with the Codex importer)."""

    def __init__(self, builder: SessionBuilder):
        self.b = builder
        self.thinking: list[str] = []
        self.unmapped: list[Any] = []
        self._open_assistant: Draft | None = None  # the assistant message calls may still join
        self._n = 0

    def _id(self, item: JsonObject, prefix: str = "m") -> str:
        self._n += 1
        iid = item.get("id")
        if isinstance(iid, str) and iid:
            return self.b.fresh_id(iid) if iid in self.b._ids else iid
        return self.b.fresh_id(f"{prefix}{self._n}")

    def _take_thinking(self, draft: Draft) -> None:
        if self.thinking:
            old = draft.metadata.get("thinking")
            draft.metadata["thinking"] = "\n".join(([old] if old else []) + self.thinking)
            self.thinking = []

    def _assistant(self, item: JsonObject, where: str) -> Draft:
        if self._open_assistant is None:
            self._open_assistant = self.b.add(id=self._id(item, "a"), role="assistant", content="", where=where)
        self._take_thinking(self._open_assistant)
        return self._open_assistant

    def add(self, item: Any, where: str, *, metadata: dict[str, Any] | None = None) -> None:
        b = self.b
        if not isinstance(item, dict):
            raise b.error(f"an item must be an object, got {type_name(item)}", where)
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            if "role" not in item:
                raise b.error("message item has no 'role'; add one of " + ", ".join(MESSAGE_ROLES), where)
            role = item["role"]
            if role not in MESSAGE_ROLES:
                raise b.error(f"unknown role {role!r}; expected one of {', '.join(MESSAGE_ROLES)}",
                              jpath(where, "role"))
            text, parts = flatten_content(item.get("content"), file=b.file, where=jpath(where, "content"),
                                          line=b.line)
            extra = unmapped(item, ("type", "role", "content", "id"))
            if parts:
                extra["content_parts"] = parts
            if role == "developer":
                extra["role"] = role
            meta = with_source(dict(metadata or {}), extra)
            if role == "assistant":
                draft = self.b.add(id=self._id(item), role="assistant", content=text, where=where, metadata=meta)
                self._open_assistant = draft
                self._take_thinking(draft)
            else:
                self._open_assistant = None
                self.b.add(id=self._id(item), role="system" if role == "developer" else role, content=text,
                           where=where, metadata=meta)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            draft = self._assistant(item, where)
            if kind == "function_call":
                args: Any = item.get("arguments", "{}")
            elif kind == "custom_tool_call":
                args = {"input": item.get("input", "")}
            else:
                args = item.get("action", {})
            name = item.get("name", "local_shell" if kind == "local_shell_call" else None)
            uid = b.add_call(draft, original_id=item.get("call_id"), name=name, arguments=args, where=where)
            extra = unmapped(item, ("type", "call_id", "name", "arguments", "input", "action"))
            if kind != "function_call":
                extra["type"] = kind
            if extra:
                draft.metadata.setdefault("source", {}).setdefault("calls", {})[uid] = extra
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            self._open_assistant = None
            out = item.get("output")
            meta = dict(metadata or {})
            extra = unmapped(item, ("type", "call_id", "output", "id"))
            if isinstance(out, str) and out.startswith("{"):
                try:  # Codex wraps shell output as {"output": ..., "metadata": {...}}
                    wrapped = loads_json(out)
                except (ValueError, RecursionError):
                    wrapped = None
                if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
                    out = wrapped["output"]
                    extra["output_metadata"] = wrapped.get("metadata")
            text, parts = flatten_content(out, file=b.file, where=jpath(where, "output"), line=b.line)
            if parts:
                extra["content_parts"] = parts
            if kind != "function_call_output":
                extra["type"] = kind
            b.add_result(original_call_id=item.get("call_id"), id=self._id(item, "r"), content=text,
                         where=where, metadata=with_source(meta, extra))
        elif kind == "reasoning":
            for key in ("summary", "content"):
                pieces = item.get(key)
                for part in pieces if isinstance(pieces, list) else []:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        self.thinking.append(part["text"])
        else:
            self.unmapped.append({"at": where, "item": item})

    def finish(self, session_meta: dict[str, Any]) -> dict[str, Any]:
        src = {}
        if self.unmapped:
            src["unmapped_items"] = self.unmapped
        if self.thinking:  # reasoning after the last assistant message
            src["trailing_reasoning"] = self.thinking
        if src:
            session_meta.setdefault("source", {}).update(src)
        return session_meta


def _items_of(doc: Any) -> list[tuple[str, list[Any]]] | None:
    if isinstance(doc, list):
        return [("$", doc)]
    if isinstance(doc, dict) and (isinstance(doc.get("input"), list) or isinstance(doc.get("output"), list)):
        return [(f"$.{k}", doc[k]) for k in ("input", "output") if isinstance(doc.get(k), list)]
    return None


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.is_document:
        return 0.0
    groups = _items_of(probe.document)
    if not groups:
        return 0.0
    items = [it for _, lst in groups for it in lst[:200]]
    if not items or not all(isinstance(it, dict) for it in items):
        return 0.0
    if any(it.get("type") in ITEM_TYPES[1:] for it in items) or \
            any(it.get("type") == "message" for it in items):
        return 0.95
    if isinstance(probe.document, dict) and probe.document.get("object") == "response":
        return 0.95
    return 0.0


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    doc = document(text, file=file)
    groups = _items_of(doc)
    if groups is None:
        raise FormatError(f"the top-level value is {type_name(doc)}; expected a list of Responses items "
                          "or an object with an 'input' or 'output' list", file=file, path="$")
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools)
    session_meta: dict[str, Any] = {}
    if isinstance(doc, dict):
        if isinstance(doc.get("instructions"), str) and doc["instructions"]:
            b.add(id="instructions", role="system", content=doc["instructions"], where="$.instructions")
        extra = unmapped(doc, ("input", "output", "instructions"))
        if extra:
            session_meta["source"] = extra
    reader = ItemReader(b)
    for base, items in groups:
        for i, item in enumerate(items):
            reader.add(item, jpath(base, i))
    stamp_model(b, doc.get("model") if isinstance(doc, dict) else None)  # a response object records its model
    return b.build(metadata=reader.finish(session_meta))
