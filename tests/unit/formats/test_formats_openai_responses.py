"""OpenAI Responses items: messages, grouped calls, outputs, reasoning, stored responses."""

from __future__ import annotations

import json

from pruner.formats.export import to_openai_messages, validate_openai_messages
from pruner.formats import load_session, loads
from pruner.engine.prune import prune
from tests.support.file_reads import assert_edited_reads_are_kept, expired_rules

SAMPLE = "openai_responses.json"


def _raw(samples):
    return json.loads((samples / SAMPLE).read_text())


def test_sample_maps_every_item(samples):
    raw = _raw(samples)
    session = load_session(samples / SAMPLE)
    assert session.messages[0].role == "system" and session.messages[0].content == raw["instructions"]
    items = raw["input"]
    calls = [i for i in items if i["type"] in ("function_call", "custom_tool_call")]
    outputs = [i for i in items if i["type"].endswith("_output")]
    assert [c.id for m in session.messages for c in m.tool_calls] == [c["call_id"] for c in calls]
    results = [m for m in session.messages if m.tool_call_id]
    assert [r.tool_call_id for r in results] == [o["call_id"] for o in outputs]
    names = {c["call_id"]: c["name"] for c in calls}
    assert all(r.tool_name == names[r.tool_call_id] for r in results)
    assert session.last_turn == sum(i["type"] == "message" and i["role"] == "user" for i in items)
    reasoning = next(i for i in items if i["type"] == "reasoning")
    thinking_holder = next(m for m in session.messages if m.metadata.get("thinking"))
    assert thinking_holder.metadata["thinking"] == reasoning["summary"][0]["text"]
    assert thinking_holder.tool_calls[0].id == calls[0]["call_id"]  # the call right after the reasoning


def test_sample_prunes_repeat_and_keeps_the_patched_read(samples):
    session = load_session(samples / SAMPLE)
    result = prune(session)
    assert set(expired_rules(result)) == {"superseded_call"}
    assert_edited_reads_are_kept(session, result)
    validate_openai_messages(to_openai_messages(result))


def test_consecutive_calls_join_one_assistant_message():
    items = [{"role": "user", "content": "weather in Oslo and Rome?"},
             {"type": "function_call", "call_id": "a", "name": "weather", "arguments": "{\"city\": \"Oslo\"}"},
             {"type": "function_call", "call_id": "b", "name": "weather", "arguments": "{\"city\": \"Rome\"}"},
             {"type": "function_call_output", "call_id": "a", "output": "rain"},
             {"type": "function_call_output", "call_id": "b", "output": "sun"}]
    s = loads(json.dumps(items))
    assert [m.role for m in s.messages] == ["user", "assistant", "tool", "tool"]
    assert [c.arguments["city"] for c in s.messages[1].tool_calls] == ["Oslo", "Rome"]
    validate_openai_messages(to_openai_messages(s))


def test_stored_response_object_and_unknown_items_are_kept():
    doc = {"id": "resp_1", "object": "response", "model": "gpt-4.1",
           "output": [{"type": "web_search_call", "id": "ws_1", "status": "completed"},
                      {"type": "message", "id": "msg_1", "role": "assistant",
                       "content": [{"type": "output_text", "text": "Found it.", "annotations": []}]}]}
    s = loads(json.dumps(doc))
    assert s.source_format == "openai_responses"
    assert [(m.id, m.content) for m in s.messages] == [("msg_1", "Found it.")]
    assert s.metadata["source"]["unmapped_items"] == [{"at": "$.output[0]", "item": doc["output"][0]}]
    assert s.metadata["source"]["model"] == "gpt-4.1"
