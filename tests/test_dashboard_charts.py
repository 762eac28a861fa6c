"""The dashboard's plotly figure builders (dashboard/charts.py), checked through their JSON spec."""

from __future__ import annotations

import pandas as pd

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

