"""A long session's first view draws its timeline first and the sections below it one run later
(``dashboard/after_timeline.py``); the first message it inspects is found without filtering the frame."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from streamlit.testing.v1 import AppTest

from dashboard import after_timeline
from dashboard.logic import explorer as logic
from pruner import STATUSES
from pruner.bench import workloads
from tests.support.paths import ROOT

APP = ROOT / "dashboard" / "app.py"
LONG_TURNS = 400  # about 2,400 messages: over the limit, and quick to generate and prune


def visit(**params) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=180)
    for name, value in params.items():
        at.query_params[name] = str(value)
    return at.run()


#: Below the timeline: context size, composition by role, each chain's requests and what fills the context.
CHARTS_BELOW = 4


def timelines(at: AppTest) -> int:
    return sum(any(t.get("legendgroup") in STATUSES for t in json.loads(el.proto.spec)["data"])
               for el in at.get("plotly_chart"))


def below_the_timeline(at: AppTest) -> dict[str, int]:
    return {"charts": len(at.get("plotly_chart")) - timelines(at), "tables": len(at.dataframe),
            "downloads": len(at.get("download_button")),
            "later": sum(b.key == after_timeline.BUTTON_KEY for b in at.button)}


@pytest.mark.usefixtures("fresh_streamlit_caches")
def test_a_long_sessions_first_view_draws_the_timeline_and_the_rest_on_the_next_run():
    messages = len(workloads.generate("tool_agent", turns=LONG_TURNS, seed=0).messages)
    assert messages > after_timeline.DEFER_ABOVE_MESSAGES
    at = visit(workload="tool_agent", turns=LONG_TURNS, seed=0)
    assert not at.exception
    assert timelines(at) == 1
    assert below_the_timeline(at) == {"charts": 0, "tables": 0, "downloads": 0, "later": 1}
    assert any("drawn as soon as the timeline is on screen" in c.value for c in at.caption)

    next(b for b in at.button if b.key == after_timeline.BUTTON_KEY).click().run()  # what the page's script does
    assert not at.exception
    drawn = below_the_timeline(at)
    assert timelines(at) == 1 and drawn["charts"] == CHARTS_BELOW and drawn["tables"] >= 1 and drawn["downloads"] == 3
    assert drawn["later"] == 0
    at.run()  # any later run of the same session draws everything
    assert below_the_timeline(at) == drawn


@pytest.mark.usefixtures("fresh_streamlit_caches")
def test_a_short_session_draws_everything_in_its_first_run():
    at = visit(workload="tool_agent", turns=20, seed=0)
    assert not at.exception
    drawn = below_the_timeline(at)
    assert drawn["charts"] == CHARTS_BELOW and drawn["tables"] >= 1 and drawn["downloads"] == 3 and drawn["later"] == 0


def first_change_by_hand(rows: list[tuple[str, int]]) -> int:
    """The issue-14 rule read row by row: the first removal pointing somewhere, else the first change, else 0."""
    for k, (status, related) in enumerate(rows):
        if status != "kept" and related >= 0:
            return k
    for k, (status, _) in enumerate(rows):
        if status != "kept":
            return k
    return 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(STATUSES), st.integers(-1, 5)), max_size=30))
def test_first_to_inspect_is_the_first_linked_change_else_the_first_change(rows):
    frame = pd.DataFrame({"position": range(len(rows)), "status": pd.array([s for s, _ in rows], dtype="string"),
                          "related_position": [r for _, r in rows]})
    assert logic.first_to_inspect(frame) == first_change_by_hand(rows)
