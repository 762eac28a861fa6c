"""Codex CLI rollout JSONL (``~/.codex/sessions/.../rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. ``session_meta`` gives the
session id (and ``instructions``, which become the system message);
``response_item`` lines carry Responses-API items and are the conversation;
``event_msg`` lines repeat it for the UI and are not counted again, except
``token_count`` events: each new one is one model request, whose
``last_token_usage`` becomes the latest assistant message's
``metadata["usage"]`` (``input`` excludes cached input, which is
``cache_read``; ``output`` includes the reasoning tokens, also kept as
``reasoning``) and whose model is the latest ``turn_context``'s (else
``session_meta``'s) ``metadata["model"]``; an event repeating the previous
totals is not a request. ``turn_context`` lines are kept in
``Session.metadata["source"]["turn_contexts"]``; ``compacted`` lines become a
``summary`` message and a recorded compaction. Older rollouts that hold bare
items (no ``payload``) are read too.

This is an agent log, so damage is repaired and reported (``repairing``), not
refused: an exact repeat of a line that carries a timestamp or an id is
dropped (bare items without either are all kept: two identical user messages
may both be real), a line that is not a JSON object is skipped, and a line of
a type this reader does not know (``response_itme``) is skipped and named
with its count.

>>> text = ('{"type":"session_meta","payload":{"id":"s1"}}\\n'
...         '{"type":"response_item","payload":{"type":"message","role":"user",'
...         '"content":[{"type":"input_text","text":"hi"}]}}\\n'
...         '{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}')
>>> [(m.role, m.content) for m in loads(text).messages]
[('user', 'hi')]
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from ..model import Session
from .builder import SessionBuilder
from .common import JsonObject, Probe, checked_usage, identity_by, parse_jsonl
from .openai_responses import ITEM_TYPES, ItemReader

NAME = "codex"
ORDER = 60  # where --help and FORMATS list it
DESCRIPTION = "Codex CLI rollout JSONL (session_meta / response_item / event_msg lines)"
LINE_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_identity = identity_by("timestamp", "id", "call_id", inner="payload")


def detect(text: str, probe: Probe | None) -> float:
    if probe is None or not probe.records:
        return 0.0
    recs = [r for r in probe.records if isinstance(r, dict)]
    typed = sum(1 for r in recs if r.get("type") in LINE_TYPES and "payload" in r)
    if recs and typed >= max(1, len(recs) // 2):
        return 1.0
    # Older rollouts: a meta line with id + instructions, then bare Responses items.
    head = recs[0] if recs else {}
    if "id" in head and "instructions" in head and any(r.get("type") in ITEM_TYPES for r in recs[1:]):
        return 0.9
    return 0.0


def token_count_usage(b: SessionBuilder, last: JsonObject) -> dict[str, int] | None:
    """``metadata["usage"]`` from a ``token_count`` event's ``last_token_usage``.

    ``input_tokens`` includes the cached part (``cached_input_tokens``), so
    ``input`` is the rest; ``output_tokens`` already includes the reasoning
    tokens (``total_tokens`` is input + output in every recorded event), kept
    apart as ``reasoning``.
    """
    recorded = checked_usage(b, "payload.info.last_token_usage", {
        "input": ("input_tokens", last.get("input_tokens")), "output": ("output_tokens", last.get("output_tokens")),
        "cache_read": ("cached_input_tokens", last.get("cached_input_tokens")),
        "reasoning": ("reasoning_output_tokens", last.get("reasoning_output_tokens"))})
    if recorded is None:
        return None
    if recorded["cache_read"] > recorded["input"]:
        b.repairs.add("invalid_usage", b.line, example="payload.info.last_token_usage: cached_input_tokens above "
                                                       "input_tokens")
        return None
    recorded["input"] -= recorded["cache_read"]
    return recorded


def loads(text: str, *, file: str = "<input>", skip_bad_lines: bool = False,
          retrieval_tools: Iterable[str] | None = None) -> Session:
    parsed = parse_jsonl(text, file=file, skip_bad_lines=skip_bad_lines, identity=_identity)
    b = SessionBuilder(file=file, source_format=NAME, retrieval_tools=retrieval_tools, lenient=True,
                       repairs=parsed.repairs)
    reader = ItemReader(b)
    source: dict[str, Any] = {}
    events: Counter[str] = Counter()
    turn_contexts: list[Any] = []
    compactions: list[dict[str, Any]] = []
    name = ""
    model = ""  # the latest turn_context's (else session_meta's) model: the one each request went to
    last_total: Any = None
    for lineno, line in parsed.records:
        b.line = lineno
        kind = line.get("type")
        payload = line.get("payload")
        meta = {"timestamp": line["timestamp"]} if isinstance(line.get("timestamp"), str) else {}
        if kind == "session_meta" or (lineno == parsed.records[0][0] and "payload" not in line
                                      and "instructions" in line):
            info = payload if isinstance(payload, dict) else line
            source["session_meta"] = {k: v for k, v in info.items() if k != "instructions"}
            name = str(info.get("id") or name)
            if isinstance(info.get("model"), str) and info["model"] and not model:
                model = info["model"]
            if isinstance(info.get("instructions"), str) and info["instructions"].strip():
                b.add(id="instructions", role="system", content=info["instructions"], where="payload.instructions",
                      metadata=meta)
        elif kind == "response_item":
            reader.add(payload, "payload", metadata=meta)
        elif kind == "event_msg":  # the UI's copy of the conversation: counted, not imported twice
            ptype = payload.get("type") if isinstance(payload, dict) else None
            events[str(ptype)] += 1
            if ptype == "token_count":
                info = payload.get("info") or {}
                total = info.get("total_token_usage") if isinstance(info, dict) else None
                if total is not None and total == last_total:
                    continue  # the same count again (Codex repeats it with rate-limit updates): not a request
                last_total = total
                last = info.get("last_token_usage") if isinstance(info, dict) else None
                target = next((d for d in reversed(b.drafts) if d.role == "assistant"), None)
                if isinstance(last, dict) and target is not None:
                    if "usage" in target.metadata:  # a second request with no reply of its own: say so
                        b.repairs.add("usage_without_reply", lineno)
                        continue
                    recorded = token_count_usage(b, last)
                    if recorded is not None:
                        target.metadata["usage"] = recorded
                    if model:
                        target.metadata["model"] = model
        elif kind == "turn_context":
            turn_contexts.append(payload)
            if isinstance(payload, dict) and isinstance(payload.get("model"), str) and payload["model"]:
                model = payload["model"]
        elif kind == "compacted":
            summary = payload.get("message", "") if isinstance(payload, dict) else ""
            position = len(b.drafts)
            extra = {k: v for k, v in (payload or {}).items() if k != "message"} if isinstance(payload, dict) else {}
            b.add(id=b.fresh_id(f"compacted{lineno}"), role="summary", content=str(summary), where="payload",
                  metadata={**meta, "kind": "compaction", **({"source": extra} if extra else {})})
            compactions.append({"entry_id": None, "summary": str(summary), "first_kept_message_id": None,
                                "first_kept_index": None, "tokens_before": None, "position_index": position})
        elif "payload" not in line and (line.get("type") in ITEM_TYPES or "role" in line):
            reader.add(line, "$", metadata=meta)  # an older rollout's bare item
        else:  # not a line this reader knows: say so (it may be a real item with a mangled type)
            b.repairs.add("unknown_entries", lineno, type=repr(kind)[:60])
    b.line = None
    if events:
        source["event_counts"] = dict(sorted(events.items()))
    if turn_contexts:
        source["turn_contexts"] = turn_contexts
    metadata: dict[str, Any] = reader.finish({"source": source} if source else {})
    if compactions:
        metadata["recorded_compactions"] = compactions
    if parsed.skipped:
        metadata["skipped_bad_lines"] = parsed.skipped
    return b.build(name=name, metadata=metadata)
