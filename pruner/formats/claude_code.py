"""Claude Code session JSONL (``~/.claude/projects/<dir>/<session>.jsonl``).

One entry per line with ``type``, ``uuid``, ``parentUuid``, ``message``,
``isSidechain``, ``timestamp``. Lines are read in the conversation's own
order (``parentUuid`` links; see ``_claude_chains``), which is the file order
unless the writer put a line before its parent. Claude Code writes one
assistant reply (one model request) as several lines, one per content block,
sharing ``message.id`` / ``requestId``, possibly interleaved with other lines:
they are merged into one message whose usage is the last line's (``output``
grows line by line). Each assistant message records ``metadata["model"]``,
``metadata["request_id"]`` (``requestId``, else ``message.id``) and its usage,
with ``cache_write_1h`` from ``cache_creation.ephemeral_1h_input_tokens``;
a ``<synthetic>`` reply (no model made it) is ``metadata["synthetic"]`` and
is not a request. ``user`` lines made of ``tool_result`` blocks are tool
results, not user turns.

Sidechain lines (``isSidechain: true``) are the conversations of subagents
(the Task tool's): each becomes one ``Session`` in ``Session.subagents``,
grouped by the ``agentId`` a line records, else by the sidechain's root;
``metadata["chain"]`` is that id and ``metadata["parent_call"]`` the main
chain's Task call that started it, when it can be found. A file whose every
line is a sidechain (a subagent's own file) is one conversation, recorded as
such in ``metadata["subagent_file"]``. ``load_session`` also reads the
subagent files Claude Code keeps beside a session (``_subagent_files``).

``summary`` lines (session titles), ``file-history-snapshot`` and the other
metadata lines Claude Code writes (``METADATA_TYPES``) are skipped (counted in
``Session.metadata["source"]["skipped_entries"]``). A compaction (a
``compact_boundary`` system line followed by the ``isCompactSummary`` user
line) becomes a ``summary`` message and a recorded compaction.

This is an agent log, written line by line, so damage is repaired and
reported (``repairing``), not refused: an exact repeat of a line (Claude Code
writes some lines more than once) is dropped, a line that is not a JSON
object is skipped, a line reusing a ``uuid`` with different content keeps a
new id, a line of a type this reader does not know (``"User"``, ``"human"``)
is skipped and named, a usage that is not a token count is dropped, a plain
string in a content list is text, and a line timed before the line it follows
takes that line's time (so no gap between requests is negative).

>>> line = ('{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,'
...         '"sessionId":"s","message":{"role":"user","content":"hi"}}')
>>> [(m.id, m.role) for m in loads(line).messages]
[('u1', 'user')]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime
from typing import Any, Iterable

from ..model import Session
from .builder import Draft, SessionBuilder
from ._claude_chains import link_order, parent_calls, split_chains
from .common import JsonObject, Probe, identity_by, parse_jsonl, unmapped
from .repairing import Repairs
from .anthropic import add_assistant_blocks, add_user_blocks, anthropic_usage

NAME = "claude_code"
ORDER = 40  # where --help and FORMATS list it
DESCRIPTION = "Claude Code session JSONL (one entry per line with uuid / parentUuid / message)"
_ENTRY_FIELDS = ("type", "uuid", "parentUuid", "message", "isSidechain", "timestamp", "toolUseResult",
                 "sessionId", "cwd", "version", "gitBranch", "userType", "requestId", "isMeta",
                 "isCompactSummary", "isVisibleInTranscriptOnly", "slug", "agentId")
# Kept once per session rather than on every message: they rarely change.
_SESSION_FIELDS = ("sessionId", "cwd", "version", "gitBranch", "userType", "slug")
#: The model name Claude Code writes on replies no model produced (an interruption notice, an API error).
SYNTHETIC_MODEL = "<synthetic>"
#: Line types Claude Code writes that are not conversation messages (skipped and counted).
METADATA_TYPES = ("summary", "file-history-snapshot", "system", "queue-operation", "progress")
#: What makes a line "the same line": its uuid (messages), leafUuid (summaries) or messageId (snapshots).
_identity = identity_by("uuid", "leafUuid", "messageId")


def detect(text: str, probe: Probe | None) -> float:
    if probe is None:
        return 0.0
    recs = [r for r in probe.records if isinstance(r, dict)]
    if any(isinstance(r.get("message"), dict) and "parts" in r["message"] for r in recs):
        return 0.0  # an API Content (role and parts): Qwen Code's records, which are otherwise alike
    hits = sum(1 for r in recs if "uuid" in r and ("parentUuid" in r or "sessionId" in r)
               or (r.get("type") == "summary" and "leafUuid" in r))
    return 1.0 if recs and hits >= max(1, len(recs) // 2) else 0.0


def _seconds(stamp: str) -> float | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


#: Claude Code writes the lines of one step a few milliseconds apart, not always in order: a step back
#: this small still takes the earlier time (no gap is negative) but is not worth a repair notice.
_JITTER_SECONDS = 1.0


class _Clock:
    """A chain's time so far: a line timed before the line it follows takes that line's time."""

    def __init__(self, repairs: Repairs) -> None:
        self.repairs = repairs
        self.last: tuple[float, str] | None = None

    def stamp(self, entry: JsonObject, lineno: int, meta: dict[str, Any]) -> None:
        stamp = entry.get("timestamp")
        if not isinstance(stamp, str):
            return
        meta["timestamp"] = stamp
        seconds = _seconds(stamp)
        if seconds is None:
            return
        if self.last is not None and seconds < self.last[0]:
            if self.last[0] - seconds > _JITTER_SECONDS:
                self.repairs.add("timestamps_out_of_order", lineno)
            meta["timestamp"] = self.last[1]
            meta.setdefault("source", {})["recorded_timestamp"] = stamp
            return
        self.last = (seconds, stamp)


def reply_key(entry: JsonObject, msg: JsonObject) -> Any:
    """What joins the lines of one reply: the message id, else the request id (Claude Code writes one
    line per content block, all with the same ids)."""
    mid = msg.get("id")
    rid = entry.get("requestId") if isinstance(entry.get("requestId"), str) and entry["requestId"] else mid
    return mid if isinstance(mid, str) and mid else rid


def add_reply_identity(entry: JsonObject, msg: JsonObject, meta: dict[str, Any]) -> None:
    """A new reply's model and request id into ``meta``; a synthetic reply (Claude Code's own, no
    model call) is marked and gets no request id, so it is never billed."""
    model = msg.get("model")
    if model == SYNTHETIC_MODEL:
        meta["synthetic"] = True
    elif isinstance(model, str) and model:
        meta["model"] = model
    mid = msg.get("id")
    rid = entry.get("requestId") if isinstance(entry.get("requestId"), str) and entry["requestId"] else mid
    if isinstance(rid, str) and rid and not meta.get("synthetic"):
        meta["request_id"] = rid


def _assistant(b: SessionBuilder, entry: JsonObject, msg: JsonObject, uuid: str, meta: dict[str, Any],
               extra: dict[str, Any],
               by_request: dict[str, Draft], bad_usage: set[int]) -> None:
    """One line of a reply: a new assistant message, or the next block of one already started."""
    key = reply_key(entry, msg)
    draft = by_request.get(key) if isinstance(key, str) else None
    if draft is None:
        if extra:
            meta["source"] = {**meta.get("source", {}), **extra}
        if isinstance(msg.get("id"), str):
            meta.setdefault("source", {})["message_id"] = msg["id"]
        add_reply_identity(entry, msg, meta)
        draft = b.add(id=uuid, role="assistant", content="", where="message", metadata=meta)
        if isinstance(key, str):
            by_request[key] = draft
    else:  # a later block of the same reply
        draft.metadata.setdefault("source", {}).setdefault("merged_uuids", []).append(uuid)
    if "usage" in msg and id(draft) not in bad_usage:
        recorded = anthropic_usage(b, msg.get("usage"), "message")
        if recorded is None and isinstance(msg.get("usage"), dict):  # damaged: this reply has no usage
            bad_usage.add(id(draft))
            draft.metadata.pop("usage", None)
        elif recorded:
            draft.metadata["usage"] = recorded  # the last line's: output grows until the reply ends
    add_assistant_blocks(b, draft, msg.get("content"), "message")


def _read_chain(records: list[tuple[int, JsonObject]], b: SessionBuilder,
                skipped: Counter[str]) -> list[dict[str, Any]]:
    """Add one conversation's lines to ``b``; the recorded compactions found."""
    by_request: dict[str, Draft] = {}
    bad_usage: set[int] = set()
    compactions: list[dict[str, Any]] = []
    boundary: dict[str, Any] | None = None
    clock = _Clock(b.repairs)
    for lineno, entry in records:
        b.line = lineno
        kind = entry.get("type")
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
        clock.stamp(entry, lineno, meta)
        extra = unmapped(entry, _ENTRY_FIELDS)
        for flag in ("isMeta", "requestId", "parentUuid"):
            if entry.get(flag) is not None:
                extra[flag] = entry[flag]
        msg_extra = unmapped(msg, ("role", "content", "usage", "id", "type", "model"))
        if msg_extra:
            extra["message"] = msg_extra
        if kind == "assistant":
            _assistant(b, entry, msg, uuid, meta, extra, by_request, bad_usage)
            continue
        if entry.get("isCompactSummary"):
            text = msg.get("content")
            summary = text if isinstance(text, str) else "\n".join(
                str(bl.get("text", "")) if isinstance(bl, dict) else str(bl)
                for bl in (text if isinstance(text, list) else []))
            position = len(b.drafts)
            b.add(id=uuid, role="summary", content=summary, where="message",
                  metadata={**meta, "kind": "compaction", "source": {**meta.get("source", {}), **extra}} if extra
                  else {**meta, "kind": "compaction"})
            cmeta = (boundary or {}).get("compactMetadata") or {}
            compactions.append({"entry_id": (boundary or {}).get("uuid"), "summary": summary,
                                "first_kept_message_id": None, "first_kept_index": None,
                                "tokens_before": cmeta.get("preTokens"), "position_index": position})
            boundary = None
            continue
        result_meta = {k: v for k, v in meta.items()}
        if "toolUseResult" in entry:
            result_meta["source"] = {**meta.get("source", {}), "toolUseResult": entry["toolUseResult"]}
        user_meta = {**meta, "source": {**meta.get("source", {}), **extra}} if extra else meta
        add_user_blocks(b, msg.get("content"), id=uuid, where="message", metadata=user_meta,
                        result_metadata=result_meta)
    b.line = None
    return compactions


def _first_user_text(session: Session) -> str | None:
    return next((m.content for m in session.messages if m.role == "user"), None)


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    parsed = parse_jsonl(text, file=file, skip_bad_lines=skip_bad_lines, identity=_identity)
    records = link_order(parsed.records)
    main_records, groups = split_chains(records)
    session_info: dict[str, Any] = {}
    for _, entry in records:
        for key in _SESSION_FIELDS:
            if key in entry and key not in session_info:
                session_info[key] = entry[key]
    skipped: Counter[str] = Counter()
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools, lenient=True,
                       repairs=parsed.repairs)
    compactions = _read_chain(main_records, b, skipped)
    subagents: list[Session] = []
    found: list[tuple[str, str | None, Any]] = []
    for chain, chain_records in groups:
        sub_repairs = Repairs()
        sb = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools, lenient=True,
                            repairs=sub_repairs)
        sub_compactions = _read_chain(chain_records, sb, skipped)
        agent = next((e["agentId"] for _, e in chain_records if isinstance(e.get("agentId"), str)), None)
        meta: dict[str, Any] = {"chain": chain, **({"agent_id": agent} if agent else {})}
        if sub_compactions:
            meta["recorded_compactions"] = sub_compactions
        sub = sb.build(name=chain, metadata=meta)
        sub = replace(sub, metadata={k: v for k, v in sub.metadata.items() if k != "repairs"})
        b.repairs.absorb(sub_repairs)  # reported once, with the file's
        subagents.append(sub)
        found.append((chain, agent, _first_user_text(sub)))
    calls = parent_calls(tuple(b.drafts), found)
    subagents = [replace(s, metadata={**s.metadata, "parent_call": calls[s.name]}) if s.name in calls else s
                 for s in subagents]
    source: dict[str, Any] = dict(session_info)
    if skipped:
        source["skipped_entries"] = dict(sorted(skipped.items()))
    metadata: dict[str, Any] = {"source": source} if source else {}
    if not groups and any(e.get("isSidechain") for _, e in main_records):
        agent = next((e["agentId"] for _, e in main_records if isinstance(e.get("agentId"), str)), None)
        metadata["subagent_file"] = {"agent_id": agent} if agent else {}
    if compactions:
        metadata["recorded_compactions"] = compactions
    if parsed.skipped:
        metadata["skipped_bad_lines"] = parsed.skipped
    return b.build(name=str(session_info.get("sessionId") or ""), metadata=metadata, subagents=subagents)
