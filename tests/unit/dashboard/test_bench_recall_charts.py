"""The Benchmarks page's context recall (issue 20): the chart's points and the agreement table, checked
against the committed results file read here on its own."""

from __future__ import annotations

import json

from dashboard import bench_recall
from tests.support.paths import ROOT

RESULTS = ROOT / "sample_sessions" / "bench" / "results.json"


def _results() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def test_recall_chart_draws_each_strategys_recall_at_every_size_hollow_where_it_could_not_run():
    data = _results()
    frame = bench_recall.recall_frame(data["rows"])
    for workload in ("plain_chat", "rag_assistant", "tool_agent"):
        fig = bench_recall.recall_figure(frame, workload)
        expected: dict[str, dict[int, tuple[float, bool]]] = {}
        for row in data["rows"]:
            if row["workload"] != workload:
                continue
            for name, c in row["cost"].items():
                expected.setdefault(name, {})[row["turns"]] = (100 * c["context_recall"], c.get("feasible", True))
        assert {t.name for t in fig.data} == set(expected)
        for trace in fig.data:
            sizes = sorted(expected[trace.name])
            assert list(trace.x) == sizes
            assert [round(y, 6) for y in trace.y] == [round(expected[trace.name][t][0], 6) for t in sizes]
            hollow = [s == "circle-open" for s in trace.marker.symbol]
            assert hollow == [not expected[trace.name][t][1] for t in sizes], trace.name
        assert fig.layout.yaxis.range[1] > 100 and fig.layout.yaxis.range[0] <= min(
            v[0] for by in expected.values() for v in by.values())
    assert any(s == "circle-open" for t in bench_recall.recall_figure(frame, "tool_agent").data
               for s in t.marker.symbol)  # tool_agent 1,000 and 2,000 have strategies over the window


def test_agreement_table_counts_what_the_per_configuration_records_say():
    recall = _results()["summary"]["cost"]["recall"]
    table = bench_recall.agreement_frame(recall)
    per = recall["per_config"]
    counted = [
        (sum(1 for c in per if not c["reply_facts_unseen"]), len(per)),
        (sum(c["reply_facts_missing"] - c["reply_facts_unseen"] for c in per),
         sum(c["reply_facts_missing"] for c in per)),
        (sum(1 for c in per if not c["discordant"]), len(per)),
        (sum(1 for c in per if not c["discordant_all_needs"]), len(per)),
        (sum(1 for c in per if not c["labelled_discordant"]), len(per)),
    ]
    assert list(zip(table["agrees"], table["of"])) == counted
    assert table["check"].str.len().min() > 20
    assert bench_recall.agreement_frame({}).empty
