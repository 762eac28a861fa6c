"""Pi session JSONL, versions 1-3: the tree path, compactions, branch summaries, entry kinds."""

from __future__ import annotations

import json

import pytest

from pruner.errors import FormatError
from pruner.formats import load_session, loads
from pruner.engine.prune import prune
from tests.support.file_reads import assert_edited_reads_are_kept, expired_rules

SAMPLE = "pi_session.jsonl"


def _entries(samples):
    rows = [json.loads(line) for line in (samples / SAMPLE).read_text().splitlines() if line.strip()]
    return rows[0], rows[1:]


def _path_ids(entries):
    """Independent walk: from the last entry back to the root by parentId."""
    by_id = {e["id"]: e for e in entries}
    out, cur = [], entries[-1]
    while cur is not None:
        out.append(cur["id"])
        cur = by_id.get(cur["parentId"]) if cur["parentId"] else None
    return out[::-1]


def test_sample_is_version_3_with_an_abandoned_branch(samples):
    header, entries = _entries(samples)
    assert header["version"] == 3
    path = _path_ids(entries)
    assert len(path) < len(entries)  # the sample really has a branch that was left


def test_conversation_is_the_path_from_the_last_entry(samples):
    _, entries = _entries(samples)
    path = set(_path_ids(entries))
    session = load_session(samples / SAMPLE)
    in_context = {e["id"] for e in entries if e["id"] in path
                  and e["type"] in ("message", "compaction", "branch_summary", "custom_message")}
    assert {m.id for m in session.messages} == in_context
    assert session.metadata["source"]["abandoned_entries"] == len(entries) - len(path)
    order = [e["id"] for e in entries if e["id"] in in_context]
    assert [m.id for m in session.messages] == order


def test_compaction_is_recorded_and_inserted_as_summary(samples):
    _, entries = _entries(samples)
    session = load_session(samples / SAMPLE)
    (raw,) = [e for e in entries if e["type"] == "compaction"]
    (c,) = session.metadata["recorded_compactions"]
    ids = [m.id for m in session.messages]
    assert c["entry_id"] == raw["id"] and c["summary"] == raw["summary"]
    assert c["tokens_before"] == raw["tokensBefore"]
    assert c["first_kept_message_id"] == raw["firstKeptEntryId"]
    assert c["first_kept_index"] == ids.index(raw["firstKeptEntryId"])
    summary = session.messages[c["position_index"]]
    assert (summary.id, summary.role, summary.metadata["kind"]) == (raw["id"], "summary", "compaction")
    assert summary.metadata["source"]["details"] == raw["details"]


def test_blocks_usage_and_links(samples):
    _, entries = _entries(samples)
    session = load_session(samples / SAMPLE)
    path = set(_path_ids(entries))
    msgs = {e["id"]: e["message"] for e in entries if e["type"] == "message" and e["id"] in path}
    for m in session.messages:
        raw = msgs.get(m.id)
        if raw is None:
            continue
        if raw["role"] == "assistant":
            assert [c.id for c in m.tool_calls] == [b["id"] for b in raw["content"] if b["type"] == "toolCall"]
            assert m.metadata["usage"]["cache_read"] == raw["usage"]["cacheRead"]
            assert m.metadata["source"]["usage"]["cost"] == raw["usage"]["cost"]  # unmapped, kept
            thinking = [b["thinking"] for b in raw["content"] if b["type"] == "thinking"]
            assert m.metadata.get("thinking") == ("\n".join(thinking) if thinking else None)
        if raw["role"] == "toolResult":
            assert (m.tool_call_id, m.tool_name, m.metadata["is_error"]) == (
                raw["toolCallId"], raw["toolName"], raw["isError"])
    kinds = {e["type"] for e in session.metadata["source"]["entries"]}
    assert kinds == {e["type"] for e in entries if e["id"] in path} - {
        "message", "compaction", "branch_summary", "custom_message"}
    assert session.name == next(e["name"] for e in entries if e["type"] == "session_info")


def test_sample_prunes_the_repeated_command_and_keeps_the_read_it_edits(samples):
    session = load_session(samples / SAMPLE)
    result = prune(session)
    assert set(expired_rules(result)) == {"superseded_call"}
    assert_edited_reads_are_kept(session, result)


def test_version_1_is_linear_with_index_based_compaction():
    rows = [{"type": "session", "id": "s", "timestamp": "t", "cwd": "/w"},
            {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "one"}},
            {"type": "message", "timestamp": "t", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "two"}]}},
            {"type": "thinking_level_change", "timestamp": "t", "thinkingLevel": "high"},
            {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "three"}},
            {"type": "compaction", "timestamp": "t", "summary": "one, two", "firstKeptEntryIndex": 3,
             "tokensBefore": 99}]
    s = loads("\n".join(json.dumps(r) for r in rows))
    assert [m.content for m in s.messages] == ["one", "two", "three", "one, two"]
    assert [m.id for m in s.messages][:2] == ["e2", "e3"]  # ids from line numbers
    (c,) = s.metadata["recorded_compactions"]
    assert (c["first_kept_message_id"], c["first_kept_index"], c["position_index"]) == ("e5", 2, 3)
    assert s.metadata["source"]["version"] == 1


def test_version_2_hook_messages_bash_and_custom_messages():
    rows = [{"type": "session", "version": 2, "id": "s", "timestamp": "t", "cwd": "/w"},
            {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "hi"}},
            {"type": "message", "id": "b", "parentId": "a", "message": {
                "role": "bashExecution", "command": "ls", "output": "x.py", "exitCode": 0, "cancelled": False,
                "truncated": False}},
            {"type": "message", "id": "c", "parentId": "b", "message": {
                "role": "hookMessage", "customType": "todo", "content": "remember tests", "display": True}},
            {"type": "custom_message", "id": "d", "parentId": "c", "customType": "ctx", "content": "extra",
             "display": False}]
    s = loads("\n".join(json.dumps(r) for r in rows))
    assert [(m.role, m.content) for m in s.messages] == [
        ("user", "hi"), ("user", "Ran `ls`\nx.py"), ("user", "remember tests"), ("user", "extra")]
    assert s.messages[1].metadata["source"]["exitCode"] == 0
    assert s.messages[3].metadata["kind"] == "custom_message"


def test_a_long_chain_imports_without_recursion():
    n = 20_000
    rows = [{"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/w"}]
    for i in range(n):
        rows.append({"type": "message", "id": f"e{i}", "parentId": f"e{i - 1}" if i else None,
                     "message": {"role": "user" if i % 2 == 0 else "assistant",
                                 "content": "hello" if i % 2 == 0 else [{"type": "text", "text": "hi"}]}})
    s = loads("\n".join(json.dumps(r) for r in rows))
    assert len(s.messages) == n and s.last_turn == n // 2


@pytest.mark.parametrize("entry, problem", [
    ({"type": "message", "id": "b", "parentId": "zzz", "message": {"role": "user", "content": "x"}},
     "parentId 'zzz' names no entry"),
    ({"type": "message", "id": "b", "parentId": "a", "message": {"role": "assistant", "content": "x"}},
     "assistant 'content' must be a list"),
    ({"type": "message", "id": "b", "parentId": "a", "message": {"content": "x"}}, "message has no 'role'"),
])
def test_broken_entries_name_the_line(entry, problem):
    rows = [{"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/w"},
            {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "hi"}}, entry]
    with pytest.raises(FormatError, match=r"pi\.jsonl:3: .*" + problem):
        loads("\n".join(json.dumps(r) for r in rows), file="pi.jsonl")


def test_each_reply_records_its_model_and_the_recorded_cost():
    head = json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/w",
                       "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    usage = {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 7, "cost": {"total": 0.0123}}

    def reply(eid, parent, **msg):
        return json.dumps({"type": "message", "id": eid, "parentId": parent, "message": {
            "role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": usage, **msg}})
    lines = [head,
             json.dumps({"type": "message", "id": "u", "parentId": None, "message": {"role": "user", "content": "hi"}}),
             reply("a1", "u"),
             json.dumps({"type": "model_change", "id": "mc", "parentId": "a1", "provider": "openai",
                         "modelId": "gpt-5.1-codex"}),
             reply("a2", "mc"),
             reply("a3", "a2", model="claude-opus-4-5", provider="anthropic")]
    s = loads("\n".join(lines), file="p.jsonl")
    replies = [m for m in s.messages if m.role == "assistant"]
    assert [(m.metadata["model"], m.metadata["provider"]) for m in replies] == [
        ("claude-sonnet-4-5", "anthropic"), ("gpt-5.1-codex", "openai"), ("claude-opus-4-5", "anthropic")]
    assert replies[0].metadata["usage"] == {"input": 10, "output": 5, "cache_read": 100, "cache_write": 7,
                                            "cost": 0.0123}
