"""``pruner compact``: works offline on every sample session; text and JSON reports; -o; the OpenAI path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner.cli import main
from pruner.compaction import CompactionSettings, compact
from pruner.formats.export import validate_openai_messages
from pruner.formats import load_session
from pruner.compaction.sections import SUMMARY_SECTIONS
from tests.support.paths import ROOT, SAMPLES

PI_SESSION = ROOT.parent / "shared" / "data" / "real" / "pi" / "large-session.jsonl"
KEY = "sk-cli-test-4c8e1a9b77d2"


def sample_files() -> list[Path]:
    # Top-level files only: subfolders (bench results) are not sessions.
    return sorted(p for p in SAMPLES.iterdir() if p.is_file() and not p.name.startswith("."))


def test_there_are_sample_sessions():
    assert sample_files(), f"no sample sessions in {SAMPLES}"


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.name)
def test_compact_works_offline_on_every_sample(path, capsys):
    assert main(["compact", str(path), "--force", "--keep-recent-tokens", "40"]) == 0
    out = capsys.readouterr().out
    result = compact(load_session(path), CompactionSettings(keep_recent_tokens=40), force=True)
    assert out.startswith("session:") and "\ntrigger:  yes: triggered by hand" in out
    assert f"tokens:   {result.tokens_before:,} -> {result.tokens_after:,}" in out
    if result.cut_index is None:
        assert f"cut:      none: {result.cut_reason}" in out
    else:
        split = "yes" if result.split_turn else "no"
        assert f"cut:      index {result.cut_index}, message {result.cut_message_id!r}; split turn: {split}" in out
        assert f"sections: {', '.join(result.sections)}" in out
        for name in result.sections:
            assert f"  ## {name}\n" in out


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.name)
def test_json_report_and_output_file(path, tmp_path, capsys):
    out_file = tmp_path / "compacted.jsonl"
    code = main(["compact", str(path), "--force", "--keep-recent-tokens", "40", "--json", "-o", str(out_file)])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["triggered"] is True
    written = load_session(out_file)
    if report["cut_index"] is None:
        assert len(written.messages) == len(load_session(path).messages)
    else:
        assert [m.id for m in written.messages][-len(report["kept"]):] == report["kept"]
        summary = next(m for m in written.messages if m.metadata.get("kind") == "compaction_summary")
        assert report["summary"] in summary.content


def test_without_force_the_trigger_decides(capsys, samples):
    path = samples / "native_demo.jsonl"
    assert main(["compact", str(path)]) == 0
    out = capsys.readouterr().out
    assert "trigger:  no: context is" in out and "cut:      none: the trigger did not fire" in out
    assert main(["compact", str(path), "--context-window", "200", "--reserve-tokens", "10",
                 "--keep-recent-tokens", "40"]) == 0
    out = capsys.readouterr().out
    assert "trigger:  yes: context is" in out and "above the threshold 190" in out


def test_openai_export_of_the_compacted_session_is_api_valid(tmp_path, samples):
    out_file = tmp_path / "messages.json"
    assert main(["compact", str(samples / "native_demo.jsonl"), "--force", "--keep-recent-tokens", "40",
                 "--to", "openai", "-o", str(out_file)]) == 0
    messages = json.loads(out_file.read_text())
    validate_openai_messages(messages)
    assert any("compacted" in (m.get("content") or "") for m in messages if m["role"] == "user")


def test_prune_then_compact_shows_each_step(capsys, samples):
    assert main(["compact", str(samples / "native_demo.jsonl"), "--force", "--keep-recent-tokens", "40",
                 "--prune"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("pipeline:"))
    assert "original" in line and "prune" in line and "compact" in line


def test_openai_summarizer_through_the_cli(openai_server, monkeypatch, capsys, tmp_path, samples):
    server = openai_server("ok")
    monkeypatch.setenv("PRUNER_TEST_KEY", KEY)
    out_file = tmp_path / "out.jsonl"
    code = main(["compact", str(samples / "native_demo.jsonl"), "--force", "--keep-recent-tokens", "40",
                 "--summarizer", "openai", "--base-url", server.url, "--model", "cli-model",
                 "--api-key-env", "PRUNER_TEST_KEY", "--timeout", "5", "-o", str(out_file)])
    out, err = capsys.readouterr()
    assert code == 0 and "summary (openai/cli-model)" in out
    assert server.requests and server.requests[0].body["model"] == "cli-model"
    assert out_file.exists() and KEY not in out + err + out_file.read_text()


def test_openai_failure_exits_2_shows_the_offline_summary_and_writes_nothing(openai_server, monkeypatch, capsys,
                                                                           tmp_path, samples):
    server = openai_server("unauthorized")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out_file = tmp_path / "out.jsonl"
    code = main(["compact", str(samples / "native_demo.jsonl"), "--force", "--keep-recent-tokens", "40",
                 "--summarizer", "openai", "--base-url", server.url, "-o", str(out_file)])
    out, err = capsys.readouterr()
    assert code == 2 and not out_file.exists()
    assert "HTTP 401" in err and "offline summary is shown instead" in err
    assert "summary (offline (fallback" in out and "## Goal" in out
    assert KEY not in out and KEY not in err


def test_missing_key_variable_is_a_one_line_error(monkeypatch, capsys, samples):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["compact", str(samples / "native_demo.jsonl"), "--summarizer", "openai"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "OPENAI_API_KEY" in err and "Traceback" not in err


def test_bad_settings_are_a_one_line_error(capsys, samples):
    assert main(["compact", str(samples / "native_demo.jsonl"), "--context-window", "100",
                 "--reserve-tokens", "100"]) == 2
    err = capsys.readouterr().err
    assert "reserve_tokens" in err and "Traceback" not in err


def test_transcript_control_characters_do_not_reach_the_terminal(tmp_path, capsys):
    from pruner.formats.native import dumps
    from pruner.model import Message, Session
    s = Session.of([Message(id="u1", role="user", content="do it \x1b[31mred\x1b[0m " + "x " * 200),
                    Message(id="a1", role="assistant", content="done " * 50),
                    Message(id="u2", role="user", content="next " * 50)])
    path = tmp_path / "s.jsonl"
    path.write_text(dumps(s))
    assert main(["compact", str(path), "--force", "--keep-recent-tokens", "10"]) == 0
    assert "\x1b" not in capsys.readouterr().out


def test_real_pi_session_cli(capsys):
    if not PI_SESSION.is_file():
        pytest.skip(f"real Pi session not found at {PI_SESSION}")
    assert main(["compact", str(PI_SESSION), "--force", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["split_turn"] is True and report["context_source"] == "usage"
    assert all(name in report["sections"] for name in SUMMARY_SECTIONS)
    assert report["tokens_after"] < report["tokens_before"]
