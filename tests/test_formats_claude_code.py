"""Claude Code session JSONL: merged assistant lines, results that are not turns, skipped metadata."""

from __future__ import annotations

import json

from pruner.formats import load_session, loads
from pruner.engine.prune import prune

SAMPLE = "claude_code.jsonl"


def _lines(samples):
    return [json.loads(line) for line in (samples / SAMPLE).read_text().splitlines() if line.strip()]


def test_assistant_lines_sharing_a_message_id_are_merged(samples):
    raw = _lines(samples)
    session = load_session(samples / SAMPLE)
    assistant_ids = [e["message"]["id"] for e in raw if e.get("type") == "assistant"]
    assistants = [m for m in session.messages if m.role == "assistant"]
    assert len(assistants) == len(dict.fromkeys(assistant_ids)) < len(assistant_ids)
    merged = next(m for m in assistants if m.metadata["source"].get("merged_uuids"))
    raw_blocks = [e for e in raw if e.get("type") == "assistant"
                  and e["message"]["id"] == merged.metadata["source"]["message_id"]]
    assert merged.content == raw_blocks[0]["message"]["content"][0]["text"]
    assert [c.id for c in merged.tool_calls] == [b["message"]["content"][0]["id"] for b in raw_blocks[1:]]
    last_usage = raw_blocks[-1]["message"]["usage"]
    assert merged.metadata["usage"]["output"] == last_usage["output_tokens"]
    assert merged.metadata["usage"]["cache_read"] == last_usage["cache_read_input_tokens"]


def test_tool_result_lines_are_results_not_turns(samples):
    raw = _lines(samples)
    session = load_session(samples / SAMPLE)
    typed_by_user = [e for e in raw if e.get("type") == "user" and isinstance(e["message"]["content"], str)]
    assert session.last_turn == len(typed_by_user)
    results = [m for m in session.messages if m.tool_call_id]
    raw_results = [b for e in raw if e.get("type") == "user" and isinstance(e["message"]["content"], list)
                   for b in e["message"]["content"] if b.get("type") == "tool_result"]
    assert [r.tool_call_id for r in results] == [b["tool_use_id"] for b in raw_results]
    calls = {c.id: c.name for m in session.messages for c in m.tool_calls}
    assert all(r.tool_name == calls[r.tool_call_id] for r in results)
    assert [r.metadata["is_error"] for r in results] == [b.get("is_error", False) for b in raw_results]
    assert any("toolUseResult" in r.metadata.get("source", {}) for r in results)  # kept, not dropped


def test_metadata_lines_are_skipped_and_counted(samples):
    raw = _lines(samples)
    session = load_session(samples / SAMPLE)
    others = [e["type"] for e in raw if e.get("type") not in ("user", "assistant")]
    assert sum(session.metadata["source"]["skipped_entries"].values()) == len(others)
    assert session.metadata["source"]["sessionId"] == raw[1]["sessionId"] == session.name


def test_read_then_edit_expires_the_read(samples):
    session = load_session(samples / SAMPLE)
    result = prune(session)
    read = next(m for m in session.messages if m.tool_name == "Read")
    decision = next(d for d in result.decisions if d.id == read.id)
    assert (decision.status, decision.rule) == ("expired", "file_state")


def _entry(kind, uuid, message, **extra):
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": None, "sessionId": "s", "isSidechain": False,
                       "message": message, **extra})


def test_sidechains_are_left_out_and_compaction_is_recorded():
    lines = [
        _entry("user", "u1", {"role": "user", "content": "start"}),
        _entry("user", "x1", {"role": "user", "content": "sub-agent task"}, isSidechain=True),
        json.dumps({"type": "system", "subtype": "compact_boundary", "uuid": "b1", "sessionId": "s",
                    "compactMetadata": {"trigger": "auto", "preTokens": 155000}}),
        _entry("user", "u2", {"role": "user", "content": "This session is being continued. Summary: ..."},
               isCompactSummary=True),
        _entry("user", "u3", {"role": "user", "content": "go on"}),
    ]
    s = loads("\n".join(lines))
    assert [m.id for m in s.messages] == ["u1", "u2", "u3"]
    assert s.messages[1].role == "summary" and s.messages[1].metadata["kind"] == "compaction"
    (c,) = s.metadata["recorded_compactions"]
    assert (c["entry_id"], c["tokens_before"], c["position_index"]) == ("b1", 155000, 1)
    assert s.metadata["source"]["skipped_entries"] == {"sidechain": 1}


def test_a_repeated_line_is_dropped_and_reported_not_refused():
    # Claude Code writes some lines more than once (see tests/test_reliability_defects.py, defect 17).
    line = _entry("user", "u1", {"role": "user", "content": "hi"})
    s = loads(line + "\n" + line, file="x.jsonl")
    assert [m.id for m in s.messages] == ["u1"]
    assert [(r["kind"], r["lines"]) for r in s.metadata["repairs"]] == [("repeated_lines", [2])]
