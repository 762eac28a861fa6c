"""The Corpus page's logs-folder logic on rows made by the test: groupings by day / project / model,
where the money went, strategy points, the verdict and the sessions that matter, each checked
against sums done here over the same rows."""

from __future__ import annotations

import json
from datetime import date

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.logic import corpus_money as cm
from pruner.replay import CAUSES, strategy_names


def _row(key, day, project, models, *, recorded=None, cheap=None, feasible=True, rebilled=0.0, writes=0.0):
    billed = sum(models.values())
    row = {"session_key": key, "agent": "claude_code", "project": project, "source": f"/x/{key}.jsonl",
           "file": f"{key}.jsonl", "start": f"{day}T10:00:00Z", "end": f"{day}T11:00:00Z", "day": day,
           "billed": billed, "cache_write_dollars": writes, "unpriced_requests": 0, "removed": False,
           "billed_by_model": json.dumps({m: {"requests": 1, "dollars": d, "priced": True} for m, d in models.items()}),
           "prices": "pruner prices, retrieved 2026-11-30", "costliest_miss_request": 3,
           "costliest_miss_dollars": rebilled}
    for cause in CAUSES:
        row[f"misses_{cause}"] = 1 if cause == "no_visible_cause" and rebilled else 0
        row[f"rebilled_{cause}"] = rebilled if cause == "no_visible_cause" else 0.0
    for s in strategy_names():
        row[f"{s}_dollars"], row[f"{s}_feasible"], row[f"{s}_recall"] = None, None, None
    row["as_recorded_dollars"], row["as_recorded_feasible"], row["as_recorded_recall"] = (
        recorded if recorded is not None else billed, True, 1.0)
    row["cache_aware_prune_dollars"] = cheap if cheap is not None else billed
    row["cache_aware_prune_feasible"], row["cache_aware_prune_recall"] = feasible, 0.995
    return row


def _corpus(rows) -> cm.LogsCorpus:
    return cm.LogsCorpus(folder="/logs", sessions=pd.DataFrame(rows))


ROWS = [_row("a", "2026-01-01", "p1", {"m1": 2.0, "m2": 1.0}, cheap=1.5, rebilled=0.5, writes=0.3),
        _row("b", "2026-01-01", "p2", {"m1": 4.0}, cheap=3.9),
        _row("c", "2026-01-02", "p1", {"m2": 0.25}, cheap=0.1, feasible=False)]


def test_dollars_by_day_project_and_model_are_the_rows_grouped():
    frame = _corpus(ROWS).sessions
    by_project = cm.dollars_by_day(frame, "project")
    assert by_project.to_dict("records") == [{"day": "2026-01-01", "group": "p1", "dollars": 3.0},
                                            {"day": "2026-01-01", "group": "p2", "dollars": 4.0},
                                            {"day": "2026-01-02", "group": "p1", "dollars": 0.25}]
    by_model = cm.dollars_by_day(frame, "model")
    assert by_model.to_dict("records") == [{"day": "2026-01-01", "group": "m1", "dollars": 6.0},
                                          {"day": "2026-01-01", "group": "m2", "dollars": 1.0},
                                          {"day": "2026-01-02", "group": "m2", "dollars": 0.25}]
    assert cm.dollars_by(frame, "project")[["project", "dollars"]].values.tolist() == [["p2", 4.0], ["p1", 3.25]]
    assert cm.dollars_by(frame, "model")[["model", "dollars"]].values.tolist() == [["m1", 6.0], ["m2", 1.25]]


def test_where_it_went_and_the_filters():
    paid = cm.where_it_went(_corpus(ROWS).sessions)
    assert paid["billed"] == pytest.approx(7.25) and paid["cache_write_share"] == pytest.approx(0.3 / 7.25)
    unseen = paid["causes"].set_index("cause").loc["no_visible_cause"]
    assert unseen["dollars"] == pytest.approx(0.5) and unseen["share"] == pytest.approx(0.5 / 7.25)
    frame = _corpus(ROWS).sessions
    assert list(cm.filter_rows(frame, projects=["p1"])["session_key"]) == ["a", "c"]
    assert list(cm.filter_rows(frame, days=(date(2026, 1, 2), date(2026, 1, 2)))["session_key"]) == ["c"]


def test_strategy_points_verdict_and_the_sessions_that_matter():
    corpus = _corpus(ROWS)
    points = cm.strategy_points(corpus, corpus.sessions).set_index("strategy")
    assert points.loc["as_recorded", "dollars"] == pytest.approx(7.25) and points.loc["as_recorded", "recording"]
    # summed over a and b only: c is infeasible, and its partial $0.10 is no dollar anyone would pay
    assert points.loc["cache_aware_prune", "dollars"] == pytest.approx(1.5 + 3.9)
    assert points.loc["cache_aware_prune", "modelled"] == pytest.approx(3.0 + 4.0)
    assert not points.loc["cache_aware_prune", "feasible"]
    assert points.loc["cache_aware_prune", "label"] == \
        "cache_aware_prune: $5.40 over 2 of 3 sessions; not possible on 1"
    sentence = " ".join(cm.verdict_lines(corpus, corpus.sessions))
    assert "cache_aware_prune would have saved $1.60 (−22.9 %) over 2 of 3 sessions: $5.40 against $7.00 " \
           "modelled" in sentence, sentence
    matter = cm.sessions_that_matter(corpus, corpus.sessions)
    assert list(matter["session_key"]) == ["a", "b", "c"]  # c: its only cheaper strategy is infeasible
    assert matter["saving"].tolist()[:2] == pytest.approx([1.5, 0.1]) and pd.isna(matter["saving"].iloc[2])
    shown = cm.matter_table(matter)
    assert "None" not in shown.to_string() and shown["saving"].iloc[2] == "-"


def test_folder_sums_count_only_feasible_and_applicable_sessions_recomputed_from_the_rows():
    """The Corpus page's "full $93.62" stood under a real $112.96: it added a partial $14.20 from a session
    full cannot run, and clear_tool_uses added Codex sessions where it does not apply. Each sum is
    recomputed here from the table's rows, with the count of sessions it covers.

    Round 4, defect 33."""
    rows = [dict(_row(k, "2026-01-01", "p", {"m": billed}, cheap=cheap, feasible=ok), modelled=billed * 1.01)
            for k, billed, cheap, ok in (("a", 10.0, 9.0, True), ("b", 5.0, 1.0, False), ("c", 2.0, 1.5, True))]
    rows[2]["clear_tool_uses_dollars"], rows[2]["clear_tool_uses_feasible"] = 0.5, False
    rows[2]["clear_tool_uses_applicable"] = False  # a Codex session
    rows[0]["clear_tool_uses_dollars"], rows[0]["clear_tool_uses_feasible"] = 8.0, True
    rows[0]["clear_tool_uses_applicable"] = True
    corpus = _corpus(rows)
    points = cm.strategy_points(corpus, corpus.sessions).set_index("strategy")
    for name in ("cache_aware_prune", "clear_tool_uses"):
        counted = [r for r in rows if r[f"{name}_dollars"] is not None and r[f"{name}_feasible"]
                   and r.get(f"{name}_applicable") is not False]
        assert points.loc[name, "dollars"] == pytest.approx(sum(r[f"{name}_dollars"] for r in counted))
        assert points.loc[name, "modelled"] == pytest.approx(sum(r["modelled"] for r in counted))
        assert points.loc[name, "feasible_sessions"] == len(counted)
    assert points.loc["cache_aware_prune", "label"] == \
        "cache_aware_prune: $10.50 over 2 of 3 sessions; not possible on 1"
    assert points.loc["clear_tool_uses", "label"] == "clear_tool_uses: $8.00 over 1 of 2 sessions; does not apply on 1"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["2026-01-01", "2026-01-02", "2026-01-03"]), st.sampled_from(["p", "q"]),
                          st.dictionaries(st.sampled_from(["m1", "m2", "m3"]),
                                          st.floats(0, 100, allow_nan=False), min_size=1)),
                min_size=1, max_size=12))
def test_every_grouping_adds_up_to_the_bill(rows):
    frame = _corpus([_row(f"s{i}", d, p, m) for i, (d, p, m) in enumerate(rows)]).sessions
    total = sum(sum(m.values()) for _, _, m in rows)
    for stack in ("project", "model"):
        assert cm.dollars_by_day(frame, stack)["dollars"].sum() == pytest.approx(total, abs=1e-6)
    for column in ("project", "model"):
        assert cm.dollars_by(frame, column)["dollars"].sum() == pytest.approx(total, abs=1e-6)


def test_dollars_by_day_run_in_calendar_order_and_a_lone_segment_is_labelled_once():
    """The logs screenshot showed 2025-11-16, 2025-09-07, 2026-05-11, ...: days in the order the first
    project brought them, and a one-project day labelled twice ($8.37 inside and above).

    Defect 30."""
    from dashboard import corpus_money_charts as charts
    frame = pd.DataFrame(_row(k, d, p, {"m": v}) for k, d, p, v in (
        ("a", "2025-11-16", "alpha", 2.5), ("b", "2025-09-07", "beta", 0.5), ("c", "2026-05-11", "gamma", 8.0),
        ("d", "2025-09-07", "alpha", 1.0)))
    fig = charts.stacked_days(cm.dollars_by_day(frame, "project"), "Dollars by day").to_plotly_json()
    assert list(fig["layout"]["xaxis"]["categoryarray"]) == ["2025-09-07", "2025-11-16", "2026-05-11"]
    bars = {t["name"]: dict(zip(t["x"], t["text"])) for t in fig["data"] if t["type"] == "bar"}
    assert bars["alpha"]["2025-11-16"] == "" and bars["gamma"]["2026-05-11"] == ""  # the day's only segment
    assert bars["alpha"]["2025-09-07"] == "$1.00" and bars["beta"]["2025-09-07"] == "$0.5000"  # two segments
    totals = next(t for t in fig["data"] if t["type"] == "scatter")
    assert dict(zip(totals["x"], totals["text"]))["2025-09-07"] == "$1.50"


def test_a_saving_inside_the_band_is_no_measurable_saving_and_measured_against_the_model():
    """A saving of 0.3 % read "saving $0.0370, 0.3 %" against the bill: inside the cache model's error it is
    no measurable saving, and it is measured against the modelled recording.

    Round 4, defect 33."""
    rows = [dict(_row(k, "2026-01-01", "p", {"m": 2.3}, cheap=2.3 - 0.0074), modelled=2.308) for k in "abcde"]
    corpus = _corpus(rows)
    sentence = " ".join(cm.verdict_lines(corpus, corpus.sessions))
    modelled, bill = 5 * 2.308, 5 * 2.3
    assert f"modelled ${modelled:,.2f} over the 5 replayed" in sentence and f"Billed ${bill:,.2f}" in sentence
    assert "No measurable saving: the largest, cache_aware_prune" in sentence, sentence
