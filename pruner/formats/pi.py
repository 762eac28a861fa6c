"""Pi coding-agent session JSONL, versions 1 to 3.

Line 1 is the header (``type: "session"``; no ``version`` means 1). From
version 2 entries carry ``id``/``parentId`` and form a tree; the conversation
is the path from the last entry back to the root, so abandoned branches are
left out (counted in ``Session.metadata["source"]["abandoned_entries"]``).
Version 1 is linear; its entries get ids ``e<line>``.

Entries: ``message`` (roles ``user``, ``assistant`` with ``text`` /
``thinking`` / ``toolCall`` blocks, ``toolResult`` with ``toolCallId`` /
``toolName`` / ``isError``, ``bashExecution``, ``custom``), ``compaction``
(becomes a ``summary`` message plus an entry in
``Session.metadata["recorded_compactions"]``), ``branch_summary`` (a
``summary`` message), ``custom_message`` (a user message), and
``model_change`` / ``thinking_level_change`` / ``custom`` / ``label`` /
``session_info``, kept in ``Session.metadata["source"]["entries"]``. Each
assistant message records ``metadata["model"]`` and ``["provider"]`` (its
own, else the latest ``model_change``'s, else the header's) and its usage,
with ``usage["cost"]`` the cost Pi recorded (``usage.cost.total``, USD).
Version 1's ``firstKeptEntryIndex`` counts entries after the header, from 0.

This is an agent log, so damage is repaired and reported (``repairing``), not
refused: an exact repeat of a line is dropped, a line that is not a JSON
object is skipped, and an entry of a type (or a message of a role) this reader
does not know is skipped and named with its count. An entry reusing an earlier
entry's id with different content keeps a new id (``id_2``); a ``parentId``
then means the latest entry with that id written before the child (the first
one when none was).

>>> text = ('{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/w"}\\n'
...         '{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}')
>>> [(m.id, m.role) for m in loads(text).messages]
[('a', 'user')]
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Any, Iterable

from .common import MAX_REQUEST_COST
from ..model import Session
from .builder import SessionBuilder
from .common import (JsonObject, Probe, checked_usage, flatten_content, identity_by, parse_jsonl, unmapped,
                     with_source)

NAME = "pi"
ORDER = 50  # where --help and FORMATS list it
DESCRIPTION = "Pi coding-agent session JSONL, versions 1-3 (header line with type 'session')"
_NON_MESSAGE_ENTRIES = ("model_change", "thinking_level_change", "custom", "label", "session_info")
_MESSAGE_ENTRIES = ("message", "compaction", "branch_summary", "custom_message")
_identity = identity_by("id", "timestamp")


class _UnknownRole(Exception):
    """A message entry whose role this reader does not know (skipped and reported, not refused)."""


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.records:
        return 0.0
    head = probe.records[0]
    if isinstance(head, dict) and head.get("type") == "session" and "payload" not in head:
        return 1.0
    return 0.0


def _unique_ids(entries: list[tuple[int, JsonObject]], b: SessionBuilder) -> list[tuple[int, JsonObject]]:
    """``entries`` with every id unique and every ``parentId`` naming the entry it means.

    A repeated id gets a suffix (``a_2``); a ``parentId`` names the latest entry
    with that id written before the child, or the first one when none was.
    """
    originals: set[str] = set()
    for lineno, e in entries:
        b.line = lineno
        eid = e.get("id")
        if not isinstance(eid, str) or not eid:
            raise b.error("entry has no 'id' (version 2 and later need one)", "id")
        originals.add(eid)
    taken: set[str] = set()
    assigned: dict[str, list[tuple[int, str]]] = {}  # original id -> (line, unique id), in file order
    suffix: dict[str, int] = {}  # original id -> the next suffix to try
    renamed: list[tuple[int, JsonObject]] = []
    for lineno, e in entries:
        eid = e["id"]
        uid = eid
        if uid in taken:
            n = suffix.get(eid, 2)
            while f"{eid}_{n}" in taken or f"{eid}_{n}" in originals:
                n += 1
            suffix[eid] = n + 1
            uid = f"{eid}_{n}"
            first = assigned[eid][0][0]
            b.repairs.add("renamed_ids", lineno, example=f"{eid!r} -> {uid!r} (line {lineno}; first at line {first})")
            e = {**e, "id": uid, "original_id": eid}
        taken.add(uid)
        assigned.setdefault(eid, []).append((lineno, uid))
        renamed.append((lineno, e))
    out = []
    for lineno, e in renamed:
        parent = e.get("parentId")
        if isinstance(parent, str) and parent in assigned and len(assigned[parent]) > 1:
            written = assigned[parent]
            before = bisect_left(written, (lineno,))  # how many were written before this line
            e = {**e, "parentId": written[before - 1][1] if before else written[0][1]}
        out.append((lineno, e))
    return out


def _path(entries: list[tuple[int, JsonObject]], b: SessionBuilder) -> tuple[list[tuple[int, JsonObject]], int]:
    """The entries from the root to the last entry, and how many were left out."""
    by_id = {e["id"]: (lineno, e) for lineno, e in entries}
    if not entries:
        return [], 0
    path = []
    seen: set[str] = set()
    current: tuple[int, JsonObject] | None = entries[-1]
    while current is not None:
        lineno, e = current
        path.append(current)
        seen.add(e["id"])
        parent = e.get("parentId")
        if parent is None:
            break
        b.line = lineno
        if not isinstance(parent, str) or parent not in by_id:
            raise b.error(f"parentId {parent!r} names no entry in this file; fix the id or the tree", "parentId")
        if parent in seen:
            raise b.error(f"parentId {parent!r} makes a cycle; entries must form a tree", "parentId")
        current = by_id[parent]
    path.reverse()
    return path, len(entries) - len(path)


def _text(value: Any, b: SessionBuilder, where: str) -> tuple[str, list[Any]]:
    return flatten_content(value, file=b.file, where=where, line=b.line)



def pi_usage(b: SessionBuilder, u: JsonObject) -> dict[str, Any] | None:
    """``metadata["usage"]`` from a Pi ``usage`` object, with ``cost`` = ``usage.cost.total`` (USD)
    when recorded; a count or cost out of range drops the usage, reported."""
    recorded: dict[str, Any] | None = checked_usage(b, "message.usage", {
        "input": ("input", u.get("input")), "output": ("output", u.get("output")),
        "cache_read": ("cacheRead", u.get("cacheRead")), "cache_write": ("cacheWrite", u.get("cacheWrite"))})
    cost = u.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    if recorded is None or total is None:
        return recorded
    # The range first: a 400-digit integer cannot become a float for isfinite (OverflowError).
    if isinstance(total, bool) or not isinstance(total, (int, float)) or not (
            0 <= total <= MAX_REQUEST_COST and math.isfinite(total)):
        b.repairs.add("invalid_usage", b.line, example=f"message.usage.cost.total = {repr(total)[:40]}")
        return None
    recorded["cost"] = float(total)
    return recorded


def _message(b: SessionBuilder, eid: str, msg: Any, meta: dict[str, Any],
             current: dict[str, str] | None = None) -> None:
    """One message entry; ``current`` holds the model and provider in use (header, then ``model_change``)."""
    current = current or {}
    if not isinstance(msg, dict):
        raise b.error("field 'message' must be an object", "message")
    if "role" not in msg:
        raise b.error("message has no 'role'; expected user, assistant, toolResult or bashExecution",
                      "message")
    role = msg["role"]
    if role == "user":
        text, parts = _text(msg.get("content"), b, "message.content")
        extra = unmapped(msg, ("role", "content"))
        if parts:
            extra["content_parts"] = parts
        b.add(id=eid, role="user", content=text, where="message", metadata=with_source(meta, extra))
    elif role == "assistant":
        content = msg.get("content")
        if not isinstance(content, list):
            raise b.error("assistant 'content' must be a list of blocks", "message.content")
        extra = unmapped(msg, ("role", "content", "usage"))
        u = msg.get("usage")
        if isinstance(u, dict):
            recorded = pi_usage(b, u)
            if recorded is not None:
                meta["usage"] = recorded
            rest = unmapped(u, ("input", "output", "cacheRead", "cacheWrite"))
            if rest:
                extra["usage"] = rest
        for key in ("model", "provider"):
            if isinstance(msg.get(key), str) and msg[key]:
                meta[key] = msg[key]
            elif current.get(key):
                meta[key] = current[key]
        draft = b.add(id=eid, role="assistant", content="", where="message", metadata=with_source(meta, extra))
        for k, block in enumerate(content):
            where = f"message.content[{k}]"
            if not isinstance(block, dict):
                raise b.error("a content block must be an object", where)
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                draft.append_text(block["text"])
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                old = draft.metadata.get("thinking")
                draft.metadata["thinking"] = f"{old}\n{block['thinking']}" if old else block["thinking"]
            elif kind == "toolCall":
                b.add_call(draft, original_id=block.get("id"), name=block.get("name"),
                           arguments=block.get("arguments", {}), where=where)
            else:
                draft.metadata.setdefault("source", {}).setdefault("blocks", []).append(block)
    elif role == "toolResult":
        text, parts = _text(msg.get("content"), b, "message.content")
        extra = unmapped(msg, ("role", "content", "toolCallId", "toolName", "isError"))
        if parts:
            extra["content_parts"] = parts
        meta["is_error"] = bool(msg.get("isError", False))
        b.add_result(original_call_id=msg.get("toolCallId"), id=eid, content=text, where="message",
                     metadata=with_source(meta, extra), recorded_name=msg.get("toolName"))
    elif role == "bashExecution":  # a command the user ran with '!'; Pi shows it to the model as user text
        command, output = msg.get("command", ""), msg.get("output", "")
        extra = unmapped(msg, ("role", "command", "output"))
        extra["role"] = role
        b.add(id=eid, role="user", content=f"Ran `{command}`\n{output}", where="message",
              metadata=with_source(meta, extra))
    elif role in ("custom", "hookMessage"):
        text, parts = _text(msg.get("content"), b, "message.content")
        extra = unmapped(msg, ("content",))
        b.add(id=eid, role="user", content=text, where="message", metadata=with_source(meta, extra))
    elif role in ("branchSummary", "compactionSummary"):
        extra = unmapped(msg, ("summary",))
        meta["kind"] = "branch_summary" if role == "branchSummary" else "compaction"
        b.add(id=eid, role="summary", content=str(msg.get("summary", "")), where="message",
              metadata=with_source(meta, extra))
    else:
        raise _UnknownRole(role)


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    parsed = parse_jsonl(text, file=file, skip_bad_lines=skip_bad_lines, identity=_identity)
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools, lenient=True,
                       repairs=parsed.repairs)
    if not parsed.records or parsed.records[0][1].get("type") != "session":
        b.line = parsed.records[0][0] if parsed.records else None
        raise b.error("the first line must be the session header with \"type\": \"session\"")
    header_line, header = parsed.records[0]
    version = header.get("version", 1)
    if version not in (1, 2, 3):
        b.line = header_line
        raise b.error(f"unsupported session version {version!r}; this reader knows versions 1 to 3", "version")
    entries = list(parsed.records[1:])
    if version == 1:
        entries = [(n, {**e, "id": e.get("id") or f"e{n}"}) for n, e in entries]
        path, abandoned = entries, 0
    else:
        entries = _unique_ids(entries, b)
        path, abandoned = _path(entries, b)
    first_draft: dict[str, int] = {}  # entry id -> index of the first message at or after it
    compactions: list[dict[str, Any]] = []
    kept_entries: list[dict[str, Any]] = []
    name = ""
    current = {key: header[field] for key, field in (("model", "modelId"), ("provider", "provider"))
               if isinstance(header.get(field), str) and header[field]}
    for lineno, e in path:
        b.line = lineno
        eid, kind = e["id"], e.get("type")
        first_draft[eid] = len(b.drafts)
        meta: dict[str, Any] = {}
        if isinstance(e.get("timestamp"), str):
            meta["timestamp"] = e["timestamp"]
        if kind == "message":
            try:
                _message(b, eid, e.get("message"), meta, current)
            except _UnknownRole as unknown:
                role = unknown.args[0]
                b.repairs.add("unknown_entries", lineno, type=f"message with role {role!r}"[:60])
                kept_entries.append({"line": lineno, **e})
                continue
            extra = unmapped(e, ("type", "id", "parentId", "timestamp", "message"))
            if extra:
                b.drafts[-1].metadata.setdefault("source", {}).update({"entry": extra})
        elif kind == "compaction":
            first_kept = e.get("firstKeptEntryId")
            if first_kept is None and isinstance(e.get("firstKeptEntryIndex"), int):
                idx = e["firstKeptEntryIndex"]
                first_kept = entries[idx][1]["id"] if 0 <= idx < len(entries) else None
            position = len(b.drafts)
            extra = unmapped(e, ("type", "id", "parentId", "timestamp", "summary"))
            b.add(id=eid, role="summary", content=str(e.get("summary", "")), where="summary",
                  metadata=with_source({**meta, "kind": "compaction"}, extra))
            compactions.append({"entry_id": eid, "summary": str(e.get("summary", "")),
                                "first_kept_entry_id": first_kept, "tokens_before": e.get("tokensBefore"),
                                "position_index": position})
        elif kind == "branch_summary":
            extra = unmapped(e, ("type", "id", "parentId", "timestamp", "summary"))
            b.add(id=eid, role="summary", content=str(e.get("summary", "")), where="summary",
                  metadata=with_source({**meta, "kind": "branch_summary"}, extra))
        elif kind == "custom_message":
            text_, parts = _text(e.get("content"), b, "content")
            extra = unmapped(e, ("type", "id", "parentId", "timestamp", "content"))
            b.add(id=eid, role="user", content=text_, where="content",
                  metadata=with_source({**meta, "kind": "custom_message"}, extra))
        else:
            if kind == "model_change" and isinstance(e.get("modelId"), str) and e["modelId"]:
                current = {"model": e["modelId"], **({"provider": e["provider"]}
                                                     if isinstance(e.get("provider"), str) and e["provider"] else {})}
            if kind == "session_info" and isinstance(e.get("name"), str):
                name = e["name"]
            if kind not in _NON_MESSAGE_ENTRIES:  # kept in metadata, but not part of the conversation: say so
                b.repairs.add("unknown_entries", lineno, type=repr(kind)[:60])
            kept_entries.append({"line": lineno, **e})
    b.line = None
    for c in compactions:  # resolve the first kept entry to a message position
        fk = c.pop("first_kept_entry_id")
        idx = first_draft.get(fk) if fk is not None else None
        c["first_kept_index"] = idx if idx is not None and idx < len(b.drafts) else None
        c["first_kept_message_id"] = b.drafts[idx].id if idx is not None and c["first_kept_index"] is not None \
            else None
    source: dict[str, Any] = {"header": header, "version": version}
    if kept_entries:
        source["entries"] = kept_entries
    if abandoned:
        source["abandoned_entries"] = abandoned
    metadata: dict[str, Any] = {"source": source}
    if compactions:
        metadata["recorded_compactions"] = [
            {k: c[k] for k in ("entry_id", "summary", "first_kept_message_id", "first_kept_index",
                               "tokens_before", "position_index")} for c in compactions]
    if parsed.skipped:
        metadata["skipped_bad_lines"] = parsed.skipped
    return b.build(name=name or str(header.get("id") or ""), metadata=metadata)
