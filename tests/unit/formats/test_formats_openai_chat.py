"""OpenAI Chat Completions importer: the sample, every mapped feature, and a round-trip property."""

from __future__ import annotations

import json

import pytest
from hypothesis import given

from pruner.errors import FormatError
from pruner.formats.export import to_openai_messages, validate_openai_messages
from pruner.formats import load_dialogues, load_session, loads
from pruner.formats import openai_chat
from pruner.engine.prune import prune

from tests.strategies import sessions
from tests.support.file_reads import assert_edited_reads_are_kept


def test_sample_structure_matches_the_raw_file(samples):
    raw = json.loads((samples / "openai_chat.json").read_text())
    session = load_session(samples / "openai_chat.json")
    raw_calls = [c for m in raw["messages"] for c in m.get("tool_calls") or []]
    calls = {c.id: c for m in session.messages for c in m.tool_calls}
    assert [c["id"] for c in raw_calls] == list(calls)
    assert [c.arguments for c in calls.values()] == [json.loads(c["function"]["arguments"]) for c in raw_calls]
    results = [m for m in session.messages if m.tool_call_id]
    assert len(results) == sum(m["role"] == "tool" for m in raw["messages"])
    for r in results:  # linked to their call, tool name derived from the call
        assert r.tool_name == calls[r.tool_call_id].name
    assert session.last_turn == sum(m["role"] == "user" for m in raw["messages"])
    assert session.metadata["source"] == {"model": raw["model"]}
    parts_msg = next(m for m in raw["messages"] if isinstance(m.get("content"), list))
    assert parts_msg["content"][0]["text"] in [m.content for m in session.messages]


def test_sample_prunes_the_repeat_and_keeps_the_read_it_edits(samples):
    session = load_session(samples / "openai_chat.json")
    result = prune(session)
    rules = {d.rule for d in result.decisions if d.status == "expired"}
    assert rules == {"superseded_call"}
    assert_edited_reads_are_kept(session, result)
    validate_openai_messages(to_openai_messages(result))


def test_legacy_function_call_developer_role_and_reasoning():
    text = json.dumps([
        {"role": "developer", "content": "Be exact."},
        {"role": "user", "content": "2+2?", "name": "ann"},
        {"role": "assistant", "content": None, "function_call": {"name": "calc", "arguments": "{\"e\": \"2+2\"}"},
         "reasoning_content": "use the calculator"},
        {"role": "function", "name": "calc", "content": "4"},
        {"role": "assistant", "content": "4", "refusal": None},
    ])
    s = loads(text)
    assert [m.role for m in s.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert s.messages[0].metadata["source"] == {"role": "developer"}
    assert s.messages[1].metadata["source"] == {"name": "ann"}
    call = s.messages[2].tool_calls[0]
    assert (call.name, call.arguments) == ("calc", {"e": "2+2"})
    assert s.messages[2].metadata["thinking"] == "use the calculator"
    assert (s.messages[3].tool_call_id, s.messages[3].tool_name) == (call.id, "calc")
    assert s.messages[4].metadata["source"] == {"refusal": None}  # unmapped, kept


def test_reused_call_ids_stay_distinct_and_link_to_the_latest_call():
    msg = lambda cid, q: {"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": "search", "arguments": json.dumps({"q": q})}}]}
    text = json.dumps([{"role": "user", "content": "go"}, msg("c1", "a"), {"role": "tool", "tool_call_id": "c1",
                       "content": "A"}, msg("c1", "b"), {"role": "tool", "tool_call_id": "c1", "content": "B"}])
    s = loads(text)
    first, second = s.messages[1].tool_calls[0], s.messages[3].tool_calls[0]
    assert first.id != second.id and first.id == "c1"
    assert s.messages[4].tool_call_id == second.id and s.messages[4].metadata["source"]["original_call_id"] == "c1"


def test_retrieval_tools_option_maps_results_to_documents(samples):
    s = load_session(samples / "openai_chat.json", retrieval_tools={"get_order"})
    roles = {m.tool_name: m.role for m in s.messages if m.tool_call_id}
    assert roles["get_order"] == "retrieved_doc" and roles["read_file"] == "tool"
    assert all(m.role == "tool" for m in load_session(samples / "openai_chat.json").messages if m.tool_call_id)


def test_dialogue_records_need_a_choice(tmp_path):
    record = lambda i: {"task_id": i, "reward": 1.0, "traj": [{"role": "system", "content": "s"},
                                                              {"role": "user", "content": f"task {i}"}]}
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([record(0), record(1), record(2)]))
    with pytest.raises(FormatError, match="holds 3 dialogues"):
        load_session(path)
    assert load_session(path, dialogue=2).messages[1].content == "task 2"
    every = load_dialogues(path)
    assert [s.metadata["source"]["task_id"] for s in every] == [0, 1, 2]
    with pytest.raises(FormatError, match="dialogue 7 does not exist"):
        load_session(path, dialogue=7)


@given(sessions())
def test_export_then_import_is_a_fixed_point(session):
    """Importing what the exporter writes and exporting again gives the same messages."""
    exported = to_openai_messages(prune(session))
    validate_openai_messages(exported)
    again = to_openai_messages(loads(json.dumps(exported), format="openai_chat"))
    assert again == exported


def test_dumps_is_detected_as_openai_chat(samples):
    text = openai_chat.dumps(load_session(samples / "anthropic_messages.json"))
    assert loads(text).source_format == "openai_chat"


def test_assistant_messages_record_the_requests_model():
    doc = {"model": "gpt-4o-2024-08-06", "messages": [{"role": "user", "content": "hi"},
                                                      {"role": "assistant", "content": "ok"}]}
    s = loads(json.dumps(doc), format="openai_chat")
    assert [m.metadata.get("model") for m in s.messages] == [None, "gpt-4o-2024-08-06"]
