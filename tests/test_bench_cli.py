"""``pruner bench`` end to end, on small sizes."""

from __future__ import annotations

import csv
import io
import json

import pytest

from pruner.cli import main
from pruner.rules import RULES, Removal, register_rule


def test_full_output_shape(capsys, tmp_path):
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    code = main(["bench", "--workloads", "plain_chat,tool_agent", "--sizes", "30,60", "--timing-runs", "2",
                 "--json", str(out_json), "--csv", str(out_csv)])
    captured = capsys.readouterr()
    assert code == 0
    assert [f"configuration {i} of 4" in captured.err for i in range(1, 5)] == [True] * 4
    data = json.loads(out_json.read_text())
    rows = data["rows"]
    assert len(rows) == 4 and len(list(csv.DictReader(io.StringIO(out_csv.read_text())))) == 4
    out = captured.out
    assert data["meta"]["counter"] in out
    for r in rows:  # one printed line per configuration, with its figures
        line = next(ln for ln in out.splitlines()
                    if ln.startswith(r["workload"]) and f" {r['turns']} " in ln and "->" in ln)
        assert f"{r['tokens_before']:,} -> {r['tokens_after']:,}" in line
        assert f"{r['reduction_pct']:.1f}%" in line
    s = data["summary"]
    assert "SUMMARY" in out
    assert f"tagged facts preserved:   {s['tagged_facts_preserved']['count']}/4" in out
    assert f"idempotent:               {s['idempotent']['count']}/4" in out
    assert "BASELINES" in out and "result: PASS" in out
    assert "ACROSS SEEDS" not in out


def test_seeds_print_mean_and_spread(capsys):
    assert main(["bench", "--workloads", "rag_assistant", "--sizes", "20", "--seeds", "3",
                 "--timing-runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "ACROSS SEEDS" in out and " ± " in out


@pytest.mark.slow
def test_exit_status_is_non_zero_when_a_pass_is_broken(capsys):
    # A deliberately unsafe rule (registered through the public hook) drops every tool result that defines
    # a fact; with restoration switched off the benchmark must fail, and say so. (The built-in rules never
    # remove the last copy of a needed fact in the generated workloads: see test_bench.py.)
    @register_rule("test_drop_definitions", stage="duplicate", description="test only: drops fact definitions")
    def drop_definitions(index, alive, config):
        return [Removal(index=i, rule="test_drop_definitions") for i, m in enumerate(index.messages)
                if alive[i] and m.role == "tool" and "DEFINE:" in m.content]
    # 80 turns: the smallest size where the unsafe rule loses a fact (tests/test_bench.py says why).
    try:
        code = main(["bench", "--workloads", "tool_agent", "--sizes", "80", "--timing-runs", "1", "--no-restore"])
    finally:
        del RULES["test_drop_definitions"]
    out = capsys.readouterr().out
    assert code == 1
    assert "FAILED:" in out and "result: FAIL" in out


def test_bad_values_are_one_line_errors(capsys):
    assert main(["bench", "--sizes", "10", "--seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pruner bench: error:") and "Traceback" not in err


def test_scaling_prints_flat_time_and_per_turn_cost(capsys):
    assert main(["bench", "--scaling", "--scaling-sizes", "20,40", "--per-turn-turns", "15",
                 "--no-reference-corpus"]) == 0
    out = capsys.readouterr().out
    assert "SCALING" in out and "ms per 1,000 messages" in out
    assert "EVERY TURN, AS AN AGENT LOOP RUNS IT (the tool_agent workload: 15 turns" in out
    assert "append() + context() after every turn" in out
    assert "context equals prune()'s at the sampled turns: yes; decisions equal prune()'s at the end: yes" in out
    assert "a full prune() of the conversation so far (a new session) after every turn" in out


@pytest.fixture
def small_defaults(monkeypatch):
    """Make the default run small (one workload, one size) so the test can run it as is."""
    import pruner.cli.bench as bench_cli
    from pruner.bench.workloads import WORKLOADS

    monkeypatch.setattr(bench_cli, "WORKLOADS", {"plain_chat": WORKLOADS["plain_chat"]})
    monkeypatch.setattr(bench_cli, "SIZES", (20,))


def test_the_default_run_writes_the_results_the_readme_documents(small_defaults, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["bench"]) == 0
    out = capsys.readouterr().out
    json_path, csv_path = (tmp_path / p for p in ("sample_sessions/bench/results.json",
                                                   "sample_sessions/bench/results.csv"))
    data = json.loads(json_path.read_text())
    assert [(r["workload"], r["turns"]) for r in data["rows"]] == [("plain_chat", 20)]
    assert data["meta"]["environment"]["command"] == "pruner bench"
    assert len(list(csv.DictReader(io.StringIO(csv_path.read_text())))) == 1
    assert "results written to sample_sessions/bench/results.json and sample_sessions/bench/results.csv" in out


def test_a_run_with_other_selections_never_replaces_the_default_results(small_defaults, tmp_path, monkeypatch,
                                                                         capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--sizes", "10", "--timing-runs", "1"]) == 0
    assert not (tmp_path / "sample_sessions").exists()
    assert "results written" not in capsys.readouterr().out
    assert main(["bench", "--json", "mine.json"]) == 0  # a named file replaces the default location
    assert (tmp_path / "mine.json").exists() and not (tmp_path / "sample_sessions").exists()
