"""The speed benchmark runs and reports what it says; it asserts no timing (machines are noisy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pruner.bench.speed import measure, session_of_size

ROOT = Path(__file__).resolve().parents[1]


def test_session_of_size_is_exact_and_valid():
    s = session_of_size(777)
    assert len(s.messages) == 777
    assert len({m.id for m in s.messages}) == 777


def test_measure_reports_consistent_figures():
    row = measure(400, runs=3)
    assert row.messages == 400 and row.runs == 3 and row.tokens > 0
    assert 0 < row.passes_ms <= row.prune_ms
    assert row.us_per_message == 1000 * row.passes_ms / 400


def test_cli_prints_a_row_per_size_and_the_growth():
    proc = subprocess.run([sys.executable, "-m", "pruner", "bench-speed", "--base", "300", "--factors", "1,2",
                           "--runs", "3"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["messages", "tokens"]
    assert lines[1].split()[0] == "300" and lines[2].split()[0] == "600"
    assert lines[3].startswith("2x the messages took ")
    assert "[2/2] 600 messages" in proc.stderr
