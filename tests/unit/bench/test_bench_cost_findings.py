"""The Benchmarks page's and the SUMMARY's cost findings never measure a saving against a strategy
that could not have run.

On the committed run, full sends a request over the 200,000-token window on rag_assistant at 1,000
and 2,000 turns: its dollars stop before that request. The page used to print "saves vs full
-82.4 %" against that partial bill, the SUMMARY "(full $19.30)" as if full had run, and the cost
chart drew its partial dollars as ordinary points. These tests read which strategies could not
run from the raw rows of ``results.json`` themselves.
"""

from __future__ import annotations

import json
import math

import pytest

from dashboard import replay_charts, tables
from pruner.bench.cost import summary_lines
from tests.support.paths import SAMPLES

RESULTS = SAMPLES / "bench" / "results.json"


@pytest.fixture(scope="module")
def committed():
    if not RESULTS.exists():
        pytest.skip("no committed benchmark results")
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def _infeasible(rows: list[dict], strategy: str) -> set[tuple[str, int]]:
    return {(r["workload"], r["turns"]) for r in rows if r["cost"][strategy].get("feasible") is False}


def test_no_saving_is_measured_against_a_full_that_could_not_run(committed):
    """Defect 29."""
    full_could_not_run = _infeasible(committed["rows"], "full")
    assert full_could_not_run, "the committed run has a configuration where full exceeds the window"
    frame = tables.cost_findings_frame(committed["summary"]["cost"])
    for _, row in frame.iterrows():
        key = (row["workload"], int(row["turns"]))
        if key in full_could_not_run:
            assert row["full dollars"] is None or math.isnan(row["full dollars"]), key
            assert row["saves vs full %"] is None or math.isnan(row["saves vs full %"]), key
            assert "full" in row["could not run"].split(", ")
        else:
            raw = next(r for r in committed["rows"] if (r["workload"], r["turns"]) == key)
            assert row["full dollars"] == pytest.approx(raw["cost"]["full"]["dollars"], abs=1e-9)
    html = tables.cost_findings_table(frame).to_html()
    assert "-82.4" not in html and "—" in html


def test_the_summary_says_full_could_not_run_instead_of_quoting_its_partial_bill(committed):
    """Defect 29."""
    full_could_not_run = _infeasible(committed["rows"], "full")
    line = next(text for text in summary_lines(committed["summary"]["cost"]) if text.startswith("cheapest"))
    for part in line.split(": ", 1)[1].split("; "):
        workload, turns = part.split(":")[0].rsplit(" ", 1)
        said = "(full could not run:" in part
        assert said == ((workload, int(turns.replace(",", ""))) in full_could_not_run), part


def test_the_cost_chart_draws_a_strategy_that_could_not_run_hollow(committed):
    """Defect 29."""
    frame = replay_charts.bench_cost_frame(committed["rows"])
    for workload in dict.fromkeys(r["workload"] for r in committed["rows"]):
        fig = replay_charts.bench_cost_figure(frame, workload).to_plotly_json()
        for trace in fig["data"]:
            could_not = _infeasible([r for r in committed["rows"] if r["workload"] == workload], trace["name"])
            hollow = {int(x) for x, symbol in zip(trace["x"], trace["marker"]["symbol"]) if symbol == "circle-open"}
            assert hollow == {turns for _, turns in could_not}, (workload, trace["name"])
        assert fig["layout"]["yaxis"]["dtick"] == 1  # powers of ten only, no "5 2" minor labels
