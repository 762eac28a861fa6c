"""Regression tests for issue 31 (reliability round 4), the readers' and writers' side: defects 5, 12 and 14,
each named after the behaviour it pins, its defect in its docstring. The ``pruner logs`` defects (1-4, 6-11,
13) are tested on their own branches; the differential fast-vs-full property is in
tests/unit/logs/test_logs_usage_reader.py and the writer scans in tests/unit/core/test_file_writes.py.

Run against the code before the fixes (the branch's parent, 3bc8dc4): every round-4 defect's
test here failed there (12 of 12). The three ``test_guard_r4_...`` tests pass there too: they pin what
the fixes must leave as it was, so they are not named as regression tests.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pruner.errors import FormatError, PrunerError
from pruner.formats import load_session, loads
from pruner.formats.claude_code_usage import read_usage
from pruner.logs.discover import FileState, LogSession
from pruner.logs.money import money_columns
from pruner.logs.row import recorded_cwd, session_facts
from pruner.logs.run import read_session
from tests.support.paths import SAMPLES
from tests.support.cli_run import run_cli

NATIVE = SAMPLES / "native_demo.jsonl"
CLAUDE = SAMPLES / "claude_code.jsonl"


# --- 5: a NUL-byte line: billed by the bill-only reader, refused as binary by the full one -------------

def _claude_line(**fields) -> bytes:
    base = {"parentUuid": None, "isSidechain": False, "sessionId": "s1", "cwd": "/work/x",
            "timestamp": "2026-01-01T10:00:00Z"}
    return json.dumps({**base, **fields}).encode("utf-8")


def _claude_reply(uuid: str, parent: str, rid: str) -> bytes:
    return _claude_line(type="assistant", uuid=uuid, parentUuid=parent, requestId=rid, message={
        "id": "m" + rid, "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0,
                  "cache_creation_input_tokens": 2000}})


def _claude_file(tmp_path: Path, damage: bytes, *, padding: int = 0) -> Path:
    """A two-request Claude Code file with the line ``damage`` between the requests; ``padding`` bytes
    of user text before it move the damage that far into the file."""
    first = _claude_line(type="user", uuid="u1", message={"role": "user", "content": "hi" + "x" * padding})
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join([first, _claude_reply("a1", "u1", "r1"), damage, _claude_reply("a2", "a1", "r2")])
                     + b"\n")
    return path


def _row_both_ways(path: Path) -> tuple[dict, dict]:
    """(the row ``pruner logs --bill-only`` makes, the row the full reader makes) on their shared keys."""
    st_ = os.stat(path)
    row = read_session(LogSession(agent="claude_code", project="p", main=FileState(str(path), st_.st_size,
                                                                                   st_.st_mtime_ns)))
    try:
        full = load_session(path)
    except PrunerError as exc:
        return {"error": row.get("error")}, {"error": str(exc)}
    expected = {"error": None, "format": full.source_format, "cwd": recorded_cwd(full), **session_facts(full),
                **money_columns(full)}
    return {k: row.get(k) for k in expected}, expected


def test_a_nul_byte_line_is_refused_by_both_readers(tmp_path):
    """Round 4, defect 05."""
    path = _claude_file(tmp_path, b"\x00" * 40)
    assert read_usage(str(path)) is None, "the bill-only reader leaves a binary file to the full reader"
    fast, full = _row_both_ways(path)
    assert fast == full
    assert "binary data" in fast["error"] and str(path) in fast["error"]


def test_guard_r4_05_a_nul_byte_far_into_a_file_is_one_damaged_line_to_both(tmp_path):
    """A guard (passes before the fix too): past the binary sniff a NUL line is a line that is not JSON,
    skipped by both readers, and both bill the two requests around it."""
    path = _claude_file(tmp_path, b'{"type": "user", \x00\x00}', padding=65536)  # the sniff's 64 KiB
    fast, full = _row_both_ways(path)
    assert fast == full and fast["error"] is None
    assert fast["requests_main"] == 2


# --- 12: two outputs on one path: exit 0 and only the second output kept ----------------------------------

def _same_path_pairs(tmp_path: Path) -> list[tuple[str, str, str]]:
    """(case, first path, second path): one file named twice, directly or through a link."""
    os.chdir(tmp_path)  # restored by the monkeypatch.chdir fixture the tests take
    (tmp_path / "real.out").write_text("previous\n")
    os.symlink(tmp_path / "real.out", tmp_path / "soft.out")
    os.link(tmp_path / "real.out", tmp_path / "hard.out")
    os.symlink(tmp_path / "new.out", tmp_path / "dangling.out")  # a link to a file not yet written
    return [("the same name", "real.out", "real.out"), ("./X and X", "./real.out", "real.out"),
            ("an absolute and a relative name", str(tmp_path / "real.out"), "real.out"),
            ("a symlink", "real.out", "soft.out"), ("a hard link", "hard.out", "real.out"),
            ("a link to a file not yet written", "dangling.out", "new.out"), ("standard output", "-", "-")]


@pytest.mark.parametrize("command, first, second", [
    (["replay", str(CLAUDE)], "--json", "--csv"),
    (["prune", str(NATIVE)], "-o", "--report-json"),
    (["bench", "--sizes", "50", "--workloads", "tool_agent"], "--json", "--csv"),
])
def test_two_outputs_on_one_path_are_refused_before_anything_is_written(
        tmp_path, capsys, monkeypatch, command, first, second):
    """Round 4, defect 12."""
    monkeypatch.chdir(tmp_path)
    for case, a, b in _same_path_pairs(tmp_path):
        before = {p.name: (p.read_bytes() if p.exists() else None) for p in tmp_path.iterdir()}
        code, out, err = run_cli([*command, first, a, second, b], capsys)
        assert code == 2, f"{case}: exit {code}; {err}"
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, f"{case}: {err}"
        assert first in err and second in err and "own file" in err, f"{case}: {err}"
        after = {p.name: (p.read_bytes() if p.exists() else None) for p in tmp_path.iterdir()}
        assert after == before, f"{case}: something was written"
        assert out == "", f"{case}: the command ran before refusing"


def test_guard_r4_12_two_outputs_on_two_paths_are_both_written(tmp_path, capsys):
    """A guard (passes before the fix too): the check refuses only a shared destination."""
    kept, report = tmp_path / "kept.jsonl", tmp_path / "report.json"
    code, _, err = run_cli(["prune", NATIVE, "-o", kept, "--report-json", report], capsys)
    assert code == 0, err
    assert json.loads(report.read_text())["session"] == "native_demo"
    assert load_session(kept).messages and len(load_session(kept).messages) < len(load_session(NATIVE).messages)


def test_a_report_on_standard_output_is_not_mixed_with_the_summary(capsys):
    """Round 4, defect 12."""
    code, out, err = run_cli(["prune", NATIVE, "--report-json", "-"], capsys)
    assert code == 0, err
    assert json.loads(out)["session"] == "native_demo"  # the whole of stdout is the report
    assert "messages:" in err


def test_replay_json_on_standard_output_is_not_mixed_with_the_table(capsys):
    """Round 4, defect 12."""
    code, out, err = run_cli(["replay", CLAUDE, "--json", "-"], capsys)
    assert code == 0, err
    replies = [json.loads(line) for line in CLAUDE.read_text(encoding="utf-8").splitlines() if line.strip()]
    requests = {e.get("requestId") or e["message"]["id"] for e in replies if e.get("type") == "assistant"}
    assert json.loads(out)["meta"]["requests"] == len(requests) > 0  # the whole of stdout is the JSON
    assert "prices:" in err and "prices:" not in out


# --- 14: a Gemini CLI functionResponse that is not an object -----------------------------------------------

def _gemini(result) -> dict:
    return {"sessionId": "s", "projectHash": "p", "messages": [
        {"id": "u", "type": "user", "content": "hi"},
        {"id": "g", "type": "gemini", "content": "", "model": "gemini-2.5-pro",
         "toolCalls": [{"id": "c1", "name": "read", "args": {"path": "a"}, "status": "success", "result": result}]}]}


@pytest.mark.parametrize("value", [5, None, "text", [1], True])
def test_a_function_response_that_is_no_object_names_its_path(value):
    """Round 4, defect 14."""
    with pytest.raises(FormatError) as caught:
        loads(json.dumps(_gemini([{"functionResponse": value}])), file="chat.json", format="gemini_cli")
    message = str(caught.value)
    assert "AttributeError" not in message and "unexpected structure" not in message, message
    assert "$.messages[1].toolCalls[0].result[0].functionResponse" in message, message
    assert "must be an object" in message and message.startswith("chat.json: ")


def test_guard_r4_14_a_well_formed_function_response_still_reads():
    """A guard (passes before the fix too): the check leaves a recorded result as it was read."""
    session = loads(json.dumps(_gemini([{"functionResponse": {"id": "c1", "name": "read",
                                                              "response": {"output": "the file"}}}])),
                    format="gemini_cli")
    assert [(m.role, m.content) for m in session.messages if m.role == "tool"] == [("tool", "the file")]


_GEMINI_FULL = {"sessionId": "s", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z", "messages": [
    {"id": "u", "type": "user", "content": [{"text": "hi"}], "timestamp": "2026-01-01T00:00:00Z"},
    {"id": "g", "type": "gemini", "content": "hello", "model": "gemini-2.5-pro", "timestamp": "2026-01-01T00:00:01Z",
     "thoughts": [{"subject": "s", "description": "d"}],
     "tokens": {"input": 5000, "output": 10, "cached": 4000, "thoughts": 20, "tool": 0, "total": 5030},
     "toolCalls": [
         {"id": "c1", "name": "read", "args": {"path": "a"}, "status": "success", "timestamp": "2026-01-01T00:00:02Z",
          "result": [{"functionResponse": {"id": "c1", "name": "read", "response": {"output": "text"}}}]},
         {"id": "c2", "name": "read", "args": {"path": "b"}, "status": "error",
          "result": [{"functionResponse": {"id": "c2", "name": "read", "response": {"error": "nope"}}},
                     {"text": "t"}]}]},
    {"id": "i", "type": "info", "content": "note"}]}


def _json_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _json_paths(inner, (*path, key))
    elif isinstance(value, list):
        for k, inner in enumerate(value):
            yield from _json_paths(inner, (*path, k))


_PATHS = [p for p in _json_paths(_GEMINI_FULL) if p]
_JUNK = st.sampled_from([None, True, 0, -1, 5, 2**70, 1.5, "", "x", [], {}, [1, "x"], {"k": "v"}, [None], [5],
                         ["s"], [{}], {"response": 5}, {"functionResponse": None}])


@settings(max_examples=600, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_PATHS), _JUNK, st.booleans())
def test_any_field_of_a_gemini_recording_damaged_is_read_or_refused_with_its_path(path, junk, drop):
    """The sweep: every field (at every depth) of a full recording replaced by a value of another type, or
    left out: the importer reads it or refuses it naming a JSON path, never with Python's error text.

    Round 4, defect 14."""
    doc = copy.deepcopy(_GEMINI_FULL)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if drop and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = copy.deepcopy(junk)
    try:
        loads(json.dumps(doc), file="chat.json", format="gemini_cli")
    except FormatError as exc:
        message = str(exc)
        assert "unexpected structure" not in message and "Error:" not in message, message
        assert "$" in message or "line" in message, message
