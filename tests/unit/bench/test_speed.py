"""The speed benchmark runs and reports what it says; it asserts no timing (machines are noisy)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pruner.bench.speed import measure_warm, session_of_size, time_runs
from pruner.bench.workloads import generate
from tests.support.paths import ROOT



def test_session_of_size_is_exact_and_valid():
    s = session_of_size(777)
    assert len(s.messages) == 777
    assert len({m.id for m in s.messages}) == 777


def test_measure_warm_reports_every_figure():
    row = measure_warm(session_of_size(400), runs=3)
    assert row.messages == 400 and row.tokens > 0
    assert row.prune.runs == row.prune_decisions.runs == 3
    for t in (row.prune, row.prune_decisions, row.new_session):
        assert t.wall_ms > 0 and t.cpu_ms >= 0
    assert row.passes_ms > 0 and row.exact_only_ms > 0
    assert row.us_per_message == 1000 * row.passes_ms / 400


def test_time_runs_takes_the_median_of_its_runs():
    calls = []
    t = time_runs(lambda: calls.append(1), 5)
    assert len(calls) == 5 and t.runs == 5 and t.wall_ms >= 0


@pytest.mark.slow
def test_cli_prints_every_section_and_writes_them_as_json(tmp_path):
    out_file = tmp_path / "speed.json"
    proc = subprocess.run([sys.executable, "-m", "pruner", "bench-speed", "--base", "300", "--factors", "1,2",
                           "--runs", "3", "--cold-runs", "1", "--near-seeds", "1", "--no-reference-corpora",
                           "--json", str(out_file)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("WARM PRUNE") and "\n      300    3 " in out and "\n      600    1 " not in out
    assert "2x the messages:" in out and "COLD PRUNE (2,000-turn tool_agent" in out
    assert "NEAR-DUPLICATE SEARCH against exact containment" in out
    assert "[2/2] warm prune at 600 messages" in proc.stderr
    rep = json.loads(out_file.read_text())
    assert rep["schema"] == "pruner.bench.speed/1" and [r["messages"] for r in rep["warm"]] == [300, 600]
    # the cold run prunes the 2,000-turn tool_agent session: its size, counted here from the generator
    messages = len(generate("tool_agent", turns=2000, seed=0).messages)
    assert rep["cold"]["runs"] == 1 and rep["cold"]["messages"] == messages
    assert rep["near_search"]["missed_above_0.9"] == 0
    assert rep["meta"]["environment"]["command"].startswith("pruner bench-speed")
