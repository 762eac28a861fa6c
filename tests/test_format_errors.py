"""Bad input gives one FormatError naming the file, the line or JSON path, and what is wrong.

Every case of the issue is one entry of ``CASES``; each is checked through the
library (message content) and through the CLI (exit 2, one stderr line, no
traceback), and the input file is never modified.
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


# name -> (file bytes, extra load options, substrings the message must contain)
CASES: dict[str, tuple[bytes, dict, tuple[str, ...]]] = {
    "empty file": (b"  \n\n", {}, ("empty",)),
    "binary data": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", {}, ("binary",)),
    "invalid utf-8": (b'[{"role": "user",\n "content": "caf\xe9"}]', {}, (":2:", "UTF-8")),
    "truncated json": (b'[{"role": "user", "content": "hi"},\n {"role": "assistant", "cont', {},
                       (":2:", "truncated")),
    "one bad jsonl line": (
        _jsonl(PI_HEADER, _pi_entry("a", None, "hi"))[:-1] + b'\n{"type": "message", "id": "b",\n'
        + _jsonl(_pi_entry("c", "a", "again")), {}, (":3:", "invalid JSON", "--skip-bad-lines")),
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
    "duplicate ids": (_jsonl(PI_HEADER, _pi_entry("a", None, "hi"), _pi_entry("a", None, "again")), {},
                      (":3:", "duplicate entry id 'a'", "line 2")),
    "deeply nested json": (b"[" * DEEP + b"]" * DEEP, {}, ("nested too deeply",)),
    "deeply nested jsonl line": (_jsonl(PI_HEADER) + b'{"x": ' + b"[" * DEEP + b"]" * DEEP + b"}\n", {},
                                 (":2:", "nested too deeply")),
    "over the size limit": (b'[{"role": "user", "content": "' + b"x" * 500 + b'"}]', {"max_bytes": 100},
                            ("100-byte limit", "--max-bytes")),
    "ambiguous format": (b'[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]', {},
                         ("ambiguous", "openai_chat", "anthropic", "--format")),
}


@pytest.fixture(params=sorted(CASES), ids=lambda n: n.replace(" ", "-"))
def case(request, tmp_path):
    data, options, needles = CASES[request.param]
    path = tmp_path / "transcript.data"
    path.write_bytes(data)
    return path, data, options, needles


def test_every_case_is_a_located_format_error(case):
    path, data, options, needles = case
    before = os.stat(path)
    with pytest.raises(FormatError) as info:
        load_session(path, **options)
    message = str(info.value)
    assert message.startswith(str(path)), message  # names the file first
    for needle in needles:
        assert needle in message, (needle, message)
    assert path.read_bytes() == data and os.stat(path).st_mtime_ns == before.st_mtime_ns


def _cli_args(path: Path, options: dict) -> list[str]:
    args = ["inspect", str(path)]
    if "format" in options:
        args += ["--format", options["format"]]
    if "max_bytes" in options:
        args += ["--max-bytes", str(options["max_bytes"])]
    return args


def test_cli_prints_one_line_and_exits_2(case, capsys):
    path, data, options, needles = case
    assert main(_cli_args(path, options)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(path) in lines[0] and needles[0] in lines[0]
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
    path = tmp_path / "pi.jsonl"
    path.write_bytes(data)
    bad_lines = sum(1 for line in data.decode().splitlines() if line.strip() and not _parses(line))
    session = load_session(path, skip_bad_lines=True)
    assert session.metadata["skipped_bad_lines"] == bad_lines >= 1
    assert [m.id for m in session.messages] == ["a", "c"]
    assert main(["inspect", str(path), "--skip-bad-lines"]) == 0
    out, err = capsys.readouterr()
    assert f"skipped {bad_lines} unreadable line" in err


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
