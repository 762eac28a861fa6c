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
github/copilot-cli ``changelog.md``) and the cache writes too: on real 1.0.x sessions 596,075 input =
2,373 uncached + 536,945 read + 56,757 written, the uncached part being the total's
``tokenDetails.input.tokenCount``. So the uncached input is that detail where recorded, else
``inputTokens - cacheReadTokens - cacheWriteTokens`` (``- cacheReadTokens`` alone where the writes are
more than the rest: an accounting that leaves them out); no token is billed twice.

A resumed session has one ``session.shutdown`` per run, each covering that run only (its
``modelMetrics`` / ``agentMetrics``): every shutdown's totals are summed per (chain, model). A
shutdown with no ``session.start`` / ``session.resume`` since the one before it is a second account of
the same run, summed too but reported (``overlapping_shutdowns``). Totals of the session as a whole (a
shutdown without ``agentMetrics``) count the output already on the model's requests in every chain, so
output is never added twice. An ``assistant.message`` without ``model`` (1.0.10) is the model that
``session.model_change`` (``newModel``) last selected, else ``session.resume`` / ``session.start``'s
``selectedModel``. Copilot's
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
from typing import Any, Callable, Iterable, TypeVar

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
R = TypeVar("R")


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.records:
        return 0.0
    recs = [r for r in probe.records if isinstance(r, dict)]
    events = [r for r in recs if isinstance(r.get("type"), str) and "." in r["type"] and isinstance(r.get("data"), dict)
              and "id" in r]
    known = any(r["type"] in KNOWN_EVENTS for r in events)
    return 1.0 if known and len(events) >= max(1, len(recs) // 2) else 0.0


def copilot_usage(b: SessionBuilder, u: Any, where: str, details: Any = None) -> dict[str, int] | None:
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
    uncached = _detail_input(details)
    if uncached is None:
        rest = raw["input"] - raw["cache_read"]
        uncached = rest - raw["cache_write"] if raw["cache_write"] <= rest else rest
    return {**raw, "input": uncached}


def _detail_input(details: Any) -> int | None:
    """The uncached input a shutdown total's ``tokenDetails`` records (``{"input": {"tokenCount": n}}``)."""
    entry = details.get("input") if isinstance(details, dict) else None
    return token_count(entry.get("tokenCount")) if isinstance(entry, dict) else None


#: (chain, model) -> the summed usage of every shutdown; chain None: totals of the whole session.
Totals = dict[tuple[str | None, str], dict[str, int]]


def add_shutdown(totals: Totals, shutdown: JsonObject, b: SessionBuilder) -> None:
    """One ``session.shutdown``'s totals (a plain dict, as decoded) added to ``totals``."""
    agents = shutdown.get("agentMetrics")
    per: list[tuple[str | None, Any]]
    if isinstance(agents, dict) and agents:
        per = [(MAIN_CHAIN if agent == "main" else agent, m) for agent, m in agents.items()]
    else:
        per = [(None, shutdown)]
    for chain, metric in per:
        models = metric.get("modelMetrics") if isinstance(metric, dict) else None
        if not isinstance(models, dict):
            continue
        for model, m in models.items():
            m = m if isinstance(m, dict) else {}
            u = copilot_usage(b, m.get("usage"), f"data.modelMetrics.{model}", m.get("tokenDetails"))
            if u is None:
                continue
            into = totals.setdefault((chain, model), {})
            for k, v in u.items():
                into[k] = into.get(k, 0) + v


def place_totals(totals: Totals, by_model: dict[str, dict[str, list[R]]], output: Callable[[R], int],
                 meta: Callable[[R], dict[str, Any]], new: Callable[[str, str], R]) -> None:
    """The summed totals on each (chain, model)'s last request: ``by_model`` is chain -> model -> its
    requests in order (main chain first); ``new(chain, model)`` adds one empty request where there is none.
    The output not yet on the requests (the totals' output less theirs) goes on that last request."""
    for (chain, model), u in totals.items():
        if chain is None:  # the whole session's: every chain's requests of the model
            found = [(c, d) for c, models in by_model.items() if (d := models.get(model))]
            counted = sum(output(x) for _, d in found for x in d)
            owner, drafts = found[0] if found else (MAIN_CHAIN, [])
        else:
            owner = chain if chain in by_model else MAIN_CHAIN
            drafts = by_model[owner].get(model) or []
            counted = sum(output(x) for x in drafts)
        last = drafts[-1] if drafts else new(owner, model)
        meta(last)["usage"] = {**u, "output": output(last) + max(0, u["output"] - counted)}


def totals_source(shutdowns: int) -> str:
    return "session.shutdown" if shutdowns == 1 else f"session.shutdown: {shutdowns:,} runs summed"


class _Chain:
    """One conversation being read: its builder, its open replies by API call, its requests by model."""

    def __init__(self, b: SessionBuilder, name: str) -> None:
        self.b, self.name = b, name
        self.replies: dict[str, Draft] = {}
        self.by_model: dict[str, list[Draft]] = {}
        self.calls: set[str] = set()


def _event_id(e: JsonObject, n: int) -> str:
    recorded = e.get("id")
    return recorded if isinstance(recorded, str) and recorded else f"e{n}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value, ensure_ascii=False)


def _assistant(c: _Chain, e: JsonObject, d: JsonObject, n: int, selected: str | None) -> None:
    b = c.b
    key = d.get("apiCallId") if isinstance(d.get("apiCallId"), str) and d["apiCallId"] else None
    draft = c.replies.get(key) if key is not None else None
    output = token_count(d.get("outputTokens"))
    if draft is None:
        mid = d.get("messageId") if isinstance(d.get("messageId"), str) and d["messageId"] else e.get("id")
        meta: dict[str, Any] = {}
        if isinstance(e.get("timestamp"), str):
            meta["timestamp"] = e["timestamp"]
        model = d.get("model") if isinstance(d.get("model"), str) and d["model"] else selected
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
                                                 lenient=True, repairs=repairs if name == MAIN_CHAIN else Repairs()),
                                  name)
        return chains[name]

    main = chain_of({})
    info: dict[str, Any] = {}
    other: Counter[str] = Counter()
    shutdowns: list[tuple[int, JsonObject]] = []
    run_started = False  # a session.start or session.resume since the last shutdown
    selected: dict[str, str] = {}  # chain -> the model session.model_change last selected
    usage_events = False
    for n, e in records:
        kind, d = e.get("type"), e.get("data")
        if not isinstance(d, dict):
            other[str(kind)[:60]] += 1
            continue
        c = chain_of(e)
        c.b.line = n
        if kind == "session.start" or kind == "session.resume":
            run_started = True
            if isinstance(d.get("selectedModel"), str) and d["selectedModel"]:
                selected[MAIN_CHAIN] = d["selectedModel"]
            if kind == "session.resume":
                continue
            info.update({k: d[k] for k in ("sessionId", "selectedModel", "copilotVersion")
                         if isinstance(d.get(k), str)})
            context = d.get("context")
            if isinstance(context, dict) and isinstance(context.get("cwd"), str):
                info["cwd"] = context["cwd"]
        elif kind == "session.model_change":
            if isinstance(d.get("newModel"), str) and d["newModel"]:
                selected[c.name] = d["newModel"]
        elif kind == "user.message":
            body = d.get("transformedContent") if isinstance(d.get("transformedContent"), str) else d.get("content")
            meta = {"timestamp": e["timestamp"]} if isinstance(e.get("timestamp"), str) else {}
            c.b.add(id=_event_id(e, n), role="user", content=_text(body), where="data.content", metadata=meta)
        elif kind == "assistant.message":
            _assistant(c, e, d, n, selected.get(c.name) or selected.get(MAIN_CHAIN))
        elif kind == "tool.execution_complete":
            _result(c, e, d, n, other)
        elif kind == "assistant.usage":
            usage_events |= _usage_event(c, e, d)
        elif kind == "session.shutdown":
            if shutdowns and not run_started:
                main.b.repairs.add("overlapping_shutdowns", n)
            shutdowns.append((n, d))
            run_started = False
        else:
            other[str(kind)[:60]] += 1
    totals: Totals = {}
    for n, d in shutdowns if not usage_events else ():
        main.b.line = n
        add_shutdown(totals, d, main.b)
    main.b.line = None
    if totals:
        def new(chain: str, model: str) -> Draft:
            b = chains[chain].b
            return b.add(id=b.fresh_id(f"{chain}.{model}.totals"), role="assistant", content="",
                         where="data.modelMetrics",
                         metadata={"model": model, "source": {"model": model, "from": "session.shutdown totals"}})

        place_totals(totals, {name: c.by_model for name, c in chains.items()},
                     lambda x: x.metadata.get("output_tokens", 0), lambda x: x.metadata, new)
    _output_only(chains)
    for c in chains.values():
        for draft in c.b.drafts:
            draft.metadata.pop("output_tokens", None)
    source: dict[str, Any] = dict(info)
    source["usage_totals"] = ("assistant.usage events" if usage_events else totals_source(len(shutdowns)) if shutdowns
                              else "absent: no session.shutdown yet, output tokens only")
    if other:
        source["events"] = dict(sorted(other.items()))
    metadata: dict[str, Any] = {"source": source}
    if skipped:
        metadata["skipped_bad_lines"] = skipped
    subagents = [c.b.build(name=name, metadata={"chain": name, "agent_id": name})
                 for name, c in chains.items() if name != MAIN_CHAIN]
    return main.b.build(name=str(info.get("sessionId") or ""), metadata=metadata, subagents=subagents)


def lump_usage(session: Session) -> str | None:
    """Why no strategy can be replayed against ``session`` (None: it can): its usage is one total per model
    at the end of each run (``session.shutdown``), not per request, so a per-request replay has nothing to
    compare with and prices every request from the transcript alone."""
    source = session.metadata.get("source") if isinstance(session.metadata, dict) else None
    how = source.get("usage_totals") if isinstance(source, dict) else None
    if session.source_format != NAME or not isinstance(how, str) or not how.startswith("session.shutdown"):
        return None
    return ("Copilot CLI records this session's usage as one total per model at the end of each run "
            "(session.shutdown), not per request: no strategy can be replayed against it, only its bill is "
            "known")


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    parsed = parse_jsonl(text, file=file, skip_bad_lines=skip_bad_lines, identity=_identity)
    return session_from_records(parsed.records, file=file, repairs=parsed.repairs, retrieval_tools=retrieval_tools,
                                skipped=parsed.skipped)
