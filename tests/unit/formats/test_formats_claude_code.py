"""Claude Code session JSONL: merged assistant lines, results that are not turns, skipped metadata."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from pruner.formats import load_session, loads
from pruner.engine.prune import prune
from tests.support.file_reads import assert_edited_reads_are_kept, reads_edited_later

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


def test_read_then_edit_keeps_the_read(samples):
    session = load_session(samples / SAMPLE)
    result = prune(session)
    read = next(m for m in session.messages if m.tool_name == "Read")
    assert any(r == read.id for r, _ in reads_edited_later(session))
    assert_edited_reads_are_kept(session, result)


def _entry(kind, uuid, message, **extra):
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": None, "sessionId": "s", "isSidechain": False,
                       "message": message, **extra})


def test_a_sidechain_is_a_subagent_and_compaction_is_recorded():
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
    assert "skipped_entries" not in s.metadata["source"]  # the sidechain line is not skipped: it is a subagent
    ((chain, sub),) = s.chains[1:]
    assert chain == "x1" and [m.content for m in sub.messages] == ["sub-agent task"]


def test_a_repeated_line_is_dropped_and_reported_not_refused():
    # Claude Code writes some lines more than once (see
    # tests/unit/formats/test_reader_and_cli_regressions.py, defect 17).
    line = _entry("user", "u1", {"role": "user", "content": "hi"})
    s = loads(line + "\n" + line, file="x.jsonl")
    assert [m.id for m in s.messages] == ["u1"]
    assert [(r["kind"], r["lines"]) for r in s.metadata["repairs"]] == [("repeated_lines", [2])]


# --- chains, models, request ids (issue 19) ------------------------------------------------------------------

def _line(kind, uuid, parent, message, **extra):
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "isSidechain": False,
                       "timestamp": extra.pop("timestamp", "2026-01-01T00:00:00Z"), "message": message, **extra})


def _reply(uuid, parent, mid, blocks, usage, *, model="claude-opus-4-1-20250805", rid=None, **extra):
    return _line("assistant", uuid, parent, {"role": "assistant", "id": mid, "model": model, "content": blocks,
                                             "usage": usage}, **({"requestId": rid} if rid else {}), **extra)


def _usage(i, o, r=0, w=0, **more):
    return {"input_tokens": i, "output_tokens": o, "cache_read_input_tokens": r,
            "cache_creation_input_tokens": w, **more}


def test_a_reply_over_several_interleaved_lines_is_one_request_with_the_last_lines_usage():
    text = "\n".join([
        _line("user", "u1", None, {"role": "user", "content": "go"}),
        _reply("a1", "u1", "msg_1", [{"type": "text", "text": "first"}], _usage(3, 1, 100, 7), rid="req_1"),
        _reply("a2", "a1", "msg_1", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}],
               _usage(3, 40, 100, 7), rid="req_1"),
        _line("user", "r1", "a2", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                               "content": "ok"}]}),
        _reply("a3", "a2", "msg_1", [{"type": "text", "text": "more"}], _usage(3, 55, 100, 7), rid="req_1"),
    ])
    s = loads(text)
    (reply,) = [m for m in s.messages if m.role == "assistant"]
    assert reply.metadata["request_id"] == "req_1"
    assert reply.metadata["model"] == "claude-opus-4-1-20250805"
    assert reply.metadata["usage"] == {"input": 3, "output": 55, "cache_read": 100, "cache_write": 7}
    assert reply.metadata["source"]["merged_uuids"] == ["a2", "a3"]


def test_request_id_falls_back_to_the_message_id_and_the_1h_write_is_recorded():
    split = {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 70}
    s = loads("\n".join([_line("user", "u1", None, {"role": "user", "content": "go"}),
                         _reply("a1", "u1", "msg_9", [{"type": "text", "text": "x"}],
                                _usage(1, 2, 0, 100, cache_creation=split))]))
    reply = s.messages[1]
    assert reply.metadata["request_id"] == "msg_9"
    assert reply.metadata["usage"]["cache_write"] == 100 and reply.metadata["usage"]["cache_write_1h"] == 70


def test_a_synthetic_reply_is_marked_and_is_not_a_request():
    s = loads("\n".join([_line("user", "u1", None, {"role": "user", "content": "go"}),
                         _reply("a1", "u1", "msg_s", [{"type": "text", "text": "No response requested."}],
                                _usage(0, 0), model="<synthetic>")]))
    meta = s.messages[1].metadata
    assert meta["synthetic"] is True and "model" not in meta and "request_id" not in meta


def test_sidechains_group_by_root_and_find_their_task_call():
    task = {"type": "tool_use", "id": "task_1", "name": "Task", "input": {"prompt": "look around", "description": "d"}}
    text = "\n".join([
        _line("user", "u1", None, {"role": "user", "content": "start"}),
        _reply("a1", "u1", "m1", [task], _usage(5, 5)),
        _line("user", "s1", None, {"role": "user", "content": "look around"}, isSidechain=True),
        _reply("s2", "s1", "m2", [{"type": "text", "text": "found"}], _usage(9, 9), model="claude-sonnet-4-20250514",
               isSidechain=True),
        _line("user", "x1", None, {"role": "user", "content": "another"}, isSidechain=True),
        _reply("s3", "s2", "m3", [{"type": "text", "text": "done"}], _usage(9, 10), model="claude-sonnet-4-20250514",
               isSidechain=True),
        _line("user", "r1", "a1", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "task_1",
                                                               "content": "found"}]}),
    ])
    s = loads(text)
    assert [m.id for m in s.messages] == ["u1", "a1", "r1"]
    chains = dict(s.chains)
    assert list(chains) == ["main", "s1", "x1"]
    assert [m.id for m in chains["s1"].messages] == ["s1", "s2", "s3"]
    assert chains["s1"].metadata["parent_call"] == "task_1" and "parent_call" not in chains["x1"].metadata
    assert [m.metadata["model"] for m in chains["s1"].messages if m.role == "assistant"] == \
        ["claude-sonnet-4-20250514"] * 2


def test_agent_id_groups_sidechains_and_names_the_chain():
    text = "\n".join([
        _line("user", "u1", None, {"role": "user", "content": "start"}),
        _line("user", "s1", None, {"role": "user", "content": "a"}, isSidechain=True, agentId="abc"),
        _line("user", "s2", None, {"role": "user", "content": "b"}, isSidechain=True, agentId="abc"),
    ])
    s = loads(text)
    ((chain, sub),) = s.chains[1:]
    assert chain == "abc" and sub.metadata["agent_id"] == "abc" and len(sub.messages) == 2


def test_lines_follow_their_parent_links_not_the_file_order():
    text = "\n".join([
        _line("user", "u1", None, {"role": "user", "content": "one"}, timestamp="2026-01-01T00:00:00Z"),
        _line("user", "u3", "u2", {"role": "user", "content": "three"}, timestamp="2026-01-01T00:00:09Z"),
        _line("user", "u2", "u1", {"role": "user", "content": "two"}, timestamp="2026-01-01T00:00:05Z"),
    ])
    assert [m.content for m in loads(text).messages] == ["one", "two", "three"]


def test_the_real_files_chains_hold_every_request_once(real_data):
    # SOURCES.md: requests counted by requestId (else message.id); its figures per file.
    expected = {"task-patterns-998db3cd.jsonl": (217, 135), "ccviewer-fe5e1c67.jsonl": (170, 161),
                "cctrace-phase0-main.jsonl": (100, 0), "codemie-subagent-a485154.jsonl": (6, 0)}
    for name, (total, on_sidechains) in expected.items():
        s = load_session(real_data / "claude-code" / name)
        ids = [m.metadata["request_id"] for _, chain in s.chains for m in chain.messages
               if m.role == "assistant" and "usage" in m.metadata]
        sub_ids = [i for _, chain in s.chains[1:] for m in chain.messages if m.role == "assistant"
                   for i in [m.metadata.get("request_id")] if i]
        assert len(ids) == len(set(ids)) == total, name
        if name == "codemie-subagent-a485154.jsonl":  # its main chain is the subagent's own
            assert s.metadata["subagent_file"] == {"agent_id": "a485154"} and not s.subagents
        else:
            assert len(set(sub_ids)) == on_sidechains, name


def test_subagent_files_beside_a_session_are_its_subagents(tmp_path, real_data):
    main = [
        _line("user", "u1", None, {"role": "user", "content": "start"}),
        _reply("a1", "u1", "m1", [{"type": "tool_use", "id": "task_1", "name": "Task", "input": {"prompt": "p"}}],
               _usage(5, 5)),
        _line("user", "r1", "a1", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "task_1",
                                                               "content": "done"}]},
              toolUseResult={"agentId": "a485154", "status": "completed"}),
    ]
    (tmp_path / "sess.jsonl").write_text("\n".join(main) + "\n")
    (tmp_path / "sess" / "subagents").mkdir(parents=True)
    own = (real_data / "claude-code" / "codemie-subagent-a485154.jsonl").read_text()
    (tmp_path / "sess" / "subagents" / "agent-a485154.jsonl").write_text(own)
    s = load_session(tmp_path / "sess.jsonl")
    ((chain, sub),) = s.chains[1:]
    assert chain == "a485154" and sub.metadata["parent_call"] == "task_1"
    raw = [json.loads(line) for line in own.splitlines() if line.strip()]
    raw_ids = {r.get("requestId") or r["message"]["id"] for r in raw if r.get("type") == "assistant"}
    assert {m.metadata["request_id"] for m in sub.messages if m.role == "assistant"} == raw_ids


def test_subagents_round_trip_through_native_and_are_validated(real_data, tmp_path):
    from dataclasses import replace

    import pytest

    from pruner.errors import InvalidSessionError
    from pruner.formats import save_session
    from pruner.model import validate_session

    s = load_session(real_data / "claude-code" / "task-patterns-998db3cd.jsonl")
    save_session(s, tmp_path / "n.jsonl")
    back = load_session(tmp_path / "n.jsonl")
    assert [(c, x.messages, dict(x.metadata)) for c, x in back.chains[1:]] == \
        [(c, x.messages, dict(x.metadata)) for c, x in s.chains[1:]]
    assert back.messages == s.messages
    bad_sub = replace(s.subagents[0], messages=s.subagents[0].messages[:1] + s.subagents[0].messages[:1])
    with pytest.raises(InvalidSessionError, match="subagent #0"):
        validate_session(replace(s, subagents=(bad_sub,)))


def test_a_subagents_repairs_are_reported_with_the_files_and_its_text_is_fixed():
    text = "\n".join([
        _line("user", "u1", None, {"role": "user", "content": "start"}),
        _line("user", "s1", None, {"role": "user", "content": "half an emoji \ud83d"}, isSidechain=True),
        json.dumps({"type": "Assistant", "uuid": "s2", "parentUuid": "s1", "isSidechain": True, "message": {}}),
    ])
    s = loads(text, file="x.jsonl")
    ((_, sub),) = s.chains[1:]
    assert sub.messages[0].content == "half an emoji \ufffd"
    kinds = {r["kind"]: r for r in s.metadata["repairs"]}
    assert kinds["unknown_entries"]["lines"] == [3] and "replaced_surrogates" in kinds
    assert "repairs" not in sub.metadata


# --- link order: a property, and damage -----------------------------------------------------------------------

@st.composite
def _shuffled_tree(draw):
    n = draw(st.integers(min_value=1, max_value=25))
    parents = [None] + [draw(st.integers(min_value=0, max_value=k - 1)) for k in range(1, n)]
    order = draw(st.permutations(range(n)))
    return parents, order


@given(_shuffled_tree())
def test_every_line_comes_after_its_parent_whatever_the_file_order(tree):
    parents, order = tree
    lines = [_line("user", f"u{k}", None if parents[k] is None else f"u{parents[k]}",
                   {"role": "user", "content": f"m{k}"}) for k in order]
    s = loads("\n".join(lines))
    seen = {m.id: i for i, m in enumerate(s.messages)}
    assert sorted(seen) == sorted(f"u{k}" for k in range(len(parents)))  # nothing lost, nothing added
    for k, parent in enumerate(parents):
        if parent is not None:
            assert seen[f"u{parent}"] < seen[f"u{k}"]


def test_a_parent_cycle_keeps_every_line_and_ends():
    lines = [_line("user", "u1", None, {"role": "user", "content": "one"}),
             _line("user", "a", "b", {"role": "user", "content": "a"}),
             _line("user", "b", "a", {"role": "user", "content": "b"}),
             _line("user", "x", "b", {"role": "user", "content": "x"}, isSidechain=True),
             _line("user", "y", "y", {"role": "user", "content": "self"}, isSidechain=True)]
    s = loads("\n".join(lines))
    assert {m.id for _, chain in s.chains for m in chain.messages} == {"u1", "a", "b", "x", "y"}
