"""Anthropic Messages export: always API-valid, placeholders for pruned results, merged roles."""

from __future__ import annotations

import pytest
from hypothesis import given

from pruner.errors import ExportError
from pruner.formats.export.anthropic import CONTINUATION, to_anthropic_messages, validate_anthropic_messages
from pruner.model import Message, Session, ToolCall
from pruner.engine.prune import PruneConfig, prune

from tests.strategies import sessions


def _call(mid, cid, name="search", args=None, content=""):
    return Message(id=mid, role="assistant", content=content,
                   tool_calls=(ToolCall(id=cid, name=name, arguments=args or {"q": "refunds"}),))


def _result(mid, cid, text, **kw):
    return Message(id=mid, role="tool", content=text, tool_call_id=cid, **kw)


@given(sessions())
def test_every_pruned_session_exports_valid(session):
    for config in (PruneConfig(), PruneConfig(orphan_policy="drop_pair"), PruneConfig(restore=False)):
        validate_anthropic_messages(to_anthropic_messages(prune(session, config)))
    validate_anthropic_messages(to_anthropic_messages(session))


@given(sessions())
def test_every_kept_call_is_answered_and_nothing_else(session):
    result = prune(session)
    body = to_anthropic_messages(result)
    uses = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
    answers = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
    kept_calls = [c for m in result.kept.messages for c in m.tool_calls]
    assert len(uses) == len(kept_calls) == len(answers)
    assert [b["name"] for b in uses] == [c.name for c in kept_calls]


# Longer than the placeholder that answers it once superseded (a removal pays for itself: issue 34).
REFUNDS = ("Refunds within 30 days of delivery, unworn items, to the original payment method; store credit "
           "on request, and exchanges free of charge within the same period.")


def test_pruned_result_gets_the_placeholder_prune_chose():
    s = Session.of([Message(id="u1", role="user", content="refund policy?"),
                    _call("a1", "c1"), _result("r1", "c1", REFUNDS),
                    Message(id="u2", role="user", content="again please"),
                    _call("a2", "c2"), _result("r2", "c2", REFUNDS)])
    result = prune(s)
    assert "c1" in result.placeholders  # r1 was superseded, its call a1 kept
    body = to_anthropic_messages(result)
    answers = {b["tool_use_id"]: b["content"] for m in body["messages"] for b in m["content"]
               if b["type"] == "tool_result"}
    assert answers["c1"] == result.placeholders["c1"]
    assert answers["c2"] == REFUNDS


def test_system_merging_labels_and_start():
    s = Session.of([
        Message(id="s", role="system", content="Be brief."),
        Message(id="a0", role="assistant", content="Welcome back."),
        Message(id="u", role="user", content="hi"),
        Message(id="d", role="retrieved_doc", content="Doc text"),
        Message(id="s2", role="system", content="Mid-way rule"),
        Message(id="a1", role="assistant", content="Part one."),
        Message(id="a2", role="assistant", content="Part two."),
    ])
    body = to_anthropic_messages(s)
    validate_anthropic_messages(body)
    assert body["system"] == "Be brief."
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert body["messages"][0]["content"][0]["text"] == CONTINUATION
    texts = [b["text"] for b in body["messages"][2]["content"]]
    assert texts[0] == "hi" and texts[1].endswith("Doc text") and texts[2].endswith("Mid-way rule")
    assert [b["text"] for b in body["messages"][3]["content"]] == ["Part one.", "Part two."]


def test_ids_are_made_api_safe_consistently():
    s = Session.of([Message(id="u", role="user", content="go"), _call("a", "call.1#2"),
                    _result("r", "call.1#2", "out", metadata={"is_error": True})])
    body = to_anthropic_messages(s)
    validate_anthropic_messages(body)
    use = body["messages"][1]["content"][0]
    answer = body["messages"][2]["content"][0]
    assert use["id"] == answer["tool_use_id"] and "." not in use["id"] and "#" not in use["id"]
    assert answer["is_error"] is True


def test_result_without_its_call_is_dropped_and_empty_text_skipped():
    s = Session(messages=(Message(id="u", role="user", content="go"), Message(id="e", role="assistant", content=""),
                          _result("r", "gone", "orphan")))
    body = to_anthropic_messages(s)
    validate_anthropic_messages(body)
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "go"}]}]


def test_non_object_arguments_are_wrapped():
    s = Session.of([Message(id="u", role="user", content="go"), _call("a", "c", "shell", "ls -la"),
                    _result("r", "c", "x")])
    assert to_anthropic_messages(s)["messages"][1]["content"][0]["input"] == {"input": "ls -la"}


@pytest.mark.parametrize("body, problem", [
    ({"messages": []}, "no user or assistant message"),
    ({"messages": [{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]}, "starting with user"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": " "}]}]}, "non-empty"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]},
                   {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]}]},
     "no tool_result"),
    ({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]},
     "answers no tool_use"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]},
                   {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]},
                   {"role": "user", "content": [{"type": "text", "text": "y"},
                                                {"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]},
     "must come before"),
    ({"system": ["x"], "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}, "system"),
])
def test_validator_rejects_what_the_api_rejects(body, problem):
    with pytest.raises(ExportError, match=problem):
        validate_anthropic_messages(body)
