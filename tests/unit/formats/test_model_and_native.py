"""The session model, its validation errors, and the native JSONL round trip."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given

from pruner import InvalidSessionError, Message, Session, ToolCall, prune
from pruner.errors import FormatError
from pruner.formats import load_session, save_session
from pruner.formats.native import dumps, loads
from pruner.model import assign_turns

from tests.strategies import sessions


def test_turns_start_at_each_user_message_and_zero_before_the_first():
    msgs = assign_turns([Message("s", "system", "sys"), Message("u1", "user", "a"),
                         Message("a1", "assistant", "b"), Message("u2", "user", "c")])
    assert [m.turn for m in msgs] == [0, 1, 1, 2]


def test_every_field_round_trips_through_native_jsonl(tmp_path):
    full = Message(
        id="m2", role="tool", content="line one\nline two ✓", turn=3, tool_call_id="c1", tool_name="search",
        tool_call_key="search:x", expires_after_turn=7, defines=("a", "b.c"), refs=("d",), required=True,
        metadata={"usage": {"input": 1}, "nested": [1, {"x": None}]})
    caller = Message(id="m1", role="assistant", content="", turn=3,
                     tool_calls=(ToolCall("c1", "search", {"q": "x", "n": [1, 2]}, key="search:x"),))
    s = Session(messages=(caller, full), name="demo", source_format="native", metadata={"k": "v"})
    path = tmp_path / "s.jsonl"
    save_session(s, path)
    assert load_session(path) == s


@given(sessions())
def test_generated_sessions_round_trip(session):
    assert loads(dumps(session)) == session


@pytest.mark.parametrize("mutate, field", [
    (lambda ms: ms + [replace(ms[0])], "duplicates message #0"),
    (lambda ms: [replace(ms[0], role="robot")] + ms[1:], "field 'role' is 'robot'"),
    (lambda ms: [replace(ms[0], content=42)] + ms[1:], "field 'content' must be a string"),
    (lambda ms: ms + [Message("r9", "tool", "x", tool_call_id="nope")], "field 'tool_call_id' is 'nope'"),
    (lambda ms: [replace(ms[0], id="")] + ms[1:], "field 'id' must be a non-empty string"),
])
def test_bad_sessions_get_an_error_naming_message_and_field(mutate, field):
    msgs = [Message("u1", "user", "hello"), Message("a1", "assistant", "hi")]
    bad = Session(messages=tuple(mutate(list(msgs))))
    snapshot = repr(bad)
    with pytest.raises(InvalidSessionError) as err:
        prune(bad)
    assert field in str(err.value)
    assert "message #" in str(err.value)
    assert repr(bad) == snapshot  # nothing of the input changed


@pytest.mark.parametrize("text, expected", [
    ('{"pruner_session": 1}\n{"id": "a", "role": "user", "content": 3}\n', ":2: field 'content' must be a string"),
    ('{"pruner_session": 1}\n{"id": "a", "content": "x"}\n', ":2: message has no 'role' field"),
    ('{"pruner_session": 1}\n{"id": "a", "role": "user", "content": "x"\n', ":2: invalid JSON"),
    ('{"id": "a", "role": "user"}\n', ":1: first line must be the header"),
    ('{"pruner_session": 1}\n{"id": "a", "role": "user", "content": "x"}\n'
     '{"id": "a", "role": "user", "content": "y"}\n', "duplicates message #0"),
])
def test_native_file_errors_name_file_and_line(text, expected):
    with pytest.raises(FormatError) as err:
        loads(text, file="s.jsonl")
    assert str(err.value).startswith("s.jsonl")
    assert expected in str(err.value)


def test_skip_bad_lines_reports_how_many():
    text = '{"pruner_session": 1}\n{"id": "a", "role": "user", "content": "x"}\nnot json\n{"id": 5}\n'
    s = loads(text, file="s.jsonl", skip_bad_lines=True)
    assert [m.id for m in s.messages] == ["a"]
    assert s.metadata["skipped_bad_lines"] == 2
