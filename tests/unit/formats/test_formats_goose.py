"""The Goose reader (``pruner.formats.goose``): a ``goose session export`` document.

Goose records usage per session, not per request: the session's accumulated tokens (else its
latest request's) are the last assistant message's usage, marked ``usage_scope: session``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner import load_session
from pruner.errors import FormatError
from pruner.formats import loads
from pruner.replay import bill

SAMPLE = Path(__file__).resolve().parents[3] / "sample_sessions" / "goose_export.json"
RAW = json.loads(SAMPLE.read_text(encoding="utf-8"))


def _doc(conversation, **fields) -> str:
    return json.dumps({"id": "20260102_1", "working_dir": "/w", "name": "n", "provider_name": "anthropic",
                       "model_config": {"model_name": "claude-sonnet-4-5"}, **fields, "conversation": conversation})


def _msg(role, *content, created=1767312000):
    return {"role": role, "created": created, "content": list(content), "metadata": {"userVisible": True}}


def test_the_sessions_accumulated_tokens_are_one_usage_on_the_last_assistant_message():
    session = load_session(SAMPLE)
    usages = [(m.role, m.metadata["usage"], m.metadata["usage_scope"]) for m in session.messages
              if "usage" in m.metadata]
    assert usages == [("assistant", {"input": RAW["accumulated_input_tokens"],
                                     "output": RAW["accumulated_output_tokens"], "cache_read": 0, "cache_write": 0},
                       "session")]
    assert session.messages[-1].metadata["usage"] and session.messages[-1].role == "assistant"
    assert bill(session).requests[0].model == RAW["model_config"]["model_name"]


def test_without_accumulated_tokens_the_latest_requests_are_used_and_none_is_no_usage():
    conv = [_msg("user", {"type": "text", "text": "hi"}), _msg("assistant", {"type": "text", "text": "ok"})]
    latest = loads(_doc(conv, input_tokens=70, output_tokens=7), format="goose")
    assert latest.messages[-1].metadata["usage"]["input"] == 70
    assert "usage" not in loads(_doc(conv), format="goose").messages[-1].metadata


def test_tool_requests_and_responses_become_calls_and_results():
    conv = [_msg("user", {"type": "text", "text": "list"}),
            _msg("assistant", {"type": "toolRequest", "id": "t1", "toolCall": {
                "status": "success", "value": {"name": "developer__shell", "arguments": {"command": "ls"}}}}),
            _msg("user", {"type": "toolResponse", "id": "t1", "toolResult": {
                "status": "success", "value": [{"type": "text", "text": "a.txt"}]}}),
            _msg("assistant", {"type": "text", "text": "one file"})]
    s = loads(_doc(conv, accumulated_input_tokens=10, accumulated_output_tokens=2), format="goose")
    assert [m.role for m in s.messages] == ["user", "assistant", "tool", "assistant"]
    assert s.messages[1].tool_calls[0].arguments == {"command": "ls"}
    assert s.messages[2].content == "a.txt" and s.messages[2].tool_call_id == "t1"


def test_tokens_without_a_reply_are_kept_on_a_message_of_their_own():
    s = loads(_doc([_msg("user", {"type": "text", "text": "hi"})], accumulated_input_tokens=5,
                   accumulated_output_tokens=0), format="goose")
    assert s.messages[-1].metadata["usage"]["input"] == 5 and s.messages[-1].metadata["source"]["usage_only"]


@pytest.mark.parametrize(("conversation", "where"), [
    ([_msg("robot")], "$.conversation[0].role"),
    ([{"role": "user", "created": 1, "content": "hi"}], "$.conversation[0].content"),
    ([_msg("user", {"type": "toolResponse", "id": "x", "toolResult": "ok"})],
     "$.conversation[0].content[0].toolResult"),
])
def test_a_shape_it_cannot_read_is_refused_in_one_line_naming_the_place(conversation, where):
    with pytest.raises(FormatError) as err:
        loads(_doc(conversation), format="goose", file="g.json")
    assert str(err.value).startswith(f"g.json: {where}:") and "\n" not in str(err.value)
