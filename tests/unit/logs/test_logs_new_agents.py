"""``pruner logs`` on a HOME laid out as each newer agent lays it out (tests/data/agents/<agent>/home):
it finds the agent's sessions, ``--list`` shows its folder, sessions and bytes, every session is billed
at the dollars the test computes itself from the raw fixture (tokens x the shipped price rows, read
from ``pruner/replay/prices.json`` directly), and the bill-only and full readers give the same row on
every fixture file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pruner.logs.agents import AGENTS
from pruner.logs.table import TABLE
from tests.support.agent_rows import fast_row, found, full_row

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "agents"
PRICES = json.loads((ROOT / "pruner" / "replay" / "prices.json").read_text())["models"]


def _price(model: str) -> dict | None:
    return next((p for p in PRICES if model == p["model"] or model in (p.get("aliases") or [])), None)


def _dollars(model: str, fresh: int, cached: int, written: int, output: int) -> float:
    p = _price(model)
    if p is None:
        return 0.0  # unpriced: billed $0, never priced as another model
    write = p["cache_write_5m"] if p.get("cache_write_5m") is not None else p["input"]
    return (fresh * p["input"] + cached * p["cached_input"] + written * write + output * p["output"]) / 1e6


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def qwen_code_bill(path: Path) -> float:
    total = 0.0
    for r in _lines(path):
        u = r.get("usageMetadata")
        if r.get("type") != "assistant" or not u:
            continue
        prompt, cached = u.get("promptTokenCount", 0), u.get("cachedContentTokenCount", 0)
        tool, cand, thoughts = u.get("toolUsePromptTokenCount", 0), u.get("candidatesTokenCount", 0), \
            u.get("thoughtsTokenCount", 0)
        apart = thoughts and u.get("totalTokenCount", 0) >= prompt + cand + thoughts + tool
        total += _dollars(r["model"], prompt - cached + tool, cached, 0, cand + (thoughts if apart else 0))
    return total


def copilot_cli_bill(path: Path) -> float:
    """The shutdown's totals (per agent when it has them, else per model); a session with none yet is
    its output tokens, one count per API call."""
    events = _lines(path)
    shutdown = next((e["data"] for e in events if e["type"] == "session.shutdown"), None)
    if shutdown is not None:
        per_agent = shutdown.get("agentMetrics") or {"main": shutdown}
        return sum(_dollars(model, m["usage"]["inputTokens"] - m["usage"]["cacheReadTokens"],
                            m["usage"]["cacheReadTokens"], m["usage"]["cacheWriteTokens"], m["usage"]["outputTokens"])
                   for agent in per_agent.values() for model, m in agent["modelMetrics"].items())
    outputs: dict[str, tuple[str, int]] = {}
    for e in events:
        if e["type"] == "assistant.message":
            d = e["data"]
            outputs[d["apiCallId"]] = (d["model"], max(outputs.get(d["apiCallId"], ("", 0))[1], d["outputTokens"]))
    return sum(_dollars(model, 0, 0, 0, out) for model, out in outputs.values())


def amp_bill(path: Path) -> float:
    """Each assistant message's own usage; a thread with none, its ledger events (input and output)."""
    thread = json.loads(path.read_text(encoding="utf-8"))
    replies = [m for m in thread["messages"] if m["role"] == "assistant"]
    if any("usage" in m for m in replies):
        return sum(_dollars(m["usage"]["model"], m["usage"]["inputTokens"], m["usage"]["cacheReadInputTokens"],
                            m["usage"]["cacheCreationInputTokens"], m["usage"]["outputTokens"])
                   for m in replies if "usage" in m)
    return sum(_dollars(e["model"], e["tokens"]["input"], 0, 0, e["tokens"]["output"])
               for e in thread["usageLedger"]["events"])


#: agent -> (the sessions' files under its fixture HOME, the test's own bill of one file)
FIXTURES = {"qwen_code": (".qwen/projects/*/chats/*.jsonl", qwen_code_bill),
            "copilot_cli": (".copilot/session-state/**/*.jsonl", copilot_cli_bill),
            "amp": (".local/share/amp/threads/T-*.json", amp_bill)}


def _home(agent: str) -> Path:
    return DATA / agent / "home"


def _files(agent: str) -> list[Path]:
    return sorted(_home(agent).glob(FIXTURES[agent][0]))


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {a.variable for a in AGENTS.values()}}
    env.pop("XDG_CACHE_HOME", None)
    return {**env, "HOME": str(home)}


def test_every_fixture_agent_is_registered_with_a_bill_only_reader():
    for agent in FIXTURES:
        assert AGENTS[agent].read_usage is not None and _files(agent), agent


@pytest.mark.parametrize("agent", sorted(FIXTURES))
def test_list_shows_the_agent_its_folder_sessions_and_bytes(agent):
    listed = subprocess.run([sys.executable, "-m", "pruner", "logs", "--list"], env=_env(_home(agent)),
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.split()[0] == agent)
    files = _files(agent)
    cells = row.split()
    assert int(cells[1]) == len(files) and int(cells[2]) == len(files)
    assert f"{sum(f.stat().st_size for f in files) / 1e6:.1f} MB" in row
    spec = AGENTS[agent]
    assert row.rstrip().endswith(str(_home(agent) / spec.default / spec.inner))
    others = [line for line in listed.stdout.splitlines()[1:] if line.split()[0] != agent]
    assert others and all(line.endswith("(not found)") for line in others)


@pytest.mark.parametrize("agent", sorted(FIXTURES))
def test_logs_finds_and_bills_every_session_at_the_raw_files_own_dollars(agent, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "pruner", "logs", "--bill-only", "--out", str(out), "--json"],
                          env=_env(_home(agent)), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [r for r in pq.read_table(out / TABLE).to_pylist() if r["agent"] == agent]
    assert not [r for r in rows if r["error"] or r["money_error"]]
    expected = {str(p): FIXTURES[agent][1](p) for p in _files(agent)}
    assert {r["source"]: r["billed"] for r in rows} == pytest.approx(expected, abs=1e-9)
    assert any(v > 0 for v in expected.values())


@pytest.mark.parametrize("path", [p for a in sorted(FIXTURES) for p in _files(a)], ids=lambda p: p.name)
def test_bill_only_reader_reads_every_fixture_file_and_gives_the_full_row(path):
    agent = next(a for a in FIXTURES if str(path).startswith(str(_home(a))))
    fast = fast_row(agent, path)
    assert fast is not None, "a clean fixture file is read by the bill-only reader"
    assert fast == full_row(agent, path)


@pytest.mark.parametrize("agent", ["qwen_code", "copilot_cli", "amp"])
def test_bill_only_reader_reads_the_bench_generated_file_and_gives_the_full_row(tmp_path, agent):
    """``pruner bench-logs`` times these readers on files generated from the samples: the time is the
    skeleton reader's (it takes the file, not leaving it to the full reader) and its row is the full one."""
    from pruner.logs.bench_agents import SAMPLES, generate

    path = tmp_path / f"session{Path(SAMPLES[agent]).suffix}"
    generate(agent, ROOT / "sample_sessions", path, 0.3)
    fast = fast_row(agent, path)
    assert fast is not None
    assert fast["requests_main"] > 10  # the sample copied many times, each copy's requests billed
    assert fast == full_row(agent, path)


def test_regression_a_call_id_reused_by_a_later_reply_links_results_as_the_builder_does(tmp_path):
    """Two Qwen Code replies making a call with the same id, each answered, then a third result for that
    id (it answers no call any more: kept unlinked): the skeleton links them as ``SessionBuilder`` does."""
    def rec(uuid: str, kind: str, parts: list, **more) -> str:
        return json.dumps({"uuid": uuid, "sessionId": "s", "timestamp": f"2026-01-01T00:00:0{uuid[-1]}Z",
                           "type": kind, "cwd": "/w", "message": {"role": "x", "parts": parts}, **more})
    call = [{"functionCall": {"id": "c", "name": "read", "args": {}}}]
    result = [{"functionResponse": {"id": "c", "name": "read", "response": {"output": "ok"}}}]
    usage = {"model": "qwen3-coder-plus", "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1}}
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([rec("u1", "user", [{"text": "go"}]), rec("a2", "assistant", call, **usage),
                               rec("r3", "tool_result", result), rec("a4", "assistant", call, **usage),
                               rec("r5", "tool_result", result), rec("r6", "tool_result", result)]) + "\n")
    fast = fast_row("qwen_code", path)
    assert fast is not None
    assert fast == full_row("qwen_code", path)
    full = AGENTS["qwen_code"].load(found("qwen_code", path))
    assert [m.tool_call_id is not None for m in full.messages if m.role == "tool"] == [True, True, False]


# -- safe on hostile folders (issue 41) --

def _only_home(monkeypatch, home: Path) -> None:
    for agent in AGENTS.values():
        monkeypatch.delenv(agent.variable, raising=False)
    monkeypatch.setenv("HOME", str(home))


def test_a_copilot_log_nested_30000_deep_on_its_first_line_fails_no_run(tmp_path, monkeypatch, capsys):
    """Listing read the first line with ``json.loads``: its RecursionError failed every ``pruner logs`` run
    for every agent (exit 70), ``--list`` included. The line is now a damaged line of its session."""
    from pruner.cli import main

    home = tmp_path / "home"
    events = home / ".copilot" / "session-state" / "abc" / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_text("[" * 30_000 + "]" * 30_000 + "\n", encoding="utf-8")
    _only_home(monkeypatch, home)
    assert main(["logs", "--list"]) == 0
    out = tmp_path / "out"
    assert main(["logs", "--bill-only", "--out", str(out)]) == 0
    (row,) = pq.read_table(out / TABLE).to_pylist()
    assert row["agent"] == "copilot_cli" and (row["error"] is None or "RecursionError" not in row["error"])
    assert "internal error" not in capsys.readouterr().err


def test_amps_workspace_search_is_linear_in_the_text_it_reads(tmp_path, monkeypatch):
    """Amp's workspace pattern scanned to the end of the text from every ``"trees":[{`` (4 threads of 128 KB:
    14.6 CPU s). Read here over 4 MB of such openings: quadratic would take hours, linear is instant."""
    from pruner.logs.agents import amp

    monkeypatch.setattr(amp, "HEAD_BYTES", 4 * 1024 * 1024)
    thread = tmp_path / "T-1.json"
    thread.write_text('{"id": "T-1", "env": {"initial": {' + '"trees": [{"uri": "x", ' * 200_000 + "}}}",
                      encoding="utf-8")
    assert thread.stat().st_size > 4_000_000
    assert amp.first_workspace(str(thread)) == ""
    good = tmp_path / "T-2.json"
    good.write_text('{"id": "T-2", "env": {"initial": {"trees": [{"displayName": "app", "uri": '
                    '"file:///work/my%20app"}]}}, "messages": []}', encoding="utf-8")
    assert amp.first_workspace(str(good)) == "/work/my app"


def test_a_time_before_year_1000_is_a_damaged_field_and_no_start(tmp_path):
    """Go's zero time (year 1) was stored as the start "1-01-01T00:00:00Z", not ISO 8601, and reported
    under "(none)": now no date is taken from it, it is counted as damaged, and both readers agree."""
    (source,) = [p for p in _files("copilot_cli") if p.name == "events.jsonl"]
    text = source.read_text(encoding="utf-8")
    first = json.loads(text.splitlines()[2])["timestamp"]
    damaged = tmp_path / "events.jsonl"
    damaged.write_text(text.replace(f'"timestamp": "{first}"', '"timestamp": "0001-01-01T00:00:00.000Z"', 1),
                       encoding="utf-8")
    assert damaged.read_text(encoding="utf-8") != text
    full = full_row("copilot_cli", damaged)
    assert full["start"][:4] == "2026" and full["damaged_lines"] >= 1
    fast = fast_row("copilot_cli", damaged)
    assert fast is None or (fast["start"] == full["start"] and fast["damaged_lines"] == full["damaged_lines"])
