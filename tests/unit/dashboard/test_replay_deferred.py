"""A long replay's first view draws the verdict, the totals and the charts, and the ledger, the cost against
recall, the stepper and the events once the browser drew the charts (``dashboard/deferred.py``): the
button the page's script clicks reruns only that part; every later run draws everything."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.logic import replay as logic
from tests.support.paths import ROOT

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")

APP = ROOT / "dashboard" / "app.py"
BELOW = "replay_draw_below"  # the page's button key
QUERY = {"workload": "tool_agent", "turns": "60", "seed": "0"}


def open_replay() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=180)
    for k, v in QUERY.items():
        at.query_params[k] = v
    return at.switch_page("app_pages/replay.py").run()


def drawn(at: AppTest) -> dict[str, object]:
    """What the page shows: its charts by their traces, its tables, the stepper and the deferring button."""
    charts = [json.loads(el.proto.spec)["data"] for el in at.get("plotly_chart")]
    return {"charts": len(charts),
            "overview": sum(sum(t.get("name") == "full" and t.get("mode") == "lines" for t in data) == 2
                            for data in charts),  # a strategy's context and cost lines in one chart
            "strip": sum(any(t.get("type") == "heatmap" for t in data) for data in charts),
            "tables": len(at.dataframe), "stepper": sum(b.key == "replay_next" for b in at.button),
            "later": sum(b.key == BELOW for b in at.button)}


def test_defers_only_above_the_limit():
    assert not logic.defers_below(logic.DEFER_ABOVE_REQUESTS)
    assert logic.defers_below(logic.DEFER_ABOVE_REQUESTS + 1)


def test_a_long_replays_first_view_draws_the_charts_and_the_rest_after_the_click(monkeypatch):
    monkeypatch.setattr(logic, "DEFER_ABOVE_REQUESTS", 10)  # the 60-turn session's ~120 requests are "long"
    at = open_replay()
    assert not at.exception, [e.value for e in at.exception]
    first = drawn(at)
    assert first["overview"] == 1 and first["strip"] == 1 and first["charts"] == 2
    assert first["later"] == 1 and first["stepper"] == 0
    assert any("drawn as soon as the charts above are on screen" in c.value for c in at.caption)
    assert not any(t.key == "replay_events" for t in at.dataframe)

    next(b for b in at.button if b.key == BELOW).click().run()  # what the page's script does
    assert not at.exception, [e.value for e in at.exception]
    after = drawn(at)
    assert after["later"] == 0 and after["stepper"] == 1 and after["tables"] > first["tables"]
    assert any(t.key == "replay_events" for t in at.dataframe)
    # and the cost against recall, and what fills the context (issue 33)
    assert after["overview"] == 1 and after["strip"] == 1 and after["charts"] == 4
    at.run()  # any later run of the same replay draws everything
    assert drawn(at) == after


def test_a_short_replay_draws_everything_in_its_first_run():
    at = open_replay()
    assert not at.exception, [e.value for e in at.exception]
    first = drawn(at)
    assert first["later"] == 0 and first["stepper"] == 1 and first["overview"] == 1 and first["strip"] == 1
    assert any(t.key == "replay_events" for t in at.dataframe)
