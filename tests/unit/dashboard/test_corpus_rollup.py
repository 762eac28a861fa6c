"""The Corpus page's roll-ups (issue 32): the same groupings as ``pruner logs report``, the week and month
views drawn as charts, the grouping kept in the URL; figures checked against sums done here."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest

from dashboard import rollup_charts
from dashboard.logic import corpus_rollup as rollup
from pruner.logs.groupings import GROUPINGS
from pruner.money import money

ROWS = [
    {"session_key": "a", "agent": "pi", "project": "p", "start": "2026-03-02T10:00:00Z", "billed": 2.0,
     "input_tokens": 10, "cache_read_tokens": 80, "cache_write_tokens": 10, "requests_main": 3},
    {"session_key": "b", "agent": "codex", "project": "q", "start": "2026-03-04T23:30:00Z", "billed": 1.25,
     "input_tokens": 50, "cache_read_tokens": 50, "cache_write_tokens": 0, "requests_main": 2},
    {"session_key": "c", "agent": "pi", "project": "p", "start": "2026-04-20T08:00:00Z", "billed": 0.5,
     "input_tokens": 100, "cache_read_tokens": 0, "cache_write_tokens": 0, "requests_main": 1},
]


def test_the_page_offers_the_commands_groupings_and_reads_a_link_naming_one():
    assert rollup.CHOICES == tuple(GROUPINGS) and rollup.CHOICES[0] == "day"
    assert rollup.grouping_from_link({"by": "month"}) == "month"
    assert rollup.grouping_from_link({"by": "<script>"}) is None and rollup.grouping_from_link(None) is None


def test_every_grouping_of_the_table_sums_to_the_rows_bill():
    frame = pd.DataFrame(ROWS)
    for by in rollup.CHOICES:
        shown = rollup.table(rollup.rollup(frame, by))
        assert shown.iloc[-1][by] == "total" and shown.iloc[-1]["billed"] == money(3.75)
        groups = rollup.rollup(frame, by).groups
        assert sum(g.answer.billed for g in groups) == pytest.approx(sum(r["billed"] for r in ROWS))


def test_week_and_month_charts_are_the_periods_in_time_order_with_their_bill_and_cache_read_share():
    frame = pd.DataFrame(ROWS)
    week = rollup.chart_frame(rollup.rollup(frame, "week"))
    assert list(week["period"]) == ["2026-03-02", "2026-04-20"]  # Mondays
    fig = rollup_charts.rollup_figure(week, "week")
    spec = json.loads(fig.to_json())
    bars, line = spec["data"]
    assert bars["type"] == "bar" and bars["y"] == [3.25, 0.5] and bars["text"] == [money(3.25), money(0.5)]
    first = (80 + 50) / (10 + 80 + 10 + 50 + 50 + 0)  # the week's cache reads over all its input tokens
    assert line["y"] == [round(100 * first, 1), 0.0] and line["yaxis"] == "y2"
    assert spec["layout"]["xaxis"]["categoryarray"] == ["2026-03-02", "2026-04-20"]
    month = rollup.chart_frame(rollup.rollup(frame, "month"))
    assert list(month["period"]) == ["2026-03", "2026-04"] and list(month["billed"]) == [3.25, 0.5]


def test_a_row_with_no_time_is_in_the_table_not_the_chart():
    frame = pd.DataFrame([*ROWS, {"session_key": "d", "billed": 4.0, "start": None}])
    r = rollup.rollup(frame, "month")
    assert list(rollup.chart_frame(r)["period"]) == ["2026-03", "2026-04"]
    assert list(rollup.table(r)["month"]) == ["2026-03", "2026-04", "(none)", "total"]


@pytest.fixture
def logs_folder(real_data, tmp_path):
    from pruner.logs import discover, run_logs

    home = tmp_path / "home"
    for folder, source, name in ((".claude/projects/-work-demo", "claude-code/cctrace-phase0-main.jsonl", "a.jsonl"),
                                 (".codex/sessions/2026/05/11", "codex/codemie-rollout-2026-05-11.jsonl",
                                  "rollout-2026-05-11T11-26-55-a.jsonl")):
        (home / folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real_data / source, home / folder / name)
    out = tmp_path / "out"
    run_logs([s for loc in discover({"HOME": str(home)}) for s in loc.sessions], str(out))
    return out


@pytest.mark.usefixtures("fresh_streamlit_caches")
def test_the_corpus_page_rolls_up_by_the_grouping_its_link_names_and_writes_the_one_chosen(logs_folder):
    from streamlit.testing.v1 import AppTest

    from tests.support.paths import ROOT

    rows = pq.read_table(logs_folder / "sessions.parquet").to_pylist()
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=180)
    at.query_params["corpus"] = str(logs_folder)
    at.query_params["by"] = "agent"
    at.run()
    at.switch_page("app_pages/corpus.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="logs_rollup_by").value == "agent"
    table = next(d.value for d in at.dataframe if d.value.columns[0] == "agent")
    assert sorted(table["agent"]) == sorted([*(r["agent"] for r in rows), "total"])
    assert table.iloc[-1]["billed"] == money(round(sum(r["billed"] for r in rows), 6))
    at.selectbox(key="logs_rollup_by").set_value("month")
    at.button(key="FormSubmitter:logs_rollup-Roll up").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["by"] == ["month"] or at.query_params["by"] == "month"
    months = next(d.value for d in at.dataframe if d.value.columns[0] == "month")
    assert list(months["month"])[:-1] == sorted({r["start"][:7] for r in rows})
    assert at.get("plotly_chart")  # the month view's chart
