"""OpenAI Chat Completions messages.

Accepted shapes: a list of messages; an object with ``messages`` (other keys
are kept in ``Session.metadata["source"]``); a list of dialogue records each
holding ``messages`` or ``traj`` (tau-bench) — pick one with ``dialogue=N``
or read them all with ``loads_all``.

Mapped: roles ``system``/``developer`` (-> system), ``user``, ``assistant``
(``tool_calls`` with ``id``, ``function.name``, ``function.arguments`` as a
JSON string; ``reasoning_content`` -> ``metadata["thinking"]``), ``tool``
(``tool_call_id``), the legacy ``function_call`` and ``function`` role, and
content as a string or a list of parts. Anything else stays in
``metadata["source"]``.

>>> s = loads('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]')
>>> [(m.role, m.turn) for m in s.messages]
[('user', 1), ('assistant', 1)]
"""

from __future__ import annotations

from typing import Any, Iterable

from ..errors import DialogueChoiceError, FormatError
from ..model import Session
from .builder import SessionBuilder
from .common import (JsonObject, Probe, chat_message_fields, document, jpath, stamp_model, type_name, unmapped,
                     with_source)

NAME = "openai_chat"
ORDER = 10  # where --help and FORMATS list it
DESCRIPTION = "OpenAI Chat Completions messages (a list, or an object with 'messages')"
ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_KNOWN = {"role", "content", "tool_calls", "tool_call_id", "function_call", "name", "reasoning_content"}
_DIALOGUE_KEYS = ("messages", "traj")


def _looks_like_messages(items: Any) -> bool:
    """Mostly objects with a 'role' (a broken message still lets the loader say what is wrong)."""
    head = items[:50] if isinstance(items, list) else []
    return bool(head) and 2 * sum(isinstance(m, dict) and "role" in m for m in head) >= len(head)


def _strong_signals(items: list[Any]) -> bool:
    """Features only Chat Completions has (Anthropic has none of these)."""
    for m in items[:200]:
        if not isinstance(m, dict):
            continue
        if m.get("role") in ("system", "developer", "tool", "function") or "tool_calls" in m \
                or "function_call" in m or "tool_call_id" in m:
            return True
        content = m.get("content")
        if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") in (
                "image_url", "input_audio", "file") for p in content):
            return True
    return False


def _weak_anthropic_signals(items: list[Any]) -> bool:
    for m in items[:200]:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") in (
                "tool_use", "tool_result", "thinking", "image", "document") for p in content):
            return True
    return False


def _dialogues(doc: Any) -> list[tuple[list[Any], JsonObject]] | None:
    """``[(messages, record extras)]`` when ``doc`` holds dialogue records."""
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list) or not doc or not all(isinstance(r, dict) for r in doc):
        return None
    out = []
    for r in doc:
        key = next((k for k in _DIALOGUE_KEYS if isinstance(r.get(k), list)), None)
        if key is None or "role" in r:
            return None
        out.append((r[key], unmapped(r, (key,))))
    return out


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.is_document:
        return 0.0
    doc = probe.document
    if isinstance(doc, dict) and "history" in doc and ("trajectory" in doc or "info" in doc):
        return 0.0  # a SWE-agent trajectory
    dialogues = _dialogues(doc)
    if dialogues is not None:
        items = [m for msgs, _ in dialogues[:3] for m in msgs]
        if isinstance(doc, dict) and "messages" in doc and "system" in doc and not _strong_signals(items):
            return 0.0  # Anthropic's top-level system prompt
    elif _looks_like_messages(doc):
        items = doc
    else:
        return 0.0
    if not _looks_like_messages(items) and items:
        return 0.0
    if _strong_signals(items):
        return 0.9
    if _weak_anthropic_signals(items):
        return 0.0
    return 0.5  # plain user/assistant text: Anthropic's shape too


def _message(b: SessionBuilder, m: Any, i: int, base: str, legacy: dict[str, list[str]]) -> None:
    where = jpath(base, i)
    role, content, extra = chat_message_fields(b, m, where, roles=ROLES, known=_KNOWN)
    meta: dict[str, Any] = {}
    if role == "developer":
        extra["role"] = role
    if role != "tool" and "name" in m:
        extra["name"] = m["name"]
    if isinstance(m.get("reasoning_content"), str) and m["reasoning_content"]:
        meta["thinking"] = m["reasoning_content"]
    mid = f"m{i}"
    if role == "tool":
        b.add_result(original_call_id=m.get("tool_call_id"), id=mid, content=content, where=where,
                     metadata=with_source(meta, extra), recorded_name=m.get("name"))
        return
    if role == "function":  # legacy: answers the latest pending function_call with this name
        name = m.get("name")
        pending = legacy.get(name) if isinstance(name, str) else None
        if not pending:
            raise b.error(f"'function' message for {name!r} answers no earlier function_call; "
                          "add the call or delete the message", where)
        extra["role"] = "function"
        b.add_result(original_call_id=pending.pop(0), id=mid, content=content, where=where,
                     metadata=with_source(meta, extra))
        return
    draft = b.add(id=mid, role="system" if role == "developer" else role, content=content, where=where,
                  metadata=with_source(meta, extra))
    calls = m.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise b.error(f"field 'tool_calls' must be a list, got {type_name(calls)}", jpath(where, "tool_calls"))
    for j, c in enumerate(calls or []):
        cwhere = jpath(where, "tool_calls", j)
        if not isinstance(c, dict):
            raise b.error(f"a tool call must be an object, got {type_name(c)}", cwhere)
        fn = c.get("function")
        if not isinstance(fn, dict):
            raise b.error("tool call has no 'function' object with 'name' and 'arguments'", cwhere)
        b.add_call(draft, original_id=c.get("id"), name=fn.get("name"), arguments=fn.get("arguments", "{}"),
                   where=cwhere)
    fc = m.get("function_call")
    if isinstance(fc, dict):
        call_id = f"{mid}_function_call"
        name = fc.get("name")
        b.add_call(draft, original_id=call_id, name=name, arguments=fc.get("arguments", "{}"),
                   where=jpath(where, "function_call"))
        assert isinstance(name, str)  # add_call refuses a call without a tool name
        legacy.setdefault(name, []).append(call_id)


def session_from_messages(messages: Any, *, file: str = "<input>", base: str = "$", name: str = "",
                          metadata: dict[str, Any] | None = None,
                          retrieval_tools: Iterable[str] | None = None,
                          source_format: str = NAME, model: Any = None) -> Session:
    """A session from an already parsed Chat Completions message list.

    Each assistant message records ``metadata["model"]``: its own ``model``
    field, else the request's (``model``: the top-level one of the record).
    """
    if not isinstance(messages, list):
        raise FormatError(f"expected a list of messages, got {type_name(messages)}", file=file, path=base)
    b = SessionBuilder(file=file, source_format=source_format, retrieval_tools=retrieval_tools)
    legacy: dict[str, list[str]] = {}
    for i, m in enumerate(messages):
        _message(b, m, i, base, legacy)
    stamp_model(b, model)
    return b.build(name=name, metadata=metadata)


def _top_level_error(doc: Any, file: str) -> FormatError:
    return FormatError(f"the top-level value is {type_name(doc)}; expected a list of messages or an "
                       "object with a 'messages' list", file=file, path="$")


def _is_message_list(doc: Any) -> bool:
    return isinstance(doc, list) and (not doc or not isinstance(doc[0], dict) or "role" in doc[0])


def _dialogue_session(doc: Any, dialogues: list[tuple[list[Any], JsonObject]], i: int, *, file: str,
                      retrieval_tools: Iterable[str] | None) -> Session:
    record = doc[i] if isinstance(doc, list) else doc
    key = next(k for k in _DIALOGUE_KEYS if isinstance(record.get(k), list))
    msgs, extra = dialogues[i]
    name = ""
    if isinstance(doc, list):
        name = f"dialogue {i}" + (f" (task {extra['task_id']})" if "task_id" in extra else "")
    base = jpath("$", i, key) if isinstance(doc, list) else jpath("$", key)
    return session_from_messages(msgs, file=file, base=base, retrieval_tools=retrieval_tools, name=name,
                                 metadata={"source": extra} if extra else {}, model=record.get("model"))


def loads_all(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
              retrieval_tools: Iterable[str] | None = None) -> list[Session]:
    """Every dialogue in the file (one for a plain message list)."""
    doc = document(text, file=file)
    if _is_message_list(doc):
        return [session_from_messages(doc, file=file, retrieval_tools=retrieval_tools)]
    dialogues = _dialogues(doc)
    if dialogues is None:
        raise _top_level_error(doc, file)
    return [_dialogue_session(doc, dialogues, i, file=file, retrieval_tools=retrieval_tools)
            for i in range(len(dialogues))]


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None, dialogue: int | None = None) -> Session:
    """One session; a file of several dialogues needs ``dialogue=N`` (0-based)."""
    doc = document(text, file=file)
    if _is_message_list(doc):
        if dialogue not in (None, 0):
            raise FormatError(f"this file holds one dialogue; dialogue {dialogue} does not exist", file=file,
                              setting="dialogue")
        return session_from_messages(doc, file=file, retrieval_tools=retrieval_tools)
    dialogues = _dialogues(doc)
    if dialogues is None:
        raise _top_level_error(doc, file)
    if dialogue is None and len(dialogues) > 1:
        raise DialogueChoiceError(count=len(dialogues), file=file)
    index = dialogue or 0
    if not 0 <= index < len(dialogues):
        raise FormatError(f"dialogue {index} does not exist; the file holds {len(dialogues)} "
                          f"(0 to {len(dialogues) - 1})", file=file, setting="dialogue")
    return _dialogue_session(doc, dialogues, index, file=file, retrieval_tools=retrieval_tools)


def dumps(session: Session) -> str:
    """The session as Chat Completions messages JSON (API-valid, see ``pruner.formats.export.openai``)."""
    from .export import dumps as export_dumps
    return export_dumps(session, to="openai")
