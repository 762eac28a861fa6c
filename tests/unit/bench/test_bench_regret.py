"""Regret against the hindsight bound in ``pruner bench`` and on the Benchmarks page (issue 30): every row
up to ``bound_turns`` turns has the bound and each priced strategy's dollars over it, larger rows say
"not computed"; the test subtracts the bound from each strategy's cost row itself."""

from __future__ import annotations

import json

import pytest

from dashboard.logic import benchmarks as logic
from pruner.bench.run import run_benchmark
from pruner.cli import main
from pruner.money import money
from tests.support.paths import ROOT

COMMITTED = ROOT / "sample_sessions" / "bench" / "results.json"


def _check_rows(rows: list[dict], limit: int) -> None:
    for r in rows:
        bound = r["bound"]
        if r["turns"] > limit:
            assert bound["computed"] is False and "not computed" in bound["reason"] and r["regret"] == {}
            continue
        assert bound["computed"] is True and bound["dollars"] is not None
        assert set(r["regret"]) == set(r["cost"])
        for name, c in r["cost"].items():
            if c.get("feasible", True) is False:
                assert r["regret"][name] is None, name  # infeasible: never ranked
            else:  # the cost row's dollars are rounded to 4 decimals
                assert r["regret"][name] == pytest.approx(c["dollars"] - bound["dollars"], abs=1e-4), name


def test_a_run_computes_the_bound_up_to_its_limit_and_marks_the_rest(tmp_path):
    results = run_benchmark(workloads=("tool_agent",), sizes=(8, 12), timing_runs=1, bound_turns=10)
    rows = json.loads(results.to_json())["rows"]
    _check_rows(rows, 10)
    assert [r["bound"]["computed"] for r in rows] == [True, False]
    assert results.meta["bound_turns"] == 10
    frame = logic.regret_frame(rows)
    assert list(frame["bound"]) == [money(rows[0]["bound"]["dollars"]) + ("" if rows[0]["bound"]["exact"] else " ~"),
                                    "not computed"]
    for name, value in rows[0]["regret"].items():
        assert frame.loc[0, name] == ("n/a" if value is None else f"{'+' if value >= 0 else '−'}{money(abs(value))}")


def test_the_cli_prints_each_configurations_regret(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["bench", "--workloads", "plain_chat", "--sizes", "6", "--timing-runs", "1", "--bound-turns", "6",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    row = json.loads(out.read_text())["rows"][0]
    assert "REGRET (each strategy's dollars over the best possible in hindsight" in printed
    assert f"plain_chat 6 turns seed 0: bound {money(row['bound']['dollars'])}" in printed


def test_the_committed_results_carry_the_bound_where_it_was_computed():
    results = json.loads(COMMITTED.read_text(encoding="utf-8"))
    limit = results["meta"]["bound_turns"]
    assert limit >= 50
    _check_rows(results["rows"], limit)
    assert any(r["bound"]["computed"] for r in results["rows"])


@pytest.mark.usefixtures("fresh_streamlit_caches")
def test_the_benchmarks_page_shows_the_regret_table():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=180).run()
    at.switch_page("app_pages/benchmarks.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(s.value.startswith("Regret:") for s in at.subheader)
    rows = json.loads(COMMITTED.read_text(encoding="utf-8"))["rows"]
    table = next(t.value for t in at.table if "bound" in t.value.index)
    computed = [r for r in rows if r["bound"]["computed"]]
    assert list(table.columns) == [f"{r['workload']} {r['turns']:,} turns" for r in computed]
    assert list(table.loc["bound"]) == [money(r["bound"]["dollars"]) + ("" if r["bound"]["exact"] else " ~")
                                        for r in computed]
    skipped = [f"{r['workload']} {r['turns']:,} turns" for r in rows if not r["bound"]["computed"]]
    assert any(c.value == "Not computed: " + ", ".join(skipped) + "." for c in at.caption)
