"""``pruner inspect``, ``pruner convert`` and ``pruner prune`` on every format sample."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pruner.cli import main
from pruner.formats.export import validate_openai_messages
from pruner.formats.export import validate_anthropic_messages
from pruner.formats import load_session, loads
from pruner.engine.prune import prune
from tests.support.paths import REAL_DATA

SAMPLES = {
    "openai_chat.json": "openai_chat", "openai_responses.json": "openai_responses",
    "anthropic_messages.json": "anthropic", "claude_code.jsonl": "claude_code", "pi_session.jsonl": "pi",
    "codex_rollout.jsonl": "codex", "swe_agent.traj": "swe_agent", "native_demo.jsonl": "native",
}


@pytest.fixture(params=sorted(SAMPLES))
def sample(request, samples):
    path = samples / request.param
    if not path.exists():
        pytest.skip(f"{path} not written yet")
    return path, SAMPLES[request.param]


def test_prune_accepts_every_format(sample, tmp_path, capsys):
    path, _ = sample
    before = path.read_bytes()
    out = tmp_path / "kept.jsonl"
    assert main(["prune", str(path), "-o", str(out)]) == 0
    expected = prune(load_session(path))
    kept = load_session(out)
    assert [m.id for m in kept.messages] == [m.id for m in expected.kept.messages]
    assert f"messages: {len(expected.session.messages)} -> {len(kept.messages)}" in capsys.readouterr().out
    assert path.read_bytes() == before


def test_inspect_json_matches_the_loaded_session(sample, capsys):
    path, fmt = sample
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    session = load_session(path)
    assert info["format"] == fmt
    assert info["messages"] == len(session.messages) == sum(info["messages_by_role"].values())
    assert info["turns"] == session.last_turn
    assert info["tool_calls"] == sum(len(m.tool_calls) for m in session.messages)
    assert info["tokens"] == sum(info["tokens_by_role"].values()) > 0
    assert len(info["recorded_compactions"]) == len(session.metadata.get("recorded_compactions") or [])


def test_inspect_text_shows_compactions(samples, capsys):
    assert main(["inspect", str(samples / "pi_session.jsonl")]) == 0
    out = capsys.readouterr().out
    comp = load_session(samples / "pi_session.jsonl").metadata["recorded_compactions"][0]
    assert "format:      pi" in out and "compactions: 1 recorded" in out
    assert f"at message #{comp['position_index']}, first kept #{comp['first_kept_index']}" in out


@pytest.mark.parametrize("target", ["native", "openai", "anthropic"])
def test_convert_writes_valid_output(sample, target, tmp_path):
    path, _ = sample
    out = tmp_path / f"out.{target}"
    assert main(["convert", str(path), "--to", target, "-o", str(out)]) == 0
    session = load_session(path)
    text = out.read_text()
    if target == "native":
        assert load_session(out).messages == session.messages
    elif target == "openai":
        validate_openai_messages(json.loads(text))
        back = loads(text, format="openai_chat")
        assert [c.name for m in back.messages for c in m.tool_calls] == [
            c.name for m in session.messages for c in m.tool_calls]
    else:
        validate_anthropic_messages(json.loads(text))


def test_convert_prune_and_refusal_to_overwrite(samples, tmp_path, capsys):
    src = samples / "openai_chat.json"
    out = tmp_path / "pruned.json"
    assert main(["convert", str(src), "--to", "openai", "--prune", "-o", str(out)]) == 0
    pruned = json.loads(out.read_text())
    full = json.loads(json.dumps(json.loads(src.read_text())["messages"]))
    validate_openai_messages(pruned)
    assert len(pruned) == len(full)  # superseded results become placeholders, calls stay answered
    assert json.dumps(pruned) != json.dumps(full)
    before = src.read_bytes()
    assert main(["convert", str(src), "--to", "native", "-o", str(src)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert src.read_bytes() == before


def test_retrieval_tool_option(samples, capsys):
    assert main(["inspect", str(samples / "openai_responses.json"), "--json", "--retrieval-tool", "search_docs"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["messages_by_role"]["retrieved_doc"] == 2


def test_multi_dialogue_file(tmp_path, capsys):
    records = [{"task_id": i, "traj": [{"role": "system", "content": "s"}, {"role": "user", "content": f"q{i}"}]}
               for i in range(3)]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(records))
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["dialogues"], info["messages"]) == (3, 6)
    out = tmp_path / "one.jsonl"
    assert main(["convert", str(path), "--dialogue", "1", "--to", "native", "-o", str(out)]) == 0
    assert [m.content for m in load_session(out).messages] == ["s", "q1"]
    assert main(["prune", str(path)]) == 2
    assert "--dialogue N" in capsys.readouterr().err


def test_console_script_runs_inspect_on_real_tau_bench():
    tau = REAL_DATA / "tau-bench" / "gpt-4o-airline.json"
    if not tau.exists():
        pytest.skip("real transcripts absent")
    proc = subprocess.run([sys.executable, "-m", "pruner", "inspect", str(tau), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["dialogues"] == len(json.loads(tau.read_text()))
    assert info["tool_calls"] == info["tool_calls_answered"]
