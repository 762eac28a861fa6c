"""Bad input gives one FormatError naming the file, the line or JSON path, and what is wrong.

Every case of the issue is one entry of ``CASES``; each is checked through the
library (message content, and no command-line flag in it: the dashboard shows
the same message) and through the CLI (exit 2, one stderr line naming the flag
that would help, no traceback), and the input file is never modified. Agent
logs (Claude Code, Pi, Codex) repair damaged lines instead of refusing them
(tests/unit/formats/test_reader_and_cli_regressions.py), so the JSONL cases use a native file,
which stays strict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pruner.cli import main
from pruner.errors import FormatError
from pruner.formats import DEFAULT_MAX_BYTES, load_session, loads

DEEP = 10_000
PI_HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/w"}


def _jsonl(*rows) -> bytes:
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def _pi_entry(eid, parent, text):
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": "t",
            "message": {"role": "user", "content": text}}


NATIVE_HEADER = {"pruner_session": 1, "name": "n", "source_format": "native", "metadata": {}}


def _native(*texts):
    return {"id": texts[0], "role": "user", "content": texts[1]}


# name -> (file bytes, extra load options, substrings the message must contain)
CASES: dict[str, tuple[bytes, dict, tuple[str, ...]]] = {
    "empty file": (b"  \n\n", {}, ("empty",)),
    "binary data": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", {}, ("binary",)),
    "invalid utf-8": (b'[{"role": "user",\n "content": "caf\xe9"}]', {}, (":2:", "UTF-8")),
    "truncated json": (b'[{"role": "user", "content": "hi"},\n {"role": "assistant", "cont', {},
                       (":2:", "truncated")),
    "one bad jsonl line": (
        _jsonl(NATIVE_HEADER, _native("a", "hi"))[:-1] + b'\n{"id": "b", "role": \n'
        + _jsonl(_native("c", "again")), {}, (":3:", "invalid JSON", "skip such lines")),
    "gemini toolCalls not a list": (
        b'{"sessionId": "s", "projectHash": "p", "messages": [{"id": "u", "type": "user", "content": "hi"},'
        b' {"id": "g", "type": "gemini", "content": "", "toolCalls": {"id": "c"}}]}', {},
        ("$.messages[1].toolCalls", "must be a list")),
    "opencode tool state not an object": (
        b'{"info": {"id": "ses_1"}, "messages": [{"info": {"id": "m", "role": "assistant"}, "parts":'
        b' [{"type": "tool", "callID": "c", "tool": "t", "state": "done"}]}]}', {},
        ("$.messages[0].parts[0].state", "must be an object")),
    "goose message content not a list": (
        b'{"id": "20260102_1", "working_dir": "/w", "conversation": [{"role": "user", "created": 1,'
        b' "content": "hi"}]}', {}, ("$.conversation[0].content", "must be a list")),
    "qwen code result for no call": (
        _jsonl({"uuid": "u1", "sessionId": "s", "type": "user", "cwd": "/w",
                "message": {"role": "user", "parts": [{"text": "hi"}]}},
               {"uuid": "t1", "sessionId": "s", "type": "tool_result", "cwd": "/w", "message": {
                   "role": "user", "parts": [{"functionResponse": {"id": "c9", "name": "f", "response": {}}}]}}),
        {}, (":2:", "message.parts[0].functionResponse", "'c9'", "no earlier tool call")),
    "qwen code parts not a list": (
        _jsonl({"uuid": "u1", "sessionId": "s", "type": "user", "cwd": "/w", "usageMetadata": {},
                "message": {"role": "user", "parts": {"text": "hi"}}}),
        {}, (":1:", "message.parts", "must be a list")),
    "copilot cli tool requests not a list": (
        _jsonl({"type": "session.start", "id": "e0", "data": {"sessionId": "s", "context": {"cwd": "/w"}}},
               {"type": "assistant.message", "id": "e1", "data": {"messageId": "m", "content": "",
                                                                   "toolRequests": {"toolCallId": "t"}}}),
        {}, (":2:", "data.toolRequests", "must be a list")),
    "amp content of the wrong type": (
        b'{"id": "T-1", "messages": [{"role": "user", "messageId": 0, "content": [{"type": "text", "text": "hi"}]},'
        b' {"role": "assistant", "messageId": 1, "content": 42}]}', {},
        ("$.messages[1].content", "must be a list of blocks")),
    "wrong top-level type": (b'{"conversation": []}', {"format": "openai_chat"},
                             ("$", "top-level value is an object", "'messages'")),
    "message without role": (b'{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},'
                             b' {"content": "x"}]}', {}, ("$.messages[2]", "no 'role'")),
    "unknown role": (b'[{"role": "system", "content": "s"}, {"role": "robot", "content": "beep"}]', {},
                     ("$[1].role", "'robot'", "expected one of")),
    "content of wrong type": (b'[{"role": "system", "content": "s"}, {"role": "user", "content": 42}]', {},
                              ("$[1].content", "must be a string or a list", "a number")),
    "result without its call": (
        b'[{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_x", "content": "1"}]', {},
        ("$[1]", "'call_x'", "no earlier tool call")),
    "duplicate ids": (_jsonl(NATIVE_HEADER, _native("a", "hi"), _native("a", "again")), {},
                      (":3:", "field 'id' duplicates message #0")),
    "deeply nested json": (b"[" * DEEP + b"]" * DEEP, {}, ("nested too deeply",)),
    "deeply nested jsonl line": (_jsonl(NATIVE_HEADER) + b'{"x": ' + b"[" * DEEP + b"]" * DEEP + b"}\n", {},
                                 (":2:", "nested too deeply")),
    "over the size limit": (b'[{"role": "user", "content": "' + b"x" * 500 + b'"}]', {"max_bytes": 100},
                            ("100-byte limit",)),
    "ambiguous format": (b'[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]', {},
                         ("ambiguous", "openai_chat", "anthropic")),
}

#: The flag the CLI's line names for the cases whose error carries a setting.
CLI_FLAGS = {"one bad jsonl line": "--skip-bad-lines", "over the size limit": "--max-bytes",
             "ambiguous format": "--format NAME"}


@pytest.fixture(params=sorted(CASES), ids=lambda n: n.replace(" ", "-"))
def case(request, tmp_path):
    data, options, needles = CASES[request.param]
    path = tmp_path / "transcript.data"
    path.write_bytes(data)
    return path, data, options, needles, request.param


def test_every_case_is_a_located_format_error(case):
    path, data, options, needles, _ = case
    before = os.stat(path)
    with pytest.raises(FormatError) as info:
        load_session(path, **options)
    message = str(info.value)
    assert message.startswith(str(path)), message  # names the file first
    for needle in needles:
        assert needle in message, (needle, message)
    assert " --" not in message, message  # no front end's flag: the dashboard shows this message too
    assert path.read_bytes() == data and os.stat(path).st_mtime_ns == before.st_mtime_ns


def _cli_args(path: Path, options: dict) -> list[str]:
    args = ["inspect", str(path)]
    if "format" in options:
        args += ["--format", options["format"]]
    if "max_bytes" in options:
        args += ["--max-bytes", str(options["max_bytes"])]
    return args


def test_cli_prints_one_line_and_exits_2(case, capsys):
    path, data, options, needles, name = case
    assert main(_cli_args(path, options)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(path) in lines[0] and needles[0] in lines[0]
    assert CLI_FLAGS.get(name, "") in lines[0]
    assert path.read_bytes() == data


@pytest.mark.parametrize("name", ["deeply nested json", "truncated json", "binary data"])
def test_cli_subprocess_has_no_traceback(name, tmp_path):
    data, options, needles = CASES[name]
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    proc = subprocess.run([sys.executable, "-m", "pruner", *_cli_args(path, options)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert needles[0] in proc.stderr


def test_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    body = b'[{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]'
    path.write_bytes(b"\xef\xbb\xbf" + body)
    assert [m.content for m in load_session(path).messages] == ["s", "hi"]


def test_skip_bad_lines_skips_and_counts(tmp_path, capsys):
    data, _, _ = CASES["one bad jsonl line"]
    path = tmp_path / "native.jsonl"
    path.write_bytes(data)
    bad_lines = [n for n, line in enumerate(data.decode().split("\n"), 1) if line.strip() and not _parses(line)]
    session = load_session(path, skip_bad_lines=True)
    assert session.metadata["skipped_bad_lines"] == len(bad_lines) >= 1
    assert [m.id for m in session.messages] == ["a", "c"]
    assert main(["inspect", str(path), "--skip-bad-lines"]) == 0
    out, err = capsys.readouterr()
    assert f"skipped {len(bad_lines)} line that is not a JSON object (line {bad_lines[0]})" in err
    assert f"repaired:    skipped {len(bad_lines)} line" in out


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def test_size_limit_default_and_refusal_before_reading(tmp_path):
    assert DEFAULT_MAX_BYTES == 200 * 1024 * 1024  # the default
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as fh:  # sparse: refused from its size, never read into memory
        fh.truncate(DEFAULT_MAX_BYTES + 1)
    with pytest.raises(FormatError, match="over the 209,715,200-byte limit"):
        load_session(huge)


def test_explicit_format_overrides_detection():
    text = '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]'
    assert loads(text, format="anthropic").source_format == "anthropic"
    assert loads(text, format="openai").source_format == "openai_chat"  # alias
    with pytest.raises(FormatError, match="unknown format 'yaml'"):
        loads(text, format="yaml")


def test_unknown_content_is_not_guessed():
    with pytest.raises(FormatError, match="unknown format"):
        loads("just some notes\nabout nothing\n", file="notes.txt")
    with pytest.raises(FormatError, match="notes.json: unknown format"):
        loads("42", file="notes.json")


# --- whatever the input, the only failure is a FormatError -------------------------------------

from hypothesis import given, strategies as st  # noqa: E402

from pruner.errors import PrunerError  # noqa: E402
from pruner.formats import FORMATS, load_bytes  # noqa: E402

_scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(
    ["", "user", "assistant", "tool", "system", "toolResult", "message", "session", "c1", "text", "tool_use",
     "tool_result", "function_call", "response_item", "payload", "reasoning", "compaction", "toolCall",
     "thinking", "custom_tool_call", "function_call_output", "compacted", "event_msg", "session_meta",
     "bashExecution", "token_count", "branch_summary", "custom_message", "assistant", "image"])
_keys = st.sampled_from(["role", "content", "type", "id", "parentId", "tool_calls", "tool_call_id", "function",
                         "name", "arguments", "message", "messages", "payload", "call_id", "output", "input",
                         "tool_use_id", "toolCallId", "history", "tool_call_ids", "uuid", "version", "summary",
                         "text", "traj", "system", "info", "last_token_usage", "firstKeptEntryId",
                         "firstKeptEntryIndex", "is_error", "isError", "usage", "thinking", "instructions",
                         "isSidechain", "isCompactSummary", "subtype", "trajectory", "toolName", "command"])
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=5),
                     max_leaves=40)


@given(st.binary(max_size=300))
def test_random_bytes_give_a_session_or_a_format_error(data):
    try:
        load_bytes(data, file="fuzz.bin")
    except PrunerError as exc:
        assert str(exc).startswith("fuzz.bin")


_TYPES = st.sampled_from(["message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                          "custom_tool_call_output", "compaction", "branch_summary", "custom_message", "session",
                          "response_item", "event_msg", "compacted", "session_meta", "turn_context", "user",
                          "assistant", "system", "summary", "text", "tool_use", "tool_result", "toolCall", "label"])
_ROLES = st.sampled_from(["user", "assistant", "tool", "system", "toolResult", "bashExecution", "function",
                          "developer", "custom", "branchSummary", "robot"])


@st.composite
def _record(draw, depth=0):
    """An object that looks like a transcript record: a known type/role plus random fields."""
    rec = draw(st.dictionaries(_keys, _json, max_size=5))
    if draw(st.booleans()):
        rec["type"] = draw(_TYPES)
    if draw(st.booleans()):
        rec["role"] = draw(_ROLES)
    if depth < 2 and draw(st.booleans()):
        key = draw(st.sampled_from(["content", "message", "payload", "tool_calls", "summary", "info", "function"]))
        rec[key] = draw(st.lists(_record(depth + 1), max_size=3) | _record(depth + 1))
    return rec


_documents = (st.lists(_record(), max_size=6)
              | st.builds(lambda k, v: {k: v}, st.sampled_from(["messages", "history", "input", "output", "traj"]),
                          st.lists(_record(), max_size=6))
              | _json)


@given(_documents, st.sampled_from(sorted(FORMATS)), st.booleans())
@pytest.mark.slow
def test_random_json_in_any_format_gives_a_session_or_a_format_error(value, fmt, as_lines):
    if as_lines and isinstance(value, list):
        text = "\n".join(json.dumps(v) for v in value)
    else:
        text = json.dumps(value)
    try:  # the module's own loader: the registry's last-resort net must not hide a bug here
        FORMATS[fmt].loads(text, file="fuzz.json")
    except PrunerError as exc:
        assert str(exc).startswith("fuzz.json")
