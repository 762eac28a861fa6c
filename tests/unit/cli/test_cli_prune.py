"""`pruner prune` end to end, in a subprocess as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pruner import Message, Session, ToolCall, prune
from pruner.formats.export import validate_openai_messages
from pruner.formats import load_session, save_session
from tests.support.paths import ROOT

DEMO = ROOT / "sample_sessions" / "native_demo.jsonl"


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pruner", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **(env or {})}, timeout=120)


def test_prune_writes_kept_session_and_report(tmp_path):
    session = Session.of([
        Message("u1", "user", "price? DEFINE:q"),
        Message("a1", "assistant", "", tool_calls=(ToolCall("c1", "quote", {"sku": 1}),)),
        Message("r1", "tool", "The quote for sku 1 is 12 dollars before tax and shipping, valid for thirty days "
                "from today for orders of up to one hundred units.", tool_call_id="c1"),
        Message("u2", "user", "again"),
        Message("a2", "assistant", "", tool_calls=(ToolCall("c2", "quote", {"sku": 1}),)),
        Message("r2", "tool", "The quote for sku 1 is 13 dollars before tax and shipping, valid for thirty days "
                "from today for orders of up to one hundred units.", tool_call_id="c2"),
    ], name="written-by-library")
    src = tmp_path / "in.jsonl"
    save_session(session, src)
    out, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    proc = run("prune", str(src), "-o", str(out), "--report-json", str(report))
    assert proc.returncode == 0, proc.stderr
    assert "messages: 6 -> 5" in proc.stdout and "tiktoken/o200k_base" in proc.stdout
    data = json.loads(report.read_text())
    expected = prune(session)
    for key in ("messages_before", "messages_after", "tokens_before", "tokens_after"):
        assert data[key] == getattr(expected.stats, key)
    assert data["encoding"] == "tiktoken/o200k_base"
    assert data["decisions"][2] == {"id": "r1", "status": "expired", "rule": "superseded_call",
                                    "reason": expected.decisions[2].reason, "related": "r2"}
    assert load_session(out) == expected.kept


def test_prune_to_openai_is_api_valid_and_encoding_selectable(tmp_path):
    out = tmp_path / "out.json"
    proc = run("prune", str(DEMO), "-o", str(out), "--to", "openai", "--encoding", "cl100k_base")
    assert proc.returncode == 0, proc.stderr
    assert "tiktoken/cl100k_base" in proc.stdout
    validate_openai_messages(json.loads(out.read_text()))


@pytest.mark.parametrize("content, needle", [
    ("", "the file is empty"),
    ('{"pruner_session": 1}\n{"id": "a", "role": "wizard", "content": "x"}\n', ":2: field 'role' is 'wizard'"),
    ("\x00\x01binary", "binary data"),
])
def test_bad_input_exits_2_with_one_line_and_no_traceback(tmp_path, content, needle):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    before = bad.read_bytes()
    proc = run("prune", str(bad))
    assert proc.returncode == 2
    assert needle in proc.stderr and str(bad) in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr
    assert bad.read_bytes() == before


def test_refuses_to_overwrite_its_input(tmp_path):
    src = tmp_path / "s.jsonl"
    src.write_bytes(DEMO.read_bytes())
    proc = run("prune", str(src), "-o", str(src))
    assert proc.returncode == 2 and "refusing to overwrite" in proc.stderr
    assert src.read_bytes() == DEMO.read_bytes()


@pytest.mark.slow
def test_output_is_byte_identical_across_hash_seeds(tmp_path):
    outputs = []
    for seed in ("0", "1", "12345"):
        out, rep = tmp_path / f"o{seed}.jsonl", tmp_path / f"r{seed}.json"
        proc = run("prune", str(DEMO), "-o", str(out), "--report-json", str(rep), env={"PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
        report = json.loads(rep.read_text())
        report.pop("elapsed_ms")
        outputs.append((out.read_bytes(), json.dumps(report, sort_keys=True)))
    assert outputs[0] == outputs[1] == outputs[2]
