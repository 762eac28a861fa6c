"""Claude Code session JSONL (``~/.claude/projects/<dir>/<session>.jsonl``).

One entry per line with ``type``, ``uuid``, ``parentUuid``, ``message``,
``isSidechain``, ``timestamp``. Claude Code writes one assistant reply as
several lines, one per content block, sharing ``message.id``: they are merged
into one message (usage from the last line). ``user`` lines made of
``tool_result`` blocks are tool results, not user turns. ``summary``,
``file-history-snapshot`` and the other metadata lines Claude Code writes
(``METADATA_TYPES``) are skipped (counted in
``Session.metadata["source"]["skipped_entries"]``), as are sidechain
(sub-agent) lines. A compaction (a ``compact_boundary`` system line followed
by the ``isCompactSummary`` user line) becomes a ``summary`` message and a
recorded compaction.

This is an agent log, written line by line, so damage is repaired and
reported (``_repairs``), not refused: an exact repeat of a line (Claude Code
writes some lines more than once) is dropped, a line that is not a JSON
object is skipped, a line reusing a ``uuid`` with different content keeps a
new id, and a line of a type this reader does not know (``"User"``,
``"human"``) is skipped and named, with its count.

>>> line = ('{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,'
...         '"sessionId":"s","message":{"role":"user","content":"hi"}}')
>>> [(m.id, m.role) for m in loads(line).messages]
[('u1', 'user')]
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from ..model import Session
from ._builder import Draft, SessionBuilder
from ._common import Probe, identity_by, parse_jsonl, unmapped
from .anthropic import add_assistant_blocks, add_user_blocks, anthropic_usage

NAME = "claude_code"
ORDER = 40  # where --help and FORMATS list it
DESCRIPTION = "Claude Code session JSONL (one entry per line with uuid / parentUuid / message)"
_ENTRY_FIELDS = ("type", "uuid", "parentUuid", "message", "isSidechain", "timestamp", "toolUseResult",
                 "sessionId", "cwd", "version", "gitBranch", "userType", "requestId", "isMeta",
                 "isCompactSummary", "isVisibleInTranscriptOnly", "slug")
# Kept once per session rather than on every message: they rarely change.
_SESSION_FIELDS = ("sessionId", "cwd", "version", "gitBranch", "userType", "slug")
#: Line types Claude Code writes that are not conversation messages (skipped and counted).
METADATA_TYPES = ("summary", "file-history-snapshot", "system", "queue-operation", "progress")
#: What makes a line "the same line": its uuid (messages), leafUuid (summaries) or messageId (snapshots).
_identity = identity_by("uuid", "leafUuid", "messageId")


def detect(text: str, probe: Probe | None) -> float:
    if probe is None:
        return 0.0
    recs = [r for r in probe.records if isinstance(r, dict)]
    hits = sum(1 for r in recs if "uuid" in r and ("parentUuid" in r or "sessionId" in r)
               or (r.get("type") == "summary" and "leafUuid" in r))
    return 1.0 if recs and hits >= max(1, len(recs) // 2) else 0.0


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    parsed = parse_jsonl(text, file=file, skip_bad_lines=skip_bad_lines, identity=_identity)
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools, lenient=True,
                       repairs=parsed.repairs)
    skipped: Counter[str] = Counter()
    by_message_id: dict[str, Draft] = {}
    session_info: dict[str, Any] = {}
    compactions: list[dict[str, Any]] = []
    boundary: dict[str, Any] | None = None
    for lineno, entry in parsed.records:
        b.line = lineno
        kind = entry.get("type")
        for key in _SESSION_FIELDS:
            if key in entry and key not in session_info:
                session_info[key] = entry[key]
        if entry.get("isSidechain"):
            skipped["sidechain"] += 1
            continue
        if kind == "system" and entry.get("subtype") == "compact_boundary":
            boundary = entry
            continue
        if kind in METADATA_TYPES:
            skipped[str(kind)] += 1
            continue
        if kind not in ("user", "assistant") or not isinstance(entry.get("message"), dict):
            # Not a line this reader knows: say so (it may be a real message with a mangled type).
            label = f"{kind!r} without a 'message' object" if kind in ("user", "assistant") else repr(kind)[:60]
            b.repairs.add("unknown_entries", lineno, type=label)
            continue
        uuid = entry.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            raise b.error("entry has no 'uuid'; every user/assistant line needs one", "uuid")
        msg = entry["message"]
        meta: dict[str, Any] = {}
        if isinstance(entry.get("timestamp"), str):
            meta["timestamp"] = entry["timestamp"]
        extra = unmapped(entry, _ENTRY_FIELDS)
        for flag in ("isMeta", "requestId", "parentUuid"):
            if entry.get(flag) is not None:
                extra[flag] = entry[flag]
        msg_extra = unmapped(msg, ("role", "content", "usage", "id", "type"))
        if msg_extra:
            extra["message"] = msg_extra
        if kind == "assistant":
            mid = msg.get("id")
            draft = by_message_id.get(mid) if isinstance(mid, str) else None
            if draft is None:
                if extra:
                    meta["source"] = extra
                if isinstance(mid, str):
                    meta.setdefault("source", {})["message_id"] = mid
                draft = b.add(id=uuid, role="assistant", content="", where="message", metadata=meta)
                if isinstance(mid, str):
                    by_message_id[mid] = draft
            else:  # a later block of the same reply
                draft.metadata.setdefault("source", {}).setdefault("merged_uuids", []).append(uuid)
            if anthropic_usage(msg.get("usage")):
                draft.metadata["usage"] = anthropic_usage(msg.get("usage"))
            add_assistant_blocks(b, draft, msg.get("content"), "message")
            continue
        if entry.get("isCompactSummary"):
            text = msg.get("content")
            summary = text if isinstance(text, str) else "\n".join(
                str(bl.get("text", "")) for bl in (text if isinstance(text, list) else []) if isinstance(bl, dict))
            position = len(b.drafts)
            b.add(id=uuid, role="summary", content=summary, where="message",
                  metadata={**meta, "kind": "compaction", "source": extra} if extra else
                  {**meta, "kind": "compaction"})
            cmeta = (boundary or {}).get("compactMetadata") or {}
            compactions.append({"entry_id": (boundary or {}).get("uuid"), "summary": summary,
                                "first_kept_message_id": None, "first_kept_index": None,
                                "tokens_before": cmeta.get("preTokens"), "position_index": position})
            boundary = None
            continue
        result_meta = {k: v for k, v in meta.items()}
        if "toolUseResult" in entry:
            result_meta["source"] = {"toolUseResult": entry["toolUseResult"]}
        add_user_blocks(b, msg.get("content"), id=uuid, where="message",
                        metadata={**meta, **({"source": extra} if extra else {})}, result_metadata=result_meta)
    b.line = None
    source: dict[str, Any] = dict(session_info)
    if skipped:
        source["skipped_entries"] = dict(sorted(skipped.items()))
    metadata: dict[str, Any] = {"source": source} if source else {}
    if compactions:
        metadata["recorded_compactions"] = compactions
    if parsed.skipped:
        metadata["skipped_bad_lines"] = parsed.skipped
    return b.build(name=str(session_info.get("sessionId") or ""), metadata=metadata)
