"""Codex CLI rollout JSONL: response items are the conversation, event messages are not counted twice."""

from __future__ import annotations

import json

from pruner.analysis.fileops import file_operations
from pruner.formats import load_session, loads
from pruner.engine.prune import prune
from tests.support.file_reads import expired_rules

SAMPLE = "codex_rollout.jsonl"


def _lines(samples):
    return [json.loads(line) for line in (samples / SAMPLE).read_text().splitlines() if line.strip()]


def test_event_messages_are_not_double_counted(samples):
    raw = _lines(samples)
    session = load_session(samples / SAMPLE)
    items = [r["payload"] for r in raw if r["type"] == "response_item"]
    users = [i for i in items if i.get("type") == "message" and i["role"] == "user"]
    assert [m.role for m in session.messages].count("user") == len(users)
    echoed = [r for r in raw if r["type"] == "event_msg" and r["payload"]["type"] in ("user_message", "agent_message")]
    assert echoed  # the sample does repeat the conversation in events
    counts = session.metadata["source"]["event_counts"]
    assert sum(counts.values()) == sum(r["type"] == "event_msg" for r in raw)


def test_calls_outputs_and_reasoning(samples):
    raw = _lines(samples)
    session = load_session(samples / SAMPLE)
    items = [r["payload"] for r in raw if r["type"] == "response_item"]
    call_ids = [i["call_id"] for i in items if i["type"] in ("function_call", "custom_tool_call")]
    assert [c.id for m in session.messages for c in m.tool_calls] == call_ids
    results = [m for m in session.messages if m.tool_call_id]
    assert [r.tool_call_id for r in results] == [i["call_id"] for i in items if i["type"].endswith("_output")]
    first_output = json.loads(next(i for i in items if i["type"] == "function_call_output")["output"])
    assert results[0].content == first_output["output"]  # unwrapped
    assert results[0].metadata["source"]["output_metadata"] == first_output["metadata"]
    reasoning = next(i for i in items if i["type"] == "reasoning")
    first_assistant = next(m for m in session.messages if m.role == "assistant")
    assert first_assistant.metadata["thinking"] == reasoning["summary"][0]["text"]


def test_token_counts_become_usage_of_the_latest_assistant_message(samples):
    raw = _lines(samples)
    session = load_session(samples / SAMPLE)

    def owner(item):  # the imported assistant message an assistant-side item became
        if item["type"] == "message":
            text = item["content"][0]["text"]
            return next(m.id for m in session.messages if m.role == "assistant" and m.content == text)
        return next(m.id for m in session.messages if item["call_id"] in [c.id for c in m.tool_calls])

    expected, latest = {}, None
    for r in raw:
        p = r["payload"]
        if r["type"] == "response_item" and (p["type"].endswith("_call") or p.get("role") == "assistant"):
            latest = owner(p)
        elif r["type"] == "event_msg" and p["type"] == "token_count":
            u = p["info"]["last_token_usage"]
            expected[latest] = {"input": u["input_tokens"] - u["cached_input_tokens"], "output": u["output_tokens"],
                                "cache_read": u["cached_input_tokens"], "cache_write": 0}
            if "reasoning_output_tokens" in u:  # kept apart, already inside output
                expected[latest]["reasoning"] = u["reasoning_output_tokens"]
    got = {m.id: m.metadata["usage"] for m in session.messages if "usage" in m.metadata}
    assert got == expected and len(expected) == sum(
        r["type"] == "event_msg" and r["payload"]["type"] == "token_count" for r in raw)


def test_compaction_and_apply_patch(samples):
    raw = _lines(samples)
    session = load_session(samples / SAMPLE)
    (c,) = session.metadata["recorded_compactions"]
    summary = session.messages[c["position_index"]]
    assert summary.role == "summary" and summary.content == next(
        r["payload"]["message"] for r in raw if r["type"] == "compacted")
    patch = next(c for m in session.messages for c in m.tool_calls if c.name == "apply_patch")
    assert file_operations(patch) == (("edit", "src/main.rs"),)
    assert session.metadata["source"]["turn_contexts"][0]["model"] == "gpt-5-codex"


def test_repeated_test_run_is_superseded(samples):
    result = prune(load_session(samples / SAMPLE))
    assert expired_rules(result) == ["superseded_call"]


def test_older_rollouts_with_bare_items():
    lines = [{"id": "s-old", "timestamp": "2025-05-01T10:00:00Z", "instructions": "Be careful."},
             {"record_type": "state"},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]}]
    s = loads("\n".join(json.dumps(x) for x in lines))
    assert s.source_format == "codex"
    assert [(m.role, m.content) for m in s.messages] == [("system", "Be careful."), ("user", "hi"),
                                                         ("assistant", "hello")]


def _event(kind, payload, t):
    return json.dumps({"timestamp": t, "type": kind, "payload": payload})


def _token_count(i, cached, o, reasoning, total):
    last = {"input_tokens": i, "cached_input_tokens": cached, "output_tokens": o,
            "reasoning_output_tokens": reasoning, "total_tokens": i + o}
    return {"type": "token_count", "info": {"total_token_usage": total, "last_token_usage": last}}


def test_each_token_count_is_one_request_with_its_model_and_reasoning_inside_output():
    say = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    lines = [
        _event("session_meta", {"id": "s1", "model": "gpt-5.1"}, "t0"),
        _event("turn_context", {"model": "gpt-5.5"}, "t1"),
        _event("response_item", {"type": "message", "role": "user",
                                 "content": [{"type": "input_text", "text": "hi"}]}, "t2"),
        _event("response_item", say, "t3"),
        _event("event_msg", _token_count(100, 40, 30, 12, {"n": 1}), "t4"),
        _event("event_msg", _token_count(100, 40, 30, 12, {"n": 1}), "t5"),  # the same totals again: no request
        _event("response_item", dict(say, content=[{"type": "output_text", "text": "more"}]), "t6"),
        _event("event_msg", _token_count(200, 150, 9, 0, {"n": 2}), "t7"),
    ]
    s = loads("\n".join(lines), file="r.jsonl")
    replies = [m for m in s.messages if m.role == "assistant"]
    assert [m.metadata["usage"] for m in replies] == [
        {"input": 60, "output": 30, "cache_read": 40, "cache_write": 0, "reasoning": 12},
        {"input": 50, "output": 9, "cache_read": 150, "cache_write": 0, "reasoning": 0}]
    assert [m.metadata["model"] for m in replies] == ["gpt-5.5", "gpt-5.5"]


def test_a_token_count_out_of_range_drops_that_usage_and_says_so():
    say = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    lines = [_event("response_item", {"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": "hi"}]}, "t1"),
             _event("response_item", say, "t2"),
             _event("event_msg", _token_count(1e307, 0, 3, 0, {"n": 1}), "t3")]
    s = loads("\n".join(lines), file="r.jsonl")
    assert "usage" not in s.messages[-1].metadata
    (repair,) = [r for r in s.metadata["repairs"] if r["kind"] == "invalid_usage"]
    assert repair["lines"] == [3] and "input_tokens" in repair["message"]


def test_a_second_token_count_without_a_reply_of_its_own_is_reported():
    say = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    lines = [_event("response_item", {"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": "hi"}]}, "t1"),
             _event("response_item", say, "t2"),
             _event("event_msg", _token_count(10, 0, 3, 0, {"n": 1}), "t3"),
             _event("event_msg", _token_count(20, 0, 4, 0, {"n": 2}), "t4")]
    s = loads("\n".join(lines), file="r.jsonl")
    assert s.messages[-1].metadata["usage"]["input"] == 10  # the first count stays with its reply
    (repair,) = [r for r in s.metadata["repairs"] if r["kind"] == "usage_without_reply"]
    assert repair["lines"] == [4]
