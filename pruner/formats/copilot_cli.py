"""GitHub Copilot CLI session event logs (``~/.copilot/session-state/<sessionId>/events.jsonl``).

Copilot CLI is closed source; its event log is the session-event schema its SDK publishes
(github/copilot-sdk, ``nodejs/src/generated/session-events.ts`` at commit
cc0438d66e3e68c333537cb935d9425d4e4ed8d5, MIT, read 2026-12-05). One JSON event a line: ``type``,
``data``, ``id``, ``timestamp``, ``parentId``, and ``agentId`` for a sub-agent's events (its chain).
Read here: ``session.start`` (``sessionId``, ``context.cwd``, ``selectedModel``), ``user.message``
(``content``; ``transformedContent`` is what the model was sent, and is the message when recorded),
``assistant.message`` (``content``, ``toolRequests`` with ``toolCallId`` / ``name`` /
``arguments``, ``model``, ``outputTokens``, ``apiCallId``: the chunks of one API call share it and are
one request), ``tool.execution_complete`` (``toolCallId``, ``success``, ``result.content`` or
``error.message``), ``assistant.usage`` and ``session.shutdown``. Every other event type is counted in
``Session.metadata["source"]["events"]``.

Usage. Copilot CLI marks ``assistant.usage`` (a request's input, cache read and write, output and
reasoning tokens) ``ephemeral: true``, "not persisted to the session event log on disk"; what the log
keeps is each ``assistant.message``'s ``outputTokens`` and, when the session ends, ``session.shutdown``'s
per-agent (``agentMetrics``, the main conversation ``main``) or per-model (``modelMetrics``) totals
(``usage.inputTokens`` / ``cacheReadTokens`` / ``cacheWriteTokens`` / ``outputTokens`` /
``reasoningTokens``). So a request's usage is its own output, and each (chain, model)'s totals of
input, cache read and write (and any output not counted on its requests) are put on that model's last
request in the chain (a total with no request of its model becomes one empty request at the chain's
end): the session's bill is exact, its per-request split is not recorded. A log that does hold
``assistant.usage`` events is billed from them, request by request, and its shutdown totals are not
used. ``inputTokens`` includes the cache reads ("Ensure input token usage includes cached",
github/copilot-cli ``changelog.md``); cache writes are counted apart, as ccusage reads Copilot's
usage (ryoppippi/ccusage, ``rust/crates/ccusage/src/adapter/copilot/parser.rs`` at commit
5816e640e8824986f33427203da164b01394a161): ``input = inputTokens - cacheReadTokens``. Copilot's
``cost`` and ``totalNanoAiu`` are premium-request multipliers and AI-credit units, not dollars, so no
recorded cost is read. A session still running (no ``session.shutdown``) bills its output only;
``Session.metadata["source"]["usage_totals"]`` says which.

>>> text = "\\n".join([
...     '{"type":"session.start","id":"e1","timestamp":"t1","data":{"sessionId":"s","context":{"cwd":"/w"}}}',
...     '{"type":"assistant.message","id":"e2","timestamp":"t2","data":{"messageId":"m","content":"hi",'
...     '"model":"gpt-5","outputTokens":9}}',
...     '{"type":"session.shutdown","id":"e3","timestamp":"t3","data":{"modelMetrics":{"gpt-5":{"usage":'
...     '{"inputTokens":500,"cacheReadTokens":400,"cacheWriteTokens":0,"outputTokens":9}}}}}'])
>>> loads(text).messages[0].metadata["usage"]
{'input': 100, 'output': 9, 'cache_read': 400, 'cache_write': 0}
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable

from ..model import MAIN_CHAIN, Session
from .builder import Draft, SessionBuilder
from .common import JsonObject, Probe, checked_usage, identity_by, parse_jsonl, token_count, type_name
from .repairing import Repairs

NAME = "copilot_cli"
ORDER = 67  # where --help and FORMATS list it
DESCRIPTION = "GitHub Copilot CLI session events JSONL (session.start / user.message / assistant.message)"
KNOWN_EVENTS = ("session.start", "user.message", "assistant.message", "tool.execution_complete", "assistant.usage",
                "session.shutdown")
_identity = identity_by("id")


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.records:
        return 0.0
    recs = [r for r in probe.records if isinstance(r, dict)]
    events = [r for r in recs if isinstance(r.get("type"), str) and "." in r["type"] and isinstance(r.get("data"), dict)
              and "id" in r]
    known = any(r["type"] in KNOWN_EVENTS for r in events)
    return 1.0 if known and len(events) >= max(1, len(recs) // 2) else 0.0


def copilot_usage(b: SessionBuilder, u: Any, where: str) -> dict[str, int] | None:
    """An ``assistant.usage`` event's or a shutdown total's counts in the shared usage shape (see the
    module); damage (a count out of range, cache reads above the input) drops it, reported."""
    if not isinstance(u, dict):
        return None
    raw = checked_usage(b, where, {"input": ("inputTokens", u.get("inputTokens")),
                                   "output": ("outputTokens", u.get("outputTokens")),
                                   "cache_read": ("cacheReadTokens", u.get("cacheReadTokens")),
                                   "cache_write": ("cacheWriteTokens", u.get("cacheWriteTokens")),
                                   "reasoning": ("reasoningTokens", u.get("reasoningTokens"))})
    if raw is None:
        return None
    if raw["cache_read"] > raw["input"]:
        b.repairs.add("invalid_usage", b.line, example=f"{where}: cacheReadTokens above inputTokens")
        return None
    return {**raw, "input": raw["input"] - raw["cache_read"]}


class _Chain:
    """One conversation being read: its builder, its open replies by API call, its requests by model."""

    def __init__(self, b: SessionBuilder) -> None:
        self.b = b
        self.replies: dict[str, Draft] = {}
        self.by_model: dict[str, list[Draft]] = {}
        self.calls: set[str] = set()


def _event_id(e: JsonObject, n: int) -> str:
    recorded = e.get("id")
    return recorded if isinstance(recorded, str) and recorded else f"e{n}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value, ensure_ascii=False)


def _assistant(c: _Chain, e: JsonObject, d: JsonObject, n: int) -> None:
    b = c.b
    key = d.get("apiCallId") if isinstance(d.get("apiCallId"), str) and d["apiCallId"] else None
    draft = c.replies.get(key) if key is not None else None
    output = token_count(d.get("outputTokens"))
    if draft is None:
        mid = d.get("messageId") if isinstance(d.get("messageId"), str) and d["messageId"] else e.get("id")
        meta: dict[str, Any] = {}
        if isinstance(e.get("timestamp"), str):
            meta["timestamp"] = e["timestamp"]
        model = d.get("model") if isinstance(d.get("model"), str) and d["model"] else None
        if model:
            meta["model"] = model
        if key:
            meta["request_id"] = key
        if isinstance(d.get("reasoningText"), str) and d["reasoningText"]:
            meta["thinking"] = d["reasoningText"]
        source: dict[str, Any] = {k: d[k] for k in ("interactionId", "turnId", "requestId") if k in d}
        if model:
            source["model"] = model  # where pruner.replay.detect looks for the recorded model
        draft = b.add(id=mid if isinstance(mid, str) and mid else f"e{n}", role="assistant",
                      content=_text(d.get("content")), where="data", metadata={**meta, "source": source})
        if key is not None:
            c.replies[key] = draft
        c.by_model.setdefault(model or "", []).append(draft)
    elif isinstance(d.get("content"), str) and d["content"]:
        draft.content = f"{draft.content}\n{d['content']}" if draft.content else d["content"]
    if output is not None:
        recorded = draft.metadata.get("output_tokens", 0)
        draft.metadata["output_tokens"] = max(recorded, output)
    requests = d.get("toolRequests")
    if requests is None:
        return
    if not isinstance(requests, list):
        raise b.error(f"field 'toolRequests' must be a list, got {type_name(requests)}", "data.toolRequests")
    for k, call in enumerate(requests):
        where = f"data.toolRequests[{k}]"
        if not isinstance(call, dict):
            raise b.error(f"a tool request must be an object, got {type_name(call)}", where)
        b.add_call(draft, original_id=call.get("toolCallId"), name=call.get("name"),
                   arguments=call.get("arguments", {}), where=where)
        c.calls.add(call["toolCallId"])


def _result(c: _Chain, e: JsonObject, d: JsonObject, n: int, other: Counter[str]) -> None:
    call = d.get("toolCallId")
    if not isinstance(call, str) or call not in c.calls:
        other["tool.execution_complete (no model call)"] += 1  # a tool the person ran: not part of the chat
        return
    result, error = d.get("result"), d.get("error")
    if d.get("success") is False or not isinstance(result, dict):
        body = _text(error.get("message") if isinstance(error, dict) else error)
    else:
        body = _text(result.get("content"))
    meta: dict[str, Any] = {"is_error": d.get("success") is False}
    if isinstance(e.get("timestamp"), str):
        meta["timestamp"] = e["timestamp"]
    eid = _event_id(e, n)
    c.b.add_result(original_call_id=call, id=eid, content=body, where="data.result", metadata=meta)


def _usage_event(c: _Chain, e: JsonObject, d: JsonObject) -> bool:
    """An ``assistant.usage`` event on its request (by API call, else the chain's latest reply); True
    when it was put on one."""
    key = d.get("apiCallId")
    draft = c.replies.get(key) if isinstance(key, str) else None
    if draft is None and c.b.drafts:
        draft = next((x for x in reversed(c.b.drafts) if x.role == "assistant"), None)
    u = copilot_usage(c.b, d, "data")
    if draft is None or u is None:
        return False
    draft.metadata["usage"] = u
    return True


def _totals(chains: dict[str, _Chain], shutdown: JsonObject, b: SessionBuilder) -> None:
    """``session.shutdown``'s totals on each (chain, model)'s last request (see the module)."""
    agents = shutdown.get("agentMetrics")
    if isinstance(agents, dict) and agents:
        per = [(MAIN_CHAIN if agent == "main" else agent, m) for agent, m in agents.items()]
    else:
        per = [(MAIN_CHAIN, shutdown)]
    for chain, metric in per:
        models = metric.get("modelMetrics") if isinstance(metric, dict) else None
        if not isinstance(models, dict):
            continue
        c = chains.get(chain) or chains[MAIN_CHAIN]
        for model, m in models.items():
            u = copilot_usage(b, m.get("usage") if isinstance(m, dict) else None, f"data.modelMetrics.{model}")
            if u is None:
                continue
            drafts = c.by_model.get(model) or []
            counted = sum(x.metadata.get("output_tokens", 0) for x in drafts)
            if not drafts:
                drafts = [c.b.add(id=c.b.fresh_id(f"{chain}.{model}.totals"), role="assistant", content="",
                                  where="data.modelMetrics", metadata={"model": model, "source": {
                                      "model": model, "from": "session.shutdown totals"}})]
            last = drafts[-1]
            own = last.metadata.get("output_tokens", 0)
            last.metadata["usage"] = {**u, "output": own + max(0, u["output"] - counted)}


def _output_only(chains: dict[str, _Chain]) -> None:
    for c in chains.values():
        for draft in c.b.drafts:
            if draft.role == "assistant" and "usage" not in draft.metadata and "output_tokens" in draft.metadata:
                draft.metadata["usage"] = {"input": 0, "output": draft.metadata["output_tokens"], "cache_read": 0,
                                           "cache_write": 0}


def session_from_records(records: Iterable[tuple[int, JsonObject]], *, file: str, repairs: Repairs,
                         retrieval_tools: Iterable[str] | None = None, skipped: int = 0) -> Session:
    """The session of Copilot CLI's decoded events (the full reader and the bill-only one both use it)."""
    chains: dict[str, _Chain] = {}

    def chain_of(e: JsonObject) -> _Chain:
        agent = e.get("agentId")
        name = agent if isinstance(agent, str) and agent and agent not in ("main", MAIN_CHAIN) else MAIN_CHAIN
        if name not in chains:
            chains[name] = _Chain(SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools,
                                                 lenient=True, repairs=repairs if name == MAIN_CHAIN else Repairs()))
        return chains[name]

    main = chain_of({})
    info: dict[str, Any] = {}
    other: Counter[str] = Counter()
    shutdown: JsonObject | None = None
    usage_events = False
    for n, e in records:
        kind, d = e.get("type"), e.get("data")
        if not isinstance(d, dict):
            other[str(kind)[:60]] += 1
            continue
        c = chain_of(e)
        c.b.line = n
        if kind == "session.start":
            info.update({k: d[k] for k in ("sessionId", "selectedModel", "copilotVersion")
                         if isinstance(d.get(k), str)})
            context = d.get("context")
            if isinstance(context, dict) and isinstance(context.get("cwd"), str):
                info["cwd"] = context["cwd"]
        elif kind == "user.message":
            body = d.get("transformedContent") if isinstance(d.get("transformedContent"), str) else d.get("content")
            meta = {"timestamp": e["timestamp"]} if isinstance(e.get("timestamp"), str) else {}
            c.b.add(id=_event_id(e, n), role="user", content=_text(body), where="data.content", metadata=meta)
        elif kind == "assistant.message":
            _assistant(c, e, d, n)
        elif kind == "tool.execution_complete":
            _result(c, e, d, n, other)
        elif kind == "assistant.usage":
            usage_events |= _usage_event(c, e, d)
        elif kind == "session.shutdown":
            shutdown = d
        else:
            other[str(kind)[:60]] += 1
    main.b.line = None
    if not usage_events and shutdown is not None:
        _totals(chains, shutdown, main.b)
    _output_only(chains)
    for c in chains.values():
        for draft in c.b.drafts:
            draft.metadata.pop("output_tokens", None)
    source: dict[str, Any] = dict(info)
    source["usage_totals"] = ("assistant.usage events" if usage_events else "session.shutdown" if shutdown is not None
                              else "absent: no session.shutdown yet, output tokens only")
    if other:
        source["events"] = dict(sorted(other.items()))
    metadata: dict[str, Any] = {"source": source}
    if skipped:
        metadata["skipped_bad_lines"] = skipped
    subagents = [c.b.build(name=name, metadata={"chain": name, "agent_id": name})
                 for name, c in chains.items() if name != MAIN_CHAIN]
    return main.b.build(name=str(info.get("sessionId") or ""), metadata=metadata, subagents=subagents)


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    parsed = parse_jsonl(text, file=file, skip_bad_lines=skip_bad_lines, identity=_identity)
    return session_from_records(parsed.records, file=file, repairs=parsed.repairs, retrieval_tools=retrieval_tools,
                                skipped=parsed.skipped)
