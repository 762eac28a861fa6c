"""The Replay page: its logic (dashboard/logic/replay.py), its figures (dashboard/replay_charts.py, checked
through their JSON), and the page itself through Streamlit's AppTest."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import replay_charts, ui
from dashboard.logic import replay as logic
from pruner import load_session
from pruner.bench.workloads import generate
from pruner.replay import replay
from tests.support.paths import ROOT, SAMPLES

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")

APP = ROOT / "dashboard" / "app.py"


@pytest.fixture(scope="module")
def small():
    return logic.run(generate("tool_agent", turns=60, seed=0),
                     logic.ReplayChoice(strategies=("full", "prune_every_request", "compact"), context_window=8_000,
                                        reserve_tokens=1_000, keep_recent_tokens=2_000))


# ----- logic ------------------------------------------------------------------------------------

def test_the_requests_frame_holds_every_request_of_every_strategy_with_cumulative_dollars(small):
    frame = logic.requests_frame(small)
    assert len(frame) == 3 * len(small.requests)
    for name, part in frame.groupby("strategy"):
        rows = small.runs[name].rows
        assert part["dollars"].sum() == pytest.approx(sum(r.dollars for r in rows))
        # Every request as replayed: an infeasible strategy's totals["dollars"] stop before its first refused one.
        assert part["cumulative_dollars"].iloc[-1] == pytest.approx(small.runs[name].totals["dollars_as_replayed"],
                                                                    abs=1e-5)
    compacted = frame[(frame["strategy"] == "compact") & (frame["event_kinds"] == "compact")]
    assert len(compacted) and compacted["events"].str.contains("→").all()


def test_the_events_frame_lists_every_event_with_tokens_before_and_after(small):
    events = logic.events_frame(small)
    expected = sum(len(run.events) for run in small.runs.values())
    assert len(events) == expected > 0
    assert (events["removed"] == events["tokens before"] - events["tokens after"]).all()


def test_context_rows_mark_placeholders_and_summaries_as_what_they_are(small):
    kinds = set()
    for name in ("prune_every_request", "compact"):
        for k in range(0, len(small.requests), 7):
            rows = logic.context_rows(small, name, k)
            assert [r["position"] for r in rows] == list(range(len(rows)))
            kinds |= {r["kind"] for r in rows}
    assert {"placeholder: the result was left out", "compaction summary"} <= kinds


def test_edited_prices_are_used_and_labelled():
    choice = logic.ReplayChoice(strategies=("full",), input_price=30.0, write_price=37.5)
    table = choice.prices()
    row = table.get(choice.model)
    assert (row.input, row.cache_write_5m, row.cache_write_1h) == (30.0, 37.5, 60.0)
    r = logic.run(generate("plain_chat", turns=30, seed=0), choice)
    plain = logic.run(generate("plain_chat", turns=30, seed=0), logic.ReplayChoice(strategies=("full",)))
    assert "edited" in r.money_label and "30/" in r.money_label
    assert r.runs["full"].totals["dollars"] > plain.runs["full"].totals["dollars"]


def test_clamp_keeps_the_stepper_on_a_request():
    assert [logic.clamp(k, d, 5) for k, d in ((0, -1), (4, 1), (2, 1), (3, -1))] == [0, 4, 3, 2]


# ----- figures ---------------------------------------------------------------------------------

def test_context_figure_draws_each_strategy_the_window_and_the_events(small):
    frame = logic.requests_frame(small)
    fig = replay_charts.context_figure(frame, window=small.window, selected=5).to_plotly_json()
    names = [t["name"] for t in fig["data"]]
    assert {"full", "prune_every_request", "compact"} <= set(names)
    assert any(n.startswith("compact: compact (") for n in names)
    assert any(s.get("y0") == small.window for s in fig["layout"]["shapes"])  # the window line
    assert any(s.get("x0") == 5 for s in fig["layout"]["shapes"])  # the selected request
    markers = next(t for t in fig["data"] if t["name"].startswith("compact: compact"))
    assert all("→" in text and "this request: $" in text for text in markers["text"])
    assert fig["layout"]["xaxis"]["title"]["text"] == "request (model call)"


def test_cost_and_cached_share_figures(small):
    frame = logic.requests_frame(small)
    cost = replay_charts.cost_figure(frame, money_label="m").to_plotly_json()
    full = next(t for t in cost["data"] if t["name"] == "full")
    assert list(full["y"]) == pytest.approx(list(frame[frame["strategy"] == "full"]["cumulative_dollars"]))
    share = replay_charts.cached_share_figure(frame).to_plotly_json()
    assert share["layout"]["yaxis"]["range"] == [0, 100]
    assert max(max(t["y"]) for t in share["data"]) <= 100


def test_event_hover_text_is_escaped():
    import pandas as pd
    frame = pd.DataFrame({"strategy": ["full"], "request": [0], "turn": [1], "input": [5], "dollars": [0.1],
                          "cumulative_dollars": [0.1], "cached_share": [0.0], "event_kinds": ["prune"],
                          "events": ["prune: <img src=x onerror=alert(1)>"]})
    fig = replay_charts.context_figure(frame, window=10).to_plotly_json()
    text = fig["data"][1]["text"][0]
    assert "<img" not in text and "&lt;img" in text


def test_bench_cost_figure_draws_every_priced_strategy_on_log_axes():
    from pruner.bench.run import run_benchmark
    results = run_benchmark(workloads=["tool_agent"], sizes=[10, 20], timing_runs=1)
    frame = replay_charts.bench_cost_frame(results.rows)
    fig = replay_charts.bench_cost_figure(frame, "tool_agent").to_plotly_json()
    assert {t["name"] for t in fig["data"]} == set(results.rows[0]["cost"])
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis"]["type"] == "log"


# ----- the page ----------------------------------------------------------------------------------

def open_replay(**query) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=180)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    return at.switch_page("app_pages/replay.py").run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert ui.GENERIC_ERROR not in [e.value for e in at.error]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_the_page_opens_on_the_loaded_session_and_steps_through_requests():
    at = open_replay()
    assert_clean(at)
    expected = replay(load_session(SAMPLES / "native_demo.jsonl"))
    name = at.session_state["replay_strategy"]
    # issue 33: the stepper opens on the strategy the verdict names (it opened on cache_aware_prune always)
    from dashboard.logic import replay as page
    from pruner.replay import verdict

    session = load_session(SAMPLES / "native_demo.jsonl")
    assert name == verdict(page.run(session, page.choice_for(session, None))).strategy
    first = expected.runs[name].rows[0]
    assert metrics(at)["Messages sent"] == f"{first.messages:,}"
    at.button(key="replay_next").click().run()
    at.button(key="replay_next").click().run()
    assert at.session_state["replay_request"] == 2
    assert metrics(at)["Messages sent"] == f"{expected.runs[name].rows[2].messages:,}"
    at.button(key="replay_prev").click().run()
    assert at.session_state["replay_request"] == 1
    sent = expected.context(name, 1)
    codes = [c.value for c in at.code]
    assert any(sent[-1].content in c for c in codes)  # the exact text, shown inert
    assert_clean(at)


def test_a_link_opens_a_sample_at_a_strategy_and_request_with_its_calibration():
    at = open_replay(sample="pi_session.jsonl", strategy="as_recorded", request="5")
    assert_clean(at)
    assert at.session_state["replay_request"] == 5 and at.session_state["replay_strategy"] == "as_recorded"
    assert any("billed (recorded usage, each request at its own model's list prices)" in c.value for c in at.code)
    assert any("[summary recorded in the session]" in t.value for t in at.text)


def test_settings_apply_on_submit_and_an_empty_choice_keeps_the_previous_one():
    at = open_replay()
    at.multiselect(key="replay_strategies").set_value(["full", "truncate"])
    at.button(key="FormSubmitter:replay_settings-Apply").click().run()
    assert_clean(at)
    assert list(at.selectbox(key="replay_strategy").options) == ["full", "truncate"]
    at.multiselect(key="replay_strategies").set_value([])
    at.button(key="FormSubmitter:replay_settings-Apply").click().run()
    assert any("Choose at least one strategy" in e.value for e in at.error)
    assert list(at.selectbox(key="replay_strategy").options) == ["full", "truncate"]


def test_a_small_sessions_totals_carry_the_verdicts_four_decimals():
    """The sample Pi session's verdict said $0.0197 while its table said $0.02 (and $0.03 for both
    $0.0289 and $0.0344): a column of sums all under $1 is shown as ``pruner.money.money`` writes them.

    Defect 31."""
    from dashboard.logic.replay import totals_columns
    from pruner.money import money
    small = pd.DataFrame({"strategy": ["as_recorded", "full"], "dollars": [0.0197, 0.0289]})
    fmt = totals_columns(small)["dollars"]["type_config"]["format"]
    assert fmt == "$%.4f" and [fmt % v for v in small["dollars"]] == [money(v) for v in small["dollars"]]
    large = pd.DataFrame({"strategy": ["as_recorded", "full"], "dollars": [0.45, 42.6]})
    assert totals_columns(large)["dollars"]["type_config"]["format"] == "dollar"
