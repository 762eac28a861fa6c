"""The OpenCode reader (``pruner.formats.opencode``): an ``opencode export`` document, one request per step.

Figures are recomputed here from the raw JSON: each ``step-finish`` part is one request with its own
tokens and cost; reasoning is billed as output; a turn without steps is its message's own usage.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner import load_session
from pruner.errors import FormatError
from pruner.formats import loads
from pruner.replay import bill, default_prices

SAMPLE = Path(__file__).resolve().parents[3] / "sample_sessions" / "opencode_export.json"
RAW = json.loads(SAMPLE.read_text(encoding="utf-8"))


def _doc(*messages) -> str:
    return json.dumps({"info": {"id": "ses_x", "title": "t", "directory": "/w"},
                       "messages": [{"info": i, "parts": p} for i, p in messages]})


def _assistant(mid="msg_a", **extra):
    return {"id": mid, "role": "assistant", "modelID": "claude-sonnet-4-5", "providerID": "anthropic",
            "time": {"created": 1767312000000}, **extra}


def _finish(pid, inp, out, reasoning=0, read=0, write=0, cost=0.0):
    return {"id": pid, "type": "step-finish", "cost": cost,
            "tokens": {"input": inp, "output": out, "reasoning": reasoning, "cache": {"read": read, "write": write}}}


def test_every_step_finish_of_the_export_is_one_request_with_its_own_usage_and_cost():
    finishes = [p for m in RAW["messages"] for p in m["parts"] if p["type"] == "step-finish"]
    session = load_session(SAMPLE)
    usages = [m.metadata["usage"] for m in session.messages if "usage" in m.metadata]
    assert len(usages) == len(finishes)
    for u, p in zip(usages, finishes):
        t = p["tokens"]
        assert (u["input"], u["output"], u["cache_read"], u["cache_write"], u["cost"]) == (
            t["input"], t["output"] + t["reasoning"], t["cache"]["read"], t["cache"]["write"], p["cost"])
    b = bill(session)
    assert b.billed_recorded_cost == pytest.approx(sum(p["cost"] for p in finishes))
    assert len(b.requests) == len(finishes) and b.unpriced_requests == 0


def test_tool_parts_become_calls_answered_by_their_output_in_the_step_that_made_them():
    session = load_session(SAMPLE)
    tools = [p for m in RAW["messages"] for p in m["parts"] if p["type"] == "tool"]
    calls = [c for m in session.messages for c in m.tool_calls]
    assert [(c.id, c.name, c.arguments) for c in calls] == [(p["callID"], p["tool"], p["state"]["input"])
                                                            for p in tools]
    results = {m.tool_call_id: m for m in session.messages if m.role == "tool"}
    for p in tools:
        r = results[p["callID"]]
        expected = p["state"]["output"] if p["state"]["status"] == "completed" else p["state"]["error"]
        assert r.content == expected and r.metadata["is_error"] == (p["state"]["status"] != "completed")
    # each result comes right after the assistant message of its step
    for k, m in enumerate(session.messages):
        if m.role == "tool":
            before = [x for x in session.messages[:k] if x.role != "tool"][-1]
            assert m.tool_call_id in {c.id for c in before.tool_calls}


def test_a_turn_without_steps_is_billed_at_its_messages_tokens_and_cost():
    tokens = {"input": 900, "output": 150, "reasoning": 50, "cache": {"read": 0, "write": 2048}}
    s = loads(_doc(({"id": "u", "role": "user", "time": {"created": 1}}, [{"type": "text", "text": "hi"}]),
                   (_assistant(tokens=tokens, cost=0.25), [{"id": "p1", "type": "text", "text": "ok"}])),
              format="opencode")
    assert s.messages[-1].metadata["usage"] == {"input": 900, "output": 200, "cache_read": 0, "cache_write": 2048,
                                                "reasoning": 50, "cost": 0.25}
    p = default_prices().find("claude-sonnet-4-5")
    assert p is not None and p.cache_write_5m is not None
    assert bill(s).dollars == pytest.approx((900 * p.input + 2048 * p.cache_write_5m + 200 * p.output) / 1e6)


def test_an_unfinished_step_and_an_interrupted_call_are_kept_without_usage():
    parts = [{"id": "a", "type": "step-start"}, {"id": "b", "type": "text", "text": "one"}, _finish("c", 10, 1),
             {"id": "d", "type": "step-start"},
             {"id": "e", "type": "tool", "callID": "t1", "tool": "bash", "state": {"status": "running", "input": {}}}]
    s = loads(_doc((_assistant(tokens={"input": 99, "output": 9}, cost=1.0), parts)), format="opencode")
    assert [m.role for m in s.messages] == ["assistant", "assistant", "tool"]
    assert "usage" in s.messages[0].metadata and "usage" not in s.messages[1].metadata
    assert s.messages[2].content == "[Tool execution was interrupted]" and s.messages[2].metadata["is_error"]


def test_a_cost_out_of_range_drops_that_requests_usage_and_says_so():
    parts = [{"id": "a", "type": "step-start"}, _finish("b", 10, 1, cost=-3), {"id": "c", "type": "step-start"},
             _finish("d", 10, 1, cost=0.5)]
    s = loads(_doc((_assistant(), parts)), format="opencode")
    assert "usage" not in s.messages[0].metadata and s.messages[1].metadata["usage"]["cost"] == 0.5
    repairs = s.metadata["repairs"]
    assert any(r["kind"] == "invalid_usage" and "parts[1].cost = -3" in r["message"] for r in repairs)


def test_an_unknown_part_type_is_kept_and_reported():
    parts = [{"id": "a", "type": "hologram", "x": 1}, {"id": "b", "type": "text", "text": "ok"}]
    s = loads(_doc((_assistant(), parts)), format="opencode")
    assert s.messages[0].metadata["source"]["parts"] == [parts[0]]
    assert any(r["kind"] == "unknown_entries" for r in s.metadata["repairs"])


@pytest.mark.parametrize(("doc", "where"), [
    ({"info": {}, "messages": {}}, "$"),
    ({"info": {}, "messages": [{"info": {"role": "user"}, "parts": {}}]}, "$.messages[0].parts"),
    ({"info": {}, "messages": [{"info": {"role": "robot"}, "parts": []}]}, "$.messages[0].info.role"),
    ({"info": {}, "messages": [{"info": _assistant(), "parts": [{"type": "tool", "callID": "c", "tool": "t",
                                                                 "state": "done"}]}]}, "$.messages[0].parts[0].state"),
])
def test_a_shape_it_cannot_read_is_refused_in_one_line_naming_the_place(doc, where):
    with pytest.raises(FormatError) as err:
        loads(json.dumps(doc), format="opencode", file="x.json")
    assert str(err.value).startswith(f"x.json: {where}:") and "\n" not in str(err.value)
