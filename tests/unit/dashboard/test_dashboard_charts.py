"""The dashboard's plotly figure builders (dashboard/charts.py), checked through their JSON spec."""

from __future__ import annotations

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import charts, tables
from dashboard.theme import STATUS_COLOURS
from pruner import STATUSES
from tests.support.figures import spec
from tests.support.paths import ROOT

DEMO = ROOT / "sample_sessions" / "native_demo.jsonl"


def test_context_figure_skips_an_uncomputed_stage():
    totals = pd.DataFrame({"turn": [0, 1, 2], "before": [10, 20, 30], "after": [None, None, 25]})
    figure = spec(charts.context_figure(totals))
    assert [t["name"] for t in figure["data"]] == ["before pruning", "after pruning"]
    assert figure["data"][0]["y"] == [10, 20, 30] and figure["data"][1]["x"] == [2]
    figure = spec(charts.context_figure(totals.assign(after=None)))
    assert [t["name"] for t in figure["data"]] == ["before pruning"]


def test_composition_stacks_only_roles_with_tokens():
    context = tables.context_frame([{"turn": 1, "after": {"user": 5, "tool": 0}},
                                    {"turn": 2, "after": {"user": 6, "tool": 3}}])
    figure = spec(charts.composition_figure(context))
    assert [t["name"] for t in figure["data"]] == ["user", "tool"]
    assert {t["stackgroup"] for t in figure["data"]} == {"roles"}
    assert figure["data"][1]["y"] == [0, 3]


def test_line_by_group_uses_log_axes_when_asked():
    frame = pd.DataFrame({"size": [50, 200, 50, 200], "ms": [1.0, 4.0, 2.0, 9.0], "w": ["a", "a", "b", "b"]})
    figure = spec(charts.line_by_group_figure(frame, x="size", y="ms", group="w", title="t", x_title="turns",
                                              y_title="ms", log_x=True, log_y=True))
    assert figure["layout"]["xaxis"]["type"] == "log" and figure["layout"]["yaxis"]["type"] == "log"
    assert [t["name"] for t in figure["data"]] == ["a", "b"] and figure["data"][1]["y"] == [2.0, 9.0]


def test_compaction_and_status_bars():
    figure = spec(charts.compaction_tokens_figure(100, 40, 90))
    assert figure["data"][0]["y"] == [100, 40, 90]
    bars = spec(charts.status_bar_figure({"kept": 3, "expired": 1}))
    assert bars["data"][0]["y"] == [3, 1, 0, 0]
    assert bars["data"][0]["marker"]["color"] == [STATUS_COLOURS[s] for s in STATUSES]



@settings(max_examples=200)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=3000), st.integers(2, 700))
def test_thinning_a_replay_line_keeps_its_ends_its_peak_and_its_lowest_point_within_its_limit(values, limit):
    # The Replay overview draws at most about `limit` points per strategy (the 2,000-turn sample's 38,000 took
    # the browser 4 s): what it drops must never hide a peak or a drop, or move an end.
    from dashboard.replay_charts import thin

    frame = pd.DataFrame({"strategy": "s", "request": range(len(values)), "input": values})
    kept = thin(frame, limit=limit)
    rows = kept["request"].tolist()
    assert rows == sorted(set(rows)) and rows[0] == 0 and rows[-1] == len(values) - 1
    assert len(rows) == len(values) if len(values) <= limit else len(rows) <= 2 * (limit // 2) + 2
    assert kept["input"].max() == max(values) and kept["input"].min() == min(values)
    runs = max(1, limit // 2)
    for r in range(runs if len(values) > limit else 0):  # each run's own highest and lowest value is drawn
        lo, hi = r * len(values) // runs, (r + 1) * len(values) // runs
        if hi > lo:
            shown = [v for q, v in zip(rows, kept["input"]) if lo <= q < hi]
            assert max(shown) == max(values[lo:hi]) and min(shown) == min(values[lo:hi])


def test_recorded_compactions_are_one_legend_entry_not_a_label_on_each_line():
    """Issue 42: two compactions a few turns apart drew "recorded compactionrecorded compaction" over the title."""
    totals = pd.DataFrame({"turn": [0, 1, 2, 3], "before": [10, 20, 30, 40], "after": [10, 15, 20, 25]})
    figure = spec(charts.context_figure(totals, compactions=[2, 3]))
    assert not [a for a in figure["layout"].get("annotations", []) if a.get("text")]
    assert len(figure["layout"]["shapes"]) == 2
    names = [t["name"] for t in figure["data"]]
    assert "recorded compactions (dotted, turn 2, 3)" in names
    assert figure["layout"]["legend"]["y"] < 0  # under the plot, never over the title
