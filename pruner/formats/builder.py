"""Building a session from a foreign transcript: ids kept unique, results linked to their calls.

Importers turn a foreign transcript into ``Message`` values through a
``SessionBuilder``: it checks ids, links each tool result to its call (giving
the result the call's tool name), maps results of retrieval tools to
``retrieved_doc`` and finally numbers turns and validates the session.

>>> b = SessionBuilder(file="demo.json", source_format="demo")
>>> _ = b.add(id="u", role="user", content="weather?", where="$[0]")
>>> a = b.add(id="a", role="assistant", content="", where="$[1]")
>>> b.add_call(a, original_id="c1", name="weather", arguments={"city": "Oslo"}, where="$[1]")
'c1'
>>> _ = b.add_result(original_call_id="c1", id="r", content="sunny", where="$[2]")
>>> [(m.role, m.tool_name) for m in b.build().messages]
[('user', None), ('assistant', None), ('tool', 'weather')]
"""

from __future__ import annotations

from collections import deque
from datetime import datetime
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import FormatError, InvalidSessionError
from ..model import Message, Session, ToolCall, calendar_seconds, parse_arguments, validate_session
from .repairing import Repairs

#: Tool names whose results become ``retrieved_doc`` messages by default: none.
#: Pass ``retrieval_tools=frozenset({"search_docs"})`` to any importer (or
#: ``pruner.formats.load_session``) to treat a retrieval tool's results as documents.
RETRIEVAL_TOOLS: frozenset[str] = frozenset()


@dataclass
class Draft:
    """A message under construction (importers merge blocks into it before it is frozen)."""

    id: str
    role: str
    content: str
    where: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def append_text(self, text: str) -> None:
        if text:
            self.content = f"{self.content}\n{text}" if self.content else text


class SessionBuilder:
    """Collects drafts, keeps ids unique, links results to calls, then builds a ``Session``.

    Call ids may be reused (tau-bench and SWE-agent replay the same ids, and a
    careless writer may give two calls of one message the same id): a reused id
    gets a ``_2``, ``_3`` suffix, the original is kept in the call's message
    metadata under ``source.original_call_ids``, and the renaming is recorded
    in ``repairs``. A result is linked to the first unanswered call with its id
    in the latest assistant message that has one, so two calls sharing an id
    are answered in order and a result never moves to another call. A result
    for a call that already has one is an error, except in an agent log
    (``lenient``), where it is kept as unlinked tool output and recorded.
    ``lenient`` also keeps a message whose id was used before under a fresh id
    (recorded) instead of refusing it.
    """

    def __init__(self, *, file: str, source_format: str,
                 retrieval_tools: Iterable[str] | None = None, lenient: bool = False,
                 repairs: Repairs | None = None):
        self.file = file
        self.source_format = source_format
        self.retrieval_tools = frozenset(RETRIEVAL_TOOLS if retrieval_tools is None else retrieval_tools)
        self.lenient = lenient
        self.repairs = repairs if repairs is not None else Repairs()
        self.drafts: list[Draft] = []
        self._ids: dict[str, str] = {}  # message id -> where it was defined
        # original call id -> its calls grouped by message, oldest first, each group the calls still
        # unanswered (the groups with none left are dropped from the end as results arrive)
        self._pending: dict[str, list[tuple[int, deque[str]]]] = {}
        self._last_call: dict[str, str] = {}  # original call id -> the latest call made with it
        self._suffix: dict[str, int] = {}  # base -> the next suffix to try (fresh ids in O(1))
        self._call_ids: set[str] = set()
        self._call_names: dict[str, str] = {}
        self._answered: dict[str, str] = {}  # call id -> where its result is
        self.line: int | None = None  # set by JSONL importers so errors name the line

    def error(self, message: str, where: str | None = None) -> FormatError:
        return FormatError(message, file=self.file, line=self.line, path=where)

    def _here(self, where: str | None) -> str:
        return f"line {self.line}" if self.line is not None else (where or "?")

    def _free(self, base: str, taken: Any) -> str:
        """``base`` if not in ``taken``, else the first free ``base_2``, ``base_3``, ..."""
        if base not in taken:
            return base
        n = self._suffix.get(base, 2)
        while f"{base}_{n}" in taken:
            n += 1
        self._suffix[base] = n + 1
        return f"{base}_{n}"

    def fresh_id(self, base: str) -> str:
        """``base`` if unused, else ``base_2``, ``base_3``, ..."""
        return self._free(base, self._ids)

    def add(self, *, id: str, role: str, content: str, where: str, tool_call_id: str | None = None,
            tool_name: str | None = None, metadata: dict[str, Any] | None = None) -> Draft:
        if not isinstance(id, str) or not id:
            raise self.error("message id must be a non-empty string", where)
        metadata = dict(metadata or {})
        if id in self._ids:
            if not self.lenient:
                raise self.error(f"duplicate id {id!r} (first used at {self._ids[id]}); ids must be unique, "
                                 "rename or delete one of them", where)
            new_id = self.fresh_id(id)
            self.repairs.add("renamed_ids", self.line,
                             example=f"{id!r} -> {new_id!r} ({self._here(where)}; first at {self._ids[id]})")
            metadata.setdefault("source", {})["original_id"] = id
            id = new_id
        self._ids[id] = self._here(where)
        d = Draft(id=id, role=role, content=content, where=where, tool_call_id=tool_call_id,
                  tool_name=tool_name, metadata=metadata)
        self.drafts.append(d)
        return d

    def add_call(self, draft: Draft, *, original_id: Any, name: Any, arguments: Any, where: str) -> str:
        if not isinstance(original_id, str) or not original_id:
            raise self.error("tool call has no id (a non-empty string is needed to link its result)", where)
        if not isinstance(name, str) or not name:
            raise self.error(f"tool call {original_id!r} has no tool name", where)
        if draft.role != "assistant":
            raise self.error(f"a {draft.role} message makes tool call {original_id!r}; only assistant messages "
                             "make tool calls", where)
        uid = self._free(original_id, self._call_ids)
        if uid != original_id:
            draft.metadata.setdefault("source", {}).setdefault("original_call_ids", {})[uid] = original_id
            self.repairs.add("renamed_call_ids", self.line, example=f"{original_id!r} -> {uid!r} ({self._here(where)})")
        self._call_ids.add(uid)
        groups = self._pending.setdefault(original_id, [])
        if not groups or groups[-1][0] != id(draft):
            groups.append((id(draft), deque()))
        groups[-1][1].append(uid)
        self._last_call[original_id] = uid
        self._call_names[uid] = name
        draft.tool_calls.append(ToolCall(id=uid, name=name, arguments=parse_arguments(arguments)))
        return uid

    def _call_for_result(self, original_call_id: str) -> tuple[str | None, str | None]:
        """``(call id, None)`` for the call a result answers, or ``(None, where the call's result is)``."""
        groups = self._pending[original_call_id]
        while groups and not groups[-1][1]:
            groups.pop()  # every call of the latest message with this id is answered
        if groups:  # the first unanswered call of the latest message that has one
            return groups[-1][1].popleft(), None
        return None, self._answered[self._last_call[original_call_id]]

    def add_result(self, *, original_call_id: Any, id: str, content: str, where: str,
                   metadata: dict[str, Any] | None = None, recorded_name: Any = None) -> Draft:
        """A tool result answering the call made with ``original_call_id`` (see the class)."""
        if not isinstance(original_call_id, str) or not original_call_id:
            raise self.error("tool result has no call id; it must name the tool call it answers", where)
        if original_call_id not in self._last_call:
            raise self.error(f"tool result answers call id {original_call_id!r}, but no earlier tool call "
                             "has that id; add the call or delete the result", where)
        meta = dict(metadata or {})
        uid, answered_at = self._call_for_result(original_call_id)
        if uid is None:
            if not self.lenient:
                raise self.error(f"tool result answers call id {original_call_id!r}, but that call already has "
                                 f"a result ({answered_at}); a call has one result, so delete the repeated one "
                                 "or give it its own call", where)
            self.repairs.add("unlinked_results", self.line)
            meta.setdefault("source", {})["answers_call_id"] = original_call_id
            return self.add(id=id, role="tool", content=content, where=where, metadata=meta)
        name = self._call_names[uid]
        if isinstance(recorded_name, str) and recorded_name and recorded_name != name:
            meta.setdefault("source", {})["recorded_tool_name"] = recorded_name
        if uid != original_call_id:
            meta.setdefault("source", {})["original_call_id"] = original_call_id
        role = "retrieved_doc" if name in self.retrieval_tools else "tool"
        draft = self.add(id=id, role=role, content=content, where=where, tool_call_id=uid,
                         tool_name=name, metadata=meta)
        self._answered[uid] = self._ids[draft.id]
        return draft

    def build(self, *, name: str = "", metadata: dict[str, Any] | None = None,
              subagents: Iterable[Session] = ()) -> Session:
        messages = [Message(id=d.id, role=d.role, content=d.content, tool_calls=tuple(d.tool_calls),
                            tool_call_id=d.tool_call_id, tool_name=d.tool_name, metadata=d.metadata)
                    for d in self.drafts]
        for m in messages:
            if _outside_calendar(m.metadata.get("timestamp")):  # kept as recorded; no date is taken from it
                self.repairs.add("invalid_time", example=f"{m.id}: {str(m.metadata['timestamp'])[:40]}")
        metadata = self.repairs.merge_into(dict(metadata or {}))
        session = Session.of(messages, name=name, source_format=self.source_format, metadata=metadata,
                             subagents=subagents)
        try:
            validate_session(session)
        except InvalidSessionError as exc:  # importers check first; this is the safety net
            raise FormatError(str(exc), file=self.file) from None
        return session


def _outside_calendar(value: Any) -> bool:
    """A recorded time that reads as one but lies outside the years 1000 to 9999 (Go's zero time, year 1;
    2^63-1 milliseconds): a damaged field, reported (``invalid_time``), never a date."""
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, str) and value[:1] != "0":  # a year of four digits from 1000 (the common case: no parse)
        return False
    if calendar_seconds(value) is not None:
        return False
    if isinstance(value, (int, float)):
        return value > 0
    if not isinstance(value, str) or not value:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False  # not a time at all: no date, as before
    return True


__all__ = ["Draft", "SessionBuilder"]
