"""SWE-agent trajectories: tool_call_ids lists, reused call ids, trajectory steps kept."""

from __future__ import annotations

import json

from pruner.formats import load_session, loads
from pruner.engine.prune import prune
from tests.support.file_reads import assert_edited_reads_are_kept, reads_edited_later

SAMPLE = "swe_agent.traj"


def _raw(samples):
    return json.loads((samples / SAMPLE).read_text())


def test_every_observation_is_linked_to_its_call(samples):
    raw = _raw(samples)
    session = load_session(samples / SAMPLE)
    raw_calls = [c for m in raw["history"] for c in m.get("tool_calls") or []]
    calls = [c for m in session.messages for c in m.tool_calls]
    assert [c.name for c in calls] == [c["function"]["name"] for c in raw_calls]
    assert len({c.id for c in calls}) == len(calls)  # reused ids made distinct
    reused = len(raw_calls) - len({c["id"] for c in raw_calls})
    assert reused >= 1 and sum(c.id not in {r["id"] for r in raw_calls} for c in calls) == reused
    results = [m for m in session.messages if m.tool_call_id]
    assert len(results) == sum(len(m.get("tool_call_ids") or []) for m in raw["history"])
    by_id = {c.id: c for c in calls}
    # each observation answers the call made just before it
    for i, m in enumerate(session.messages):
        if m.tool_call_id:
            assert session.messages[i - 1].tool_calls[0].id == m.tool_call_id
            assert m.tool_name == by_id[m.tool_call_id].name


def test_trajectory_steps_and_info_are_kept(samples):
    raw = _raw(samples)
    session = load_session(samples / SAMPLE)
    actions = [m for m in session.messages if m.metadata.get("source", {}).get("message_type") == "action"]
    assert [a.metadata["source"]["trajectory_step"]["execution_time"] for a in actions] == [
        s["execution_time"] for s in raw["trajectory"]]
    assert session.metadata["source"]["info"] == raw["info"]
    assert actions[0].metadata["source"]["thought"] == raw["history"][2]["thought"]


def test_rerun_supersedes_and_the_edited_view_is_kept(samples):
    session = load_session(samples / SAMPLE)
    result = prune(session)
    expired = {d.id: d.rule for d in result.decisions if d.status == "expired"}
    first_run = next(m for m in session.messages if m.tool_name == "bash")
    view = next(m for m in session.messages if m.tool_name == "str_replace_editor")
    # The rerun supersedes the first run, whose result is shorter than the placeholder that would
    # answer it: it is kept, and its decision says so (a removal pays for itself: issue 34).
    decision = result.decision(first_run.id)
    assert expired == {} and decision.status == "kept"
    assert decision.reason.startswith("placeholder would be longer: superseded_call")
    assert any(r == view.id for r, _ in reads_edited_later(session))
    assert_edited_reads_are_kept(session, result)


def test_one_observation_answering_two_calls():
    doc = {"history": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "pwd", "arguments": "{}"}}]},
        {"role": "tool", "content": "x.py\n/testbed", "tool_call_ids": ["a", "b"]}], "info": {}}
    s = loads(json.dumps(doc))
    assert [(m.tool_call_id, m.tool_name) for m in s.messages[2:]] == [("a", "ls"), ("b", "pwd")]
    assert s.messages[2].content == "x.py\n/testbed" and "answers this call too" in s.messages[3].content
