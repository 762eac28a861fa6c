"""``pruner bench-logs``' reader and memory figures, run small: functional, not timed (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner.formats import load_session
from pruner.formats.codex_usage import read_usage
from pruner.logs.bench import reader_speed
from pruner.logs.bench_memory import big_codex_file, flat_memory, folder_memory
from pruner.logs.money import money_columns

ROOT = Path(__file__).resolve().parents[3]
REAL = ROOT / ".." / "shared" / "data" / "real"
pytestmark = pytest.mark.skipif(not (REAL / "codex").is_dir(), reason="the shared real transcripts are absent")


def test_reader_speed_times_every_agent_with_real_files():
    figures = reader_speed(REAL, budget_mb=1)
    assert set(figures) == {"claude_code", "codex", "pi", "gemini_cli"}
    for r in figures.values():
        assert r["files"] == r["of_files"] and r["mb"] > 0 and r["mb_per_s"] > 0


def test_generated_big_codex_file_is_billed_as_the_full_reader_bills_it(tmp_path):
    path = tmp_path / "rollout-big.jsonl"
    size = big_codex_file(path, REAL, 3)
    assert size == path.stat().st_size >= 3_000_000
    lines = path.read_bytes().splitlines()
    assert len(set(lines)) == len(lines)  # no line repeats another: every copy is billed
    skeleton, _ = read_usage(str(path))
    from pruner.logs.money import usage_columns

    assert usage_columns(skeleton)[0]["billed"] == pytest.approx(money_columns(load_session(path))["billed"])


def test_flat_memory_reports_peak_rss_of_a_small_and_a_big_file(tmp_path):
    figures = flat_memory(tmp_path, REAL, mb=4)
    assert set(figures) == {"small", "big"}
    small, big = figures["small"], figures["big"]
    assert big["mb"] > small["mb"] > 0
    assert big["billed"] > small["billed"] > 0
    assert big["run_errors"] == small["run_errors"] == 0 and big["run_read"] == small["run_read"] == 1
    assert all(f["reader_peak_rss_mb"] > 0 and f["run_peak_rss_mb"] > 0 for f in figures.values())
    json.dumps(figures)  # what the results file holds
    assert not any(tmp_path.glob("home-*"))  # the generated sessions are removed


def test_folder_memory_reports_a_runs_peak_rss_over_n_and_ten_n_sessions(tmp_path):
    figures = folder_memory(tmp_path, REAL, sessions=2)
    assert set(figures) == {"n", "10n"}
    n, ten = figures["n"], figures["10n"]
    assert (n["sessions"], ten["sessions"]) == (2, 20)
    assert (n["run_read"], ten["run_read"]) == (2, 20) and n["run_errors"] == ten["run_errors"] == 0
    smallest = min(p.stat().st_size for p in (REAL / "claude-code").glob("*.jsonl"))  # copies of the smallest
    assert (n["mb"], ten["mb"]) == (round(2 * smallest / 1e6, 1), round(20 * smallest / 1e6, 1))
    assert n["run_peak_rss_mb"] > 0 and ten["run_peak_rss_mb"] > 0
    json.dumps(figures)  # what the results file holds
    assert not any(tmp_path.glob("home-*")) and not any(tmp_path.glob("out-*"))  # removed after
