"""Amp thread files (``~/.local/share/amp/threads/T-<uuid>.json``).

Amp is closed source. This reader follows ccusage's Amp reader (ryoppippi/ccusage,
``rust/crates/ccusage/src/adapter/amp/parser.rs`` and ``README.md`` at commit
5816e640e8824986f33427203da164b01394a161, read 2026-12-05) for usage, and for the messages the
thread shape other open readers document (jonathan-kellerai/cross_agent_session_resumer,
``src/providers/amp.rs`` at commit ec0eab964866394f77bbd157e773656a109e7ab3). One JSON document:
``id`` (``T-<uuid>``), ``created`` (ms), ``title``, ``env.initial.trees[].uri`` (the workspace,
``file://`` URI: the session's ``cwd``), ``messages`` and, in older threads, ``usageLedger.events``.
A message has ``role`` (``user``, ``assistant``, ``info``), ``messageId`` (an integer), ``content``
(blocks: ``text``, ``thinking``, ``tool_use`` with ``id`` / ``name`` / ``input``, and in user messages
``tool_result`` with ``toolUseID`` and ``run``: ``status`` and ``result`` or ``progress``),
``meta.sentAt`` (ms) and, on an assistant message (one request), ``usage``: ``model``,
``inputTokens``, ``cacheCreationInputTokens``, ``cacheReadInputTokens``, ``outputTokens``,
``totalInputTokens``, ``credits``, ``timestamp``. ``info`` messages (summaries, notices) are not
sent as such: they are kept in ``Session.metadata["source"]["info"]``.

Usage (Anthropic's meaning: the three input counts are disjoint): ``input = inputTokens``,
``cache_write = cacheCreationInputTokens``, ``cache_read = cacheReadInputTokens``, ``output =
outputTokens``. A thread whose messages record no usage but which has ``usageLedger.events`` (the
older schema) is billed from the ledger: each event's ``tokens.input`` / ``tokens.output`` and
``model`` go on the message it names (``toMessageId``). Cost: Amp records what it charged for each
request in ``credits``; Amp's credit balances are dollars ("Individual credits: $N remaining",
``amp usage``; steipete/CodexBar ``docs/amp.md``), so ``credits`` is read as the request's recorded
cost in USD (``usage["cost"]``, as Pi's ``cost.total``), and the row's ``billed_recorded_cost`` is
their sum when every request records one.

>>> text = ('{"id": "T-1", "messages": [{"role": "user", "messageId": 0, "content": [{"type": "text",'
...         ' "text": "hi"}]}, {"role": "assistant", "messageId": 1, "content": [{"type": "text", "text": "ok"}],'
...         ' "usage": {"model": "claude-sonnet-4-5-20250929", "inputTokens": 3, "outputTokens": 2,'
...         ' "cacheCreationInputTokens": 100, "cacheReadInputTokens": 0, "credits": 0.0004}}]}')
>>> loads(text).messages[1].metadata["usage"]
{'input': 3, 'output': 2, 'cache_read': 0, 'cache_write': 100, 'cost': 0.0004}
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import Any, Iterable
from urllib.parse import unquote, urlparse

from .common import MAX_REQUEST_COST
from ..errors import FormatError
from ..model import Session
from .builder import SessionBuilder
from .common import JsonObject, Probe, checked_usage, document, jpath, type_name
from .repairing import Repairs

NAME = "amp"
ORDER = 68  # where --help and FORMATS list it
DESCRIPTION = "Amp thread JSON (id T-..., messages with messageId, content blocks and usage)"
ROLES = ("user", "assistant", "info")
_ERROR_STATUS = ("error", "cancelled", "rejected-by-user")


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.is_document or not isinstance(probe.document, dict):
        return 0.0
    doc = probe.document
    messages = doc.get("messages")
    if not isinstance(messages, list):
        return 0.0
    thread = isinstance(doc.get("id"), str) and doc["id"].startswith("T-")
    numbered = any(isinstance(m, dict) and "messageId" in m for m in messages[:50])
    return 1.0 if (thread or "usageLedger" in doc) and (numbered or not messages) else 0.0


def iso_ms(value: Any) -> str | None:
    """A millisecond epoch (``meta.sentAt``) as an ISO time, or None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**14:
        return None
    return datetime.fromtimestamp(value / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{value % 1000:03d}Z"


def workspace(doc: JsonObject) -> str | None:
    """The first workspace folder ``env.initial.trees`` records (a ``file://`` URI's path), or None."""
    env = doc.get("env")
    initial = env.get("initial") if isinstance(env, dict) else None
    trees = initial.get("trees") if isinstance(initial, dict) else None
    for tree in trees if isinstance(trees, list) else []:
        uri = tree.get("uri") if isinstance(tree, dict) else None
        if isinstance(uri, str) and uri.startswith("file://"):
            return unquote(urlparse(uri).path) or None
    return None


def amp_usage(b: SessionBuilder, u: Any, where: str) -> dict[str, Any] | None:
    """A message's ``usage`` in the shared shape, with ``cost`` = ``credits`` (USD) when recorded;
    damage drops it, reported."""
    if not isinstance(u, dict):
        return None
    out: dict[str, Any] | None = checked_usage(b, where, {
        "input": ("inputTokens", u.get("inputTokens")), "output": ("outputTokens", u.get("outputTokens")),
        "cache_read": ("cacheReadInputTokens", u.get("cacheReadInputTokens")),
        "cache_write": ("cacheCreationInputTokens", u.get("cacheCreationInputTokens"))})
    credits = u.get("credits")
    if out is None or credits is None:
        return out
    if isinstance(credits, bool) or not isinstance(credits, (int, float)) or not (
            0 <= credits <= MAX_REQUEST_COST and math.isfinite(credits)):
        b.repairs.add("invalid_usage", None, example=f"{jpath(where, 'credits')} = {repr(credits)[:40]}")
        return None
    out["cost"] = float(credits)
    return out


def _blocks(b: SessionBuilder, content: Any, where: str) -> list[JsonObject]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise b.error(f"field 'content' must be a list of blocks or a string, got {type_name(content)}", where)
    for k, block in enumerate(content):
        if not isinstance(block, dict):
            raise b.error(f"a content block must be an object, got {type_name(block)}", jpath(where, k))
    return content


def _result_text(run: Any) -> tuple[str, bool]:
    if not isinstance(run, dict):
        return "", False
    error = run.get("status") in _ERROR_STATUS
    for key in ("result", "progress", "error"):
        value = run.get(key)
        if isinstance(value, str):
            return value, error
        if value is not None:
            return json.dumps(value, ensure_ascii=False, sort_keys=True), error
    return "", error


def _message(b: SessionBuilder, m: JsonObject, i: int, usage: dict[str, Any] | None, model: str | None) -> None:
    where = jpath("$.messages", i)
    role = m.get("role")
    mid = m.get("messageId")
    base = f"m{mid}" if isinstance(mid, (int, str)) and not isinstance(mid, bool) and str(mid) else f"i{i}"
    meta: dict[str, Any] = {}
    meta_in = m.get("meta")
    stamp = iso_ms(meta_in.get("sentAt")) if isinstance(meta_in, dict) else None
    u = m.get("usage")
    if isinstance(u, dict) and isinstance(u.get("timestamp"), str):
        stamp = u["timestamp"]
    if stamp:
        meta["timestamp"] = stamp
    blocks = _blocks(b, m.get("content"), jpath(where, "content"))
    if role == "assistant":
        texts, thinking, calls = [], [], []
        for k, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "thinking":
                thinking.append(str(block.get("thinking") or ""))
            elif kind == "tool_use":
                calls.append((k, block))
            elif kind != "redacted_thinking":
                texts.append(f"[{kind or 'block'}]")
        if model:
            meta["model"] = model
        if usage is not None:
            meta["usage"] = usage
        if any(thinking):
            meta["thinking"] = "\n\n".join(t for t in thinking if t)
        source = {"model": model} if model else {}
        draft = b.add(id=base, role="assistant", content="\n".join(texts), where=where,
                      metadata={**meta, "source": source})
        for k, block in calls:
            b.add_call(draft, original_id=block.get("id"), name=block.get("name"), arguments=block.get("input", {}),
                       where=jpath(where, "content", k))
        return
    texts = []
    results = 0
    for k, block in enumerate(blocks):
        if block.get("type") == "tool_result":
            body, error = _result_text(block.get("run"))
            b.add_result(original_call_id=block.get("toolUseID"), id=f"{base}.r{results}", content=body,
                         where=jpath(where, "content", k), metadata={**meta, "is_error": error})
            results += 1
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        else:
            texts.append(f"[{block.get('type') or 'block'}]")
    if texts or not results:
        b.add(id=base, role="user", content="\n".join(texts), where=where, metadata=meta)


def _ledger(b: SessionBuilder, doc: JsonObject) -> dict[Any, tuple[dict[str, Any], str | None]]:
    """messageId -> (usage, model) from the older ``usageLedger.events`` (see the module)."""
    ledger = doc.get("usageLedger")
    events = ledger.get("events") if isinstance(ledger, dict) else None
    out: dict[Any, tuple[dict[str, Any], str | None]] = {}
    for k, e in enumerate(events if isinstance(events, list) else []):
        if not isinstance(e, dict) or not isinstance(e.get("tokens"), dict):
            continue
        t = e["tokens"]
        u = checked_usage(b, jpath("$.usageLedger.events", k, "tokens"),
                          {"input": ("input", t.get("input")), "output": ("output", t.get("output"))})
        model = e.get("model") if isinstance(e.get("model"), str) and e["model"] else None
        if u is not None and not isinstance(e.get("toMessageId"), bool):
            out[e.get("toMessageId")] = (u, model)
    return out


def session_from_document(doc: Any, *, file: str, repairs: Repairs,
                          retrieval_tools: Iterable[str] | None = None) -> Session:
    """The session of an Amp thread's decoded document (the full reader and the bill-only one use it)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise FormatError(f"the top-level value is {type_name(doc)}; expected an object with a 'messages' "
                          "list (an Amp thread)", file=file, path="$")
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools, lenient=True, repairs=repairs)
    messages = doc["messages"]
    recorded = any(isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("usage"), dict)
                   for m in messages)
    ledger = {} if recorded else _ledger(b, doc)
    info = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise b.error(f"a message must be an object, got {type_name(m)}", jpath("$.messages", i))
        role = m.get("role")
        if role not in ROLES:
            b.repairs.add("unknown_entries", None, type=f"message with role {role!r}"[:60])
            info.append({"index": i, **m})
            continue
        if role == "info":
            info.append({"index": i, **m})
            continue
        usage: dict[str, Any] | None = None
        model = None
        u = m.get("usage")
        if role == "assistant" and isinstance(u, dict):
            usage = amp_usage(b, u, jpath("$.messages", i, "usage"))
            model = u.get("model") if isinstance(u.get("model"), str) and u["model"] else None
        elif role == "assistant" and m.get("messageId") in ledger:
            usage, model = ledger[m["messageId"]]
        _message(b, m, i, usage, model)
    source: dict[str, Any] = {k: doc[k] for k in ("id", "title", "created", "v", "agentMode") if k in doc}
    cwd = workspace(doc)
    if cwd:
        source["cwd"] = cwd
    if info:
        source["info"] = info
    return b.build(name=str(doc.get("id") or ""), metadata={"source": source})


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    return session_from_document(document(text, file=file), file=file, repairs=Repairs(),
                                 retrieval_tools=retrieval_tools)
