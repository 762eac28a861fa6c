"""The hindsight bound on the Replay page (issue 30, "Where a user sees it"): the verdict names it, the
cumulative-cost chart draws it with its schedule's actions, cost against recall has its point, and the
strategies table a regret column. Every figure checked here is read from what ``pruner replay --json
--limit`` wrote for the same session, and the regret computed by the test from those rows."""

from __future__ import annotations

import json

import pytest

from dashboard import replay_answers, replay_charts
from dashboard.logic import replay as logic
from dashboard.logic import replay_bound
from pruner import load_session
from pruner.bench.workloads import generate
from pruner.cli import main
from pruner.formats.native import dumps
from pruner.money import money
from tests.support.paths import SAMPLES
from tests.unit.dashboard.test_replay_dashboard import assert_clean, open_replay

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")

#: A window small enough that sending everything is infeasible (a regret of "n/a") and compaction is needed.
KNOBS = {"context_window": 8_000, "reserve_tokens": 1_000, "keep_recent_tokens": 2_000}


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bound")
    path, out = folder / "agent.jsonl", folder / "agent.replay.json"
    path.write_text(dumps(generate("tool_agent", turns=30, seed=1)), encoding="utf-8")
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in KNOBS.items()]
    assert main(["replay", str(path), "--limit", "--json", str(out), *flags]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    session = load_session(path)
    choice = logic.choice_for(session, None)
    from dataclasses import replace
    r = logic.run(session, replace(choice, **KNOBS))
    return r, replay_bound.limits(r), doc


def _expected_regret(totals: dict, bound: float | None) -> str:
    if bound is None or not (totals["feasible"] and totals["applicable"]) or totals["unpriced_requests"]:
        return "n/a"
    value = round(totals["dollars"] - bound, 6)
    return f"{'+' if value >= 0 else '−'}{money(abs(value))}"


def test_the_regret_column_is_each_strategys_dollars_over_the_combined_bound(case):
    r, limits, doc = case
    bound = doc["limit"]["combined"]["dollars"]
    assert bound is not None, "this session has a feasible schedule"
    frame = logic.totals_frame(r, replay_bound.regret_column(r, limits))
    shown = dict(zip(frame["strategy"].str.split(" ").str[0], frame["regret"]))
    expected = {name: _expected_regret(s["totals"], bound) for name, s in doc["strategies"].items()}
    assert shown == expected
    assert "n/a" in shown.values(), "full is infeasible under this window: no regret, never ranked"
    assert list(frame.columns).index("regret") == list(frame.columns).index("vs modelled") + 1


def test_without_a_bound_the_table_has_no_regret_column(case):
    r, _, _ = case
    assert "regret" not in logic.totals_frame(r).columns


def test_the_cost_chart_draws_the_bound_to_its_dollars_and_marks_its_schedule(case):
    r, limits, doc = case
    combined = doc["limit"]["combined"]
    line = replay_bound.bound_frame(r, limits)
    marks = replay_bound.schedule_marks(limits, line)
    fig = replay_charts.overview_figure(logic.requests_frame(r), window=r.window, bound=line, bound_marks=marks)
    drawn = [t for t in fig.data if t.name == replay_charts.BOUND_LABEL]
    assert len(drawn) == 1 and drawn[0].yaxis == "y2"  # the cumulative-cost chart, not the context one
    assert drawn[0].y[-1] == pytest.approx(combined["dollars"], abs=1e-6)
    assert sum(line["dollars"]) == pytest.approx(combined["dollars"], abs=1e-6)
    marked = {(x, t.name.split(": ", 1)[1].rsplit(" (", 1)[0]) for t in fig.data
              if t.name.startswith(replay_charts.BOUND_LABEL + ": ") for x in t.x}
    assert marked == {(a["request"], a["action"]) for a in combined["schedule"]}
    assert all(t.yaxis == "y2" for t in fig.data if t.legendgroup == replay_charts.BOUND_LABEL)


def test_cost_against_recall_has_the_bound_as_a_point_no_click_selects(case):
    r, limits, doc = case
    combined = doc["limit"]["combined"]
    fig = replay_answers.cost_recall_figure(replay_answers.recall_points(r), bound=replay_bound.bound_point(limits))
    point = next(t for t in fig.data if t.name == replay_charts.BOUND_LABEL)
    assert (point.x[0], point.y[0]) == pytest.approx((100 * combined["recall"], combined["dollars"]), abs=1e-6)
    assert point.customdata is None  # a click on it selects no strategy
    assert replay_answers.clicked_strategy({"selection": {"points": [{"x": point.x[0]}]}}) is None


def _least(limit: dict, bar: str = "99 %") -> str:
    """The third line's bound, worded here from ``--json``'s ``limit.combined`` (exact, or between the proven
    lower bound and the schedule found)."""
    if limit["exact"]:
        return f"the least any schedule could cost at ≥ {bar} recall: {money(limit['dollars'])} (exact)"
    return (f"the least any schedule could cost at ≥ {bar} recall: between {money(limit['lower_bound'])} and "
            f"{money(limit['dollars'])}")


def test_the_verdict_states_the_bound_the_cli_computed_once_and_never_as_best_possible(case, capsys, tmp_path):
    r, limits, doc = case
    path = tmp_path / "again.jsonl"
    path.write_text(dumps(r.session), encoding="utf-8")
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in KNOBS.items()]
    capsys.readouterr()
    assert main(["replay", str(path), "--limit", *flags]) == 0
    printed = capsys.readouterr().out
    least = _least(doc["limit"]["combined"])
    assert printed.count(least) == 1 and printed.splitlines()[-1].endswith(least + ".")
    assert "Best possible" not in printed and "best possible" not in printed


def test_a_replay_without_recall_has_no_bound():
    from pruner.replay import replay

    r = replay(generate("tool_agent", turns=4, seed=0), ["full"], recall=False)
    assert replay_bound.limits(r) is None
    assert replay_bound.bound_frame(r, None).empty and replay_bound.bound_point(None) is None


# ----- the page ----------------------------------------------------------------------------------

def test_the_pages_verdict_names_the_bound_and_its_table_has_regret():
    at = open_replay(sample="pi_session.jsonl")
    assert_clean(at)
    verdict = next(i.value for i in at.info if "least any schedule could cost" in i.value).replace("\\", "")
    from pruner.replay import replay

    expected = replay(load_session(SAMPLES / "pi_session.jsonl"))
    assert _least(replay_bound.limits(expected).combined.as_dict()) in verdict
    table = next(d.value for d in at.dataframe if "regret" in getattr(d.value, "columns", []))
    assert len(table) == len(expected.runs)


def test_a_long_sessions_bound_waits_for_the_button_and_then_stands_in_the_verdict(monkeypatch):
    monkeypatch.setattr(replay_bound, "AT_ONCE_MAX_REQUESTS", 3)  # the 7-request sample counts as long
    at = open_replay(sample="pi_session.jsonl")
    assert_clean(at)
    assert not any("recall: $" in i.value.replace("\\", "") for i in at.info)
    assert any("was not computed (not yet" in i.value.replace("\\", "") for i in at.info)
    at.button(key="replay_bound_button").click().run()
    assert_clean(at)
    assert any("least any schedule could cost at ≥ 99 % recall: $" in i.value.replace("\\", "") for i in at.info)
