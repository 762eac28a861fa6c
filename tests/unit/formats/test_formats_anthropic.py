"""Anthropic Messages importer: blocks, tool results that are not user turns, round trip."""

from __future__ import annotations

import json

from hypothesis import given

from pruner.formats.export import to_anthropic_messages, validate_anthropic_messages
from pruner.formats import load_session, loads
from pruner.engine.prune import prune

from tests.strategies import sessions
from tests.support.file_reads import assert_edited_reads_are_kept, expired_rules

SAMPLE = "anthropic_messages.json"


def _raw(samples):
    return json.loads((samples / SAMPLE).read_text())


def test_tool_result_only_user_messages_are_not_turns(samples):
    raw = _raw(samples)
    session = load_session(samples / SAMPLE)

    def has_user_text(m):
        c = m["content"]
        return isinstance(c, str) or any(b["type"] != "tool_result" for b in c)
    user_turns = sum(m["role"] == "user" and has_user_text(m) for m in raw["messages"])
    assert session.last_turn == user_turns
    assert [m.role for m in session.messages].count("user") == user_turns
    raw_results = [b for m in raw["messages"] if isinstance(m["content"], list)
                   for b in m["content"] if b["type"] == "tool_result"]
    results = [m for m in session.messages if m.tool_call_id]
    assert [r.tool_call_id for r in results] == [b["tool_use_id"] for b in raw_results]
    assert [r.metadata["is_error"] for r in results] == [b.get("is_error", False) for b in raw_results]
    calls = {c.id: c for m in session.messages for c in m.tool_calls}
    assert all(r.tool_name == calls[r.tool_call_id].name for r in results)


def test_system_thinking_usage_and_unmapped_fields(samples):
    raw = _raw(samples)
    s = load_session(samples / SAMPLE)
    assert s.messages[0].role == "system" and s.messages[0].content == raw["system"]
    first = next(m for m in s.messages if m.role == "assistant")
    thinking = raw["messages"][1]["content"][0]
    assert first.metadata["thinking"] == thinking["thinking"]
    assert thinking["signature"] not in first.content and thinking["thinking"] not in first.content
    last = s.messages[-1]
    u = raw["messages"][-1]["usage"]
    assert last.metadata["usage"] == {"input": u["input_tokens"], "output": u["output_tokens"],
                                      "cache_read": u["cache_read_input_tokens"],
                                      "cache_write": u["cache_creation_input_tokens"]}
    assert s.metadata["source"] == {"model": raw["model"], "max_tokens": raw["max_tokens"]}


def test_mixed_user_message_gives_result_then_user_text():
    text = json.dumps({"messages": [
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"},
                                     {"type": "text", "text": "and now delete it"}]}]})
    s = loads(text)
    assert [(m.role, m.turn) for m in s.messages] == [("user", 1), ("assistant", 1), ("tool", 1), ("user", 2)]
    assert s.messages[3].content == "and now delete it"


def test_images_are_kept_in_metadata():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    s = loads(json.dumps([{"role": "user", "content": [image, {"type": "text", "text": "what is this?"}]}]))
    assert s.messages[0].content == "[image]\nwhat is this?"
    assert s.messages[0].metadata["source"]["blocks"] == [image]


def test_sample_prunes_and_exports_valid(samples):
    session = load_session(samples / SAMPLE)
    result = prune(session)
    assert set(expired_rules(result)) == {"superseded_call"}
    assert_edited_reads_are_kept(session, result)
    validate_anthropic_messages(to_anthropic_messages(result))


def _flat(body):
    """Per message: its text (blocks joined) and its tool blocks; merging may join text blocks."""
    out = []
    for m in body["messages"]:
        text = "\n".join(b["text"] for b in m["content"] if b["type"] == "text")
        tools = [{k: v for k, v in b.items()} for b in m["content"] if b["type"] != "text"]
        out.append((m["role"], text, tools))
    return body["system"], out


@given(sessions())
def test_import_keeps_what_the_export_wrote(session):
    body = to_anthropic_messages(prune(session))
    validate_anthropic_messages(body)
    again = to_anthropic_messages(loads(json.dumps(body), format="anthropic"))
    validate_anthropic_messages(again)
    assert _flat(again) == _flat(body)
    assert to_anthropic_messages(loads(json.dumps(again), format="anthropic")) == again  # a fixed point


def test_a_reply_records_its_model_and_request_id():
    doc = {"model": "claude-opus-4-1-20250805", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "id": "msg_1", "content": "ok", "usage": {
            "input_tokens": 3, "output_tokens": 2, "cache_creation_input_tokens": 10,
            "cache_creation": {"ephemeral_5m_input_tokens": 4, "ephemeral_1h_input_tokens": 6}}},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": "ok", "model": "claude-sonnet-4-5"}]}
    s = loads(json.dumps(doc), format="anthropic")
    first, second = [m for m in s.messages if m.role == "assistant"]
    assert (first.metadata["model"], first.metadata["request_id"]) == ("claude-opus-4-1-20250805", "msg_1")
    assert first.metadata["usage"]["cache_write_1h"] == 6 and first.metadata["usage"]["cache_write"] == 10
    assert second.metadata["model"] == "claude-sonnet-4-5" and "request_id" not in second.metadata


def test_a_block_type_that_is_a_list_does_not_crash_format_detection():
    """CI's fuzz run (hypothesis) found a file whose content block has ``"type": []``: detection looked the
    type up in a set, and a list cannot be hashed (TypeError, a traceback instead of a clear error).

    Defect 27."""
    from pruner import PrunerError
    from pruner.formats import detect_format, loads

    text = ('[{"role": "user", "content": [{"unknown_field": null}, {"type": [], "unknown_field": null}], '
            '"unknown_field": null}]')
    for attempt in (lambda: detect_format(text, file="fuzz.json"), lambda: loads(text, file="fuzz.json"),
                    lambda: loads(text, file="fuzz.json", format="anthropic")):
        try:
            assert attempt()
        except PrunerError as e:  # refused with a clear error (here: ambiguous, or a field named): fine
            assert str(e).startswith("fuzz.json")
