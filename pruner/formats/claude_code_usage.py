"""Claude Code, read for the bill and the cache ledger only: the conversation's skeleton, not its text.

``pruner logs`` without strategies needs, per request, its model, usage,
request id, chain and time, and of the messages between requests only what
the cache ledger looks at (role, whether a message has text and how many tool
calls it makes, whether it is a tool result, its time). ``read_usage`` reads
exactly that from a Claude Code file: the same lines, in the same order, into
the same chains and message positions as ``claude_code.loads`` (it calls that
reader's own line ordering, chain split and usage check), but each message's
content is ``"x"`` or ``""`` and each tool call a placeholder, so nothing is
flattened, parsed as arguments or tokenised. ``pruner.replay.bill``,
``pruner.replay.ledger`` and ``pruner.logs.row.session_facts`` then run on it
unchanged, and give what they give on the whole session
(``tests/unit/logs/test_logs_usage_reader.py`` checks it on every shared real file).

Where the full reader would do something this one does not model, it returns
``None`` and the caller reads the file the full way: a file the format
detection does not call Claude Code, subagent files beside the session, a
file over the size limit, a line only the strict JSON reader takes (a lone
surrogate escape, which the full reader repairs), a file the full reader does
not take as text (``check_text_bytes``: a NUL byte near its start, UTF-16,
empty), a line the full reader would refuse (no ``uuid``, a content that is not text or blocks, a tool call
without id or name, a result answering no call), a repeated message id, a
session that records no ``cwd``. So a damaged file gets the full reader's
error, never a different answer. Recorded compactions are read (their
positions; the summary's text is not kept).

JSON: each line is decoded by msgspec, and any line msgspec refuses is read
by the strict standard-library reader (``pruner.jsonio.loads_json``), which
decides. msgspec accepts no more than that reader does (no NaN or Infinity,
no float that overflows, no integer over 4,300 digits, no control character
in a string) and gives the same values (exact integers; a repeated key keeps
its last value, as the standard library does): see
``tests/unit/logs/test_logs_usage_reader.py``'s property test.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any, Callable

import msgspec

from ..files import read_limited
from ..jsonio import JsonProblem, loads_json
from ..model import FIRST_SECOND, LAST_SECOND, MAIN_CHAIN, Message, Session, ToolCall
from .builder import SessionBuilder
from ._claude_chains import link_order, split_chains
from .common import JsonObject, identity_by
from .repairing import Repairs
from .anthropic import anthropic_usage
from .claude_code import _SESSION_FIELDS, METADATA_TYPES, NAME, _seconds, add_reply_identity, reply_key

_decode: Callable[[bytes], Any] = msgspec.json.Decoder().decode
#: How Claude Code starts a ``file-history-snapshot`` line: its backups of the files an edit touched, often
#: most of a file's bytes (ccusage#873: a 734 MB file of them), none of it read by the bill.
_SNAPSHOT = b'{"type":"file-history-snapshot"'
#: The fields of a snapshot line any reading here looks at: a snapshot is kept as these alone.
_SNAPSHOT_KEYS = ("type", "messageId", "uuid", "leafUuid", "parentUuid", "isSidechain", "agentId", "prompt",
                  "source", "toolUseResult", "timestamp", "subtype", "message", "sessionId", "cwd", "version",
                  "gitBranch", "userType", "slug")


def _decode_line(line: bytes) -> Any:
    """A line as ``_decode`` gives it, a snapshot line (found by its first bytes) as the fields read of it:
    its backups are decoded (msgspec's generic decoder, ~1 GB/s, checks them as the strict reader does)
    but not kept, so a snapshot-heavy file costs the memory of its conversation, not of its backups."""
    obj = _decode(line)
    if line.startswith(_SNAPSHOT) and type(obj) is dict:
        return {k: obj[k] for k in _SNAPSHOT_KEYS if k in obj}
    return obj


_identity = identity_by("uuid", "leafUuid", "messageId")
_CALL = ToolCall(id="call", name="tool", arguments={})  # a placeholder: only the number of calls is read
__all__ = ["loads_line", "read_usage"]


class _Unsupported(Exception):
    """Something only the full reader handles (or refuses) the way it should."""


def loads_line(line: bytes) -> Any:
    """One JSON line: msgspec, and where it refuses, the strict reader (``JsonProblem``; a line that is
    not UTF-8 raises ``UnicodeDecodeError``, and the file goes to the full reader, which names it)."""
    try:
        return _decode(line)
    except Exception:  # msgspec's DecodeError / ValidationError / RecursionError: the strict reader decides
        return loads_json(line.decode("utf-8"))


def _records(data: bytes, repairs: Repairs) -> list[tuple[int, JsonObject]]:
    """``parse_jsonl`` for an agent log: objects only, a line repeated exactly (same identity) dropped;
    a line that is not a JSON object is recorded in ``repairs`` as the full reader records it.

    On bytes: the lines ``str.split("\\n")`` gives are the same, and a line that parses has only
    JSON whitespace at its ends, which ``bytes.strip`` and ``str.strip`` both remove."""
    out = []
    seen: set[tuple[Any, bytes]] = set()
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            obj = _decode_line(line)
        except Exception:
            try:
                loads_json(raw.decode("utf-8"))
            except (JsonProblem, RecursionError):
                if raw.decode("utf-8").strip():  # (a line of Unicode spaces only is blank to it, and not counted)
                    repairs.add("skipped_lines", lineno)
                continue  # not JSON to the strict reader either: the full reader skips it too (a repair)
            # The strict reader takes what msgspec refuses (a lone surrogate, which the full reader
            # repairs; nesting deeper than msgspec's limit): the full reader reads this file.
            raise _Unsupported() from None
        if not isinstance(obj, dict):
            repairs.add("skipped_lines", lineno)
            continue
        key = _identity(obj)
        if key is not None:
            entry = (key, line)
            if entry in seen:
                continue
            seen.add(entry)
        out.append((lineno, obj))
    return out


def _detected(data: bytes, file: str) -> str | None:
    """``detect_format`` of the file, looking at its first lines only when that is the same answer:
    detection of a JSONL file reads its first 50 lines (and ``native`` its first 200 characters)."""
    from . import detect_format

    head = data.lstrip()
    pieces = head.split(b"\n", 51)
    try:
        if len(pieces) == 52 and any(p.strip() for p in pieces[1:51]) and isinstance(loads_line(pieces[0]), dict):
            short = b"\n".join(pieces[:51])
            if len(short) >= 1000:
                return detect_format(short.decode("utf-8"), file=file)
        return detect_format(data.decode("utf-8"), file=file)
    except Exception:
        return None


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if not isinstance(content, list):
        raise _Unsupported()
    out = [{"type": "text", "text": b} if isinstance(b, str) else b for b in content]
    if not all(isinstance(b, dict) for b in out):
        raise _Unsupported()
    return out


class _Reply:
    """An assistant message being assembled from its lines (as ``_builder.Draft``, without the text)."""

    __slots__ = ("id", "meta", "text", "calls")

    def __init__(self, id: str, meta: dict[str, Any]):
        self.id, self.meta, self.text, self.calls = id, meta, False, 0


def _chain(records: list[tuple[int, JsonObject]], b: SessionBuilder) -> tuple[list[Message], list[dict[str, Any]]]:
    """``claude_code._read_chain``, message for message, keeping only what the bill and ledger read:
    the messages and the recorded compactions (their positions; the summary's text is not kept)."""
    out: list[Any] = []  # Message, or _Reply until the end
    compactions: list[dict[str, Any]] = []
    ids: set[str] = set()  # message ids, as the builder gives them (a repeated one would be renamed)
    by_key: dict[str, _Reply] = {}
    bad_usage: set[int] = set()
    calls: Counter[str] = Counter()  # original call id -> calls made
    answered: Counter[str] = Counter()  # original call id -> results linked to one of them
    last: tuple[float, str] | None = None
    for lineno, entry in records:
        b.line = lineno
        kind = entry.get("type")
        if kind == "system" and entry.get("subtype") == "compact_boundary":
            continue  # what the summary line after it records; its metadata is not read here
        if kind in METADATA_TYPES:
            continue
        msg = entry.get("message")
        if kind not in ("user", "assistant") or not isinstance(msg, dict):
            continue
        uuid = entry.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            raise _Unsupported()
        if uuid in ids and not (kind == "assistant" and _continues(entry, by_key)):
            raise _Unsupported()  # the builder renames it; the ledger names messages by id
        ids.add(uuid)
        meta: dict[str, Any] = {}
        stamp = entry.get("timestamp")
        if isinstance(stamp, str):  # claude_code._Clock: a line timed before the one it follows takes its time
            meta["timestamp"] = stamp
            seconds = _seconds(stamp)
            if seconds is not None and not FIRST_SECOND <= seconds <= LAST_SECOND:
                raise _Unsupported()  # a time outside the calendar: the full reader reports it (invalid_time)
            if seconds is not None:
                if last is not None and seconds < last[0]:
                    meta["timestamp"] = last[1]
                else:
                    last = (seconds, stamp)
        if kind == "assistant":
            _assistant(entry, msg, meta, b, out, by_key, bad_usage, calls)
            continue
        if entry.get("isCompactSummary"):
            compactions.append({"entry_id": None, "summary": "x", "first_kept_message_id": None,
                                "first_kept_index": None, "tokens_before": None, "position_index": len(out)})
            out.append(Message(id=uuid, role="summary", content="x", metadata={**meta, "kind": "compaction"}))
            continue
        blocks = _blocks(msg.get("content"))
        texts = False
        for block in blocks:
            if block.get("type") == "tool_result":
                _check_result(block, calls)
                original = block["tool_use_id"]
                linked = answered[original] < calls[original]
                answered[original] += linked
                out.append(Message(id=uuid, role="tool", content="x", tool_call_id="call" if linked else None,
                                   metadata=dict(meta)))
            else:
                texts = True
        if texts or not blocks:
            out.append(Message(id=uuid, role="user", content="x", metadata=meta))
    return [Message(id=m.id, role="assistant", content="x" if m.text else "", tool_calls=(_CALL,) * m.calls,
                    metadata=m.meta) if isinstance(m, _Reply) else m for m in out], compactions


def _continues(entry: JsonObject, by_key: dict[str, _Reply]) -> bool:
    """Whether an assistant line is a later block of a reply already started (no new message)."""
    msg = entry["message"]
    mid = msg.get("id")
    rid = entry.get("requestId") if isinstance(entry.get("requestId"), str) and entry["requestId"] else mid
    key = mid if isinstance(mid, str) and mid else rid
    return isinstance(key, str) and key in by_key


def _check_result(block: JsonObject, calls: Counter[str]) -> None:
    content = block.get("content")
    if content is not None and not isinstance(content, str) and not (
            isinstance(content, list) and all(isinstance(p, (str, dict)) for p in content)):
        raise _Unsupported()  # flatten_content refuses it
    original = block.get("tool_use_id")
    if not isinstance(original, str) or not original or original not in calls:
        raise _Unsupported()  # the builder refuses a result that answers no call


def _assistant(entry: JsonObject, msg: JsonObject, meta: dict[str, Any], b: SessionBuilder, out: list[Any],
               by_key: dict[str, _Reply], bad_usage: set[int], calls: Counter[str]) -> None:
    """``claude_code._assistant``: a new reply, or the next block of one already started."""
    key = reply_key(entry, msg)
    reply = by_key.get(key) if isinstance(key, str) else None
    if reply is None:
        add_reply_identity(entry, msg, meta)
        reply = _Reply(entry["uuid"], meta)
        out.append(reply)
        if isinstance(key, str):
            by_key[key] = reply
    if "usage" in msg and id(reply) not in bad_usage:
        recorded = anthropic_usage(b, msg.get("usage"), "message")
        if recorded is None and isinstance(msg.get("usage"), dict):
            bad_usage.add(id(reply))
            reply.meta.pop("usage", None)
        elif recorded:
            reply.meta["usage"] = recorded
    for block in _blocks(msg.get("content")):  # anthropic.add_assistant_blocks: what makes text, what a call
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            reply.text = reply.text or bool(block["text"])
        elif kind == "tool_use":
            call, name = block.get("id"), block.get("name")
            if not isinstance(call, str) or not call or not isinstance(name, str) or not name:
                raise _Unsupported()
            calls[call] += 1
            reply.calls += 1
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            pass
        elif kind != "redacted_thinking":
            reply.text = True  # shown as "[kind]"


def read_usage(path: str) -> tuple[Session, str] | None:
    """The usage skeleton of the Claude Code session file ``path`` and the file's SHA-256, or None
    when the full reader (``pruner.formats.load_session``) must read it (see the module)."""
    from . import CONTAINER_BYTES, DEFAULT_MAX_BYTES, _check_size, check_text_bytes
    from ._subagent_files import subagent_paths

    try:
        if subagent_paths(path):
            return None
        from .usage_lines import only

        snapshots = only(path, b"file-history-snapshot")
        if snapshots is not None:  # backups of edited files and no conversation (ccusage#873): no request
            return _of([], "", {"source": {}, "file_history_only": True}), snapshots
        file, data = read_limited(path, DEFAULT_MAX_BYTES)  # as load_session: regular files, bounded
        digest = hashlib.sha256(data).hexdigest()
        check_text_bytes(data, file=file)  # binary data (a NUL byte), UTF-16, empty: the full reader's refusal
        if len(data) * CONTAINER_BYTES > DEFAULT_MAX_BYTES:
            _check_size(data, DEFAULT_MAX_BYTES, file)  # counts the brackets only where they could matter
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        if _detected(data, file) != NAME:
            return None
        repairs = Repairs()  # what the bill leaves out (lines skipped, usages dropped), as the full reader says
        return _session(_records(data, repairs), file, repairs), digest
    except Exception:  # _Unsupported, or anything the full reader should name: it reads the file
        return None


def _session(parsed: list[tuple[int, JsonObject]], file: str, repairs: Repairs) -> Session:
    records = link_order(parsed)
    main_records, groups = split_chains(records)
    info: dict[str, Any] = {}
    for _, entry in records:
        for key in _SESSION_FIELDS:
            if key in entry and key not in info:
                info[key] = entry[key]
    if not isinstance(info.get("cwd"), str) or not info["cwd"]:
        raise _Unsupported()  # recorded_cwd would look further, into the messages' sources

    def builder() -> SessionBuilder:
        return SessionBuilder(file=file, source_format=NAME, lenient=True, repairs=repairs)

    main, compactions = _chain(main_records, builder())
    subagents = []
    for chain, chain_records in groups:
        if chain == MAIN_CHAIN:
            raise _Unsupported()
        agent = next((e["agentId"] for _, e in chain_records if isinstance(e.get("agentId"), str)), None)
        meta: dict[str, Any] = {"chain": chain, **({"agent_id": agent} if agent else {})}
        messages, sub_compactions = _chain(chain_records, builder())
        if sub_compactions:
            meta["recorded_compactions"] = sub_compactions
        subagents.append(_of(messages, chain, meta))
    metadata: dict[str, Any] = {"source": info}
    if not groups and any(e.get("isSidechain") for _, e in main_records):
        agent = next((e["agentId"] for _, e in main_records if isinstance(e.get("agentId"), str)), None)
        metadata["subagent_file"] = {"agent_id": agent} if agent else {}
    if compactions:
        metadata["recorded_compactions"] = compactions
    repairs.merge_into(metadata)
    return _of(main, str(info.get("sessionId") or ""), metadata, tuple(subagents))


def _of(messages: list[Message], name: str, metadata: dict[str, Any], subagents: tuple[Session, ...] = ()) -> Session:
    """The skeleton as a ``Session`` (turns are not numbered: the bill and the ledger do not read them)."""
    return Session(messages=tuple(messages), name=name, source_format=NAME, metadata=metadata, subagents=subagents)
