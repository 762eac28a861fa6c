"""The Corpus page: its logic and chart builders on a real batch folder, and the page through AppTest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import components, corpus_charts, session_state, ui
from pruner import STATUSES
from dashboard.logic import corpus
from pruner.batch import MANIFEST, run_batch
from pruner.errors import ConfigurationError, FormatError
from tests.support.paths import ROOT, SAMPLES
from tests.support.batch import serial_results

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_streamlit_caches")]
APP = ROOT / "dashboard" / "app.py"
EVIL_NAME = "<img src=x onerror=alert(1)>.jsonl"


@pytest.fixture(scope="module")
def batch_folder(tmp_path_factory):
    src = tmp_path_factory.mktemp("corpus-in")
    for name in ("native_demo.jsonl", "openai_chat.json", "pi_session.jsonl", "swe_agent.traj",
                 "workload-tool_agent-50.jsonl", "workload-plain_chat-50.jsonl"):
        shutil.copy(SAMPLES / name, src / name)
    shutil.copy(SAMPLES / "native_demo.jsonl", src / EVIL_NAME)
    (src / "broken.json").write_text("[1, 2", encoding="utf-8")
    out = tmp_path_factory.mktemp("corpus-out") / "out"
    run_batch([str(src)], out, workers=1)
    return src, out


def test_read_corpus_totals_equal_the_serial_loop(batch_folder):
    src, out = batch_folder
    shown = corpus.read_corpus(out)
    expected = serial_results([src])
    ok = [v for v in expected.values() if v["error"] is None]
    t = corpus.totals(shown.sessions)
    assert t["sessions"] == len(ok) and t["failed"] == 1 and t["files"] == len(expected)
    assert t["tokens_before"] == sum(v["tokens"][0] for v in ok)
    assert t["tokens_after"] == sum(v["tokens"][1] for v in ok)
    rules = corpus.by_rule(shown.sessions, shown.rule_statuses)
    want = {}
    for v in ok:
        for rule, n in v["rules"].items():
            want[rule] = want.get(rule, 0) + n
    assert dict(zip(rules["rule"], rules["messages"])) == want
    assert shown.rule_statuses["superseded_call"] == "expired"
    assert shown.rule_statuses["exact_duplicate"] == "duplicate"
    assert shown.rule_statuses.get("dependency", "restored") == "restored"
    per_format = corpus.by_format(shown.sessions).set_index("format")
    assert per_format["sessions"].sum() == len(ok)


def test_extremes_and_filters(batch_folder):
    _, out = batch_folder
    frame = corpus.read_corpus(out).sessions
    most, least = corpus.extremes(frame, n=3)
    ok = frame[frame["error"].isna()]
    assert most["reduction"].iloc[0] == ok["reduction"].max()
    assert least["reduction"].iloc[0] == ok["reduction"].min()
    assert list(most["reduction"]) == sorted(most["reduction"], reverse=True)
    errors = corpus.filter_sessions(frame, errors="errors only")
    assert [Path(s).name for s in errors["source"]] == ["broken.json"]
    high = corpus.filter_sessions(frame, errors="pruned only", reduction=(20.0, 100.0))
    assert (high["reduction_pct"] >= 20).all() and len(high) == int((ok["reduction_pct"] >= 20).sum())
    pi = corpus.filter_sessions(frame, formats=["pi"])
    assert set(pi["format"]) == {"pi"}
    assert set(corpus.filter_sessions(frame, text="WORKLOAD-")["file"]) == {
        "workload-tool_agent-50.jsonl", "workload-plain_chat-50.jsonl"}


def test_chart_builders_count_every_session_and_escape_names(batch_folder):
    _, out = batch_folder
    shown = corpus.read_corpus(out)
    frame = shown.sessions
    hist = corpus_charts.reduction_histogram(frame)
    assert sum(sum(t.y) for t in hist.data) == int(frame["error"].isna().sum())
    bins = corpus_charts.reduction_bins(frame)
    ok = frame[frame["error"].isna()]
    for row in bins[bins["sessions"] > 0].itertuples():  # every session falls in its own bin
        pct = ok.loc[ok["format"] == row.format, "reduction_pct"]
        assert row.sessions == int(((pct >= row.low) & (pct < row.low + 5)).sum())
    most, _ = corpus.extremes(frame, n=20)
    fig = corpus_charts.extremes_figure(most, title="most")
    assert [c[0] for c in fig.data[0].customdata] == most["session_id"].tolist()
    spec = fig.to_json()
    assert "<img" not in spec and "&lt;img src=x onerror=alert(1)&gt;" in spec
    event = {"selection": {"points": [{"customdata": list(fig.data[0].customdata[1])}]}}
    assert corpus_charts.clicked_session(event) == most["session_id"].iloc[1]
    assert corpus_charts.clicked_session({"selection": {"points": []}}) is None
    rules = corpus_charts.rule_figure(corpus.by_rule(frame, shown.rule_statuses))
    assert sum(rules.data[0].x) == sum(int(frame[c].fillna(0).sum()) for c in frame if c.startswith("rule_"))


def test_open_session_loads_it_from_its_file_and_dialogue(batch_folder, tmp_path):
    src, out = batch_folder
    shown = corpus.read_corpus(out)
    row = shown.sessions[shown.sessions["file"] == "pi_session.jsonl"].iloc[0]
    loaded = corpus.open_session(shown, row["session_id"])
    assert loaded.origin == "corpus" and len(loaded.session.messages) == row["messages_before"]
    broken = shown.sessions[shown.sessions["error"].notna()].iloc[0]
    with pytest.raises(FormatError, match="could not be read by the batch"):
        corpus.open_session(shown, broken["session_id"])


def test_a_changed_or_missing_file_is_a_clear_error(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(SAMPLES / "native_demo.jsonl", src / "a.jsonl")
    run_batch([str(src)], tmp_path / "out", workers=1)
    shown = corpus.read_corpus(tmp_path / "out")
    sid = shown.sessions["session_id"].iloc[0]
    shutil.copy(SAMPLES / "openai_chat.json", src / "a.jsonl")
    with pytest.raises(FormatError, match="changed since the batch ran"):
        corpus.open_session(shown, sid)
    (src / "a.jsonl").unlink()
    with pytest.raises(FormatError, match="may have moved"):
        corpus.open_session(shown, sid)


def test_a_named_pipe_in_place_of_a_batch_file_is_refused_not_waited_on(tmp_path):
    # The Corpus page read the manifest and the session's source file with a plain open(): a
    # named pipe typed as either would hold the dashboard server forever.
    """Defect 15."""
    import os
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(SAMPLES / "native_demo.jsonl", src / "a.jsonl")
    out = tmp_path / "out"
    run_batch([str(src)], out, workers=1)
    shown = corpus.read_corpus(out)
    (src / "a.jsonl").unlink()
    os.mkfifo(src / "a.jsonl")
    with pytest.raises(FormatError, match="named pipe"):
        corpus.open_session(shown, shown.sessions["session_id"].iloc[0])
    manifest = out / MANIFEST
    manifest.unlink()
    os.mkfifo(manifest)
    with pytest.raises(ConfigurationError, match="named pipe"):
        corpus.read_corpus(out)


def test_read_corpus_refuses_a_folder_that_is_not_a_batch(tmp_path):
    with pytest.raises(ConfigurationError, match="no such folder"):
        corpus.read_corpus(tmp_path / "nope")
    with pytest.raises(ConfigurationError, match="not a batch folder"):
        corpus.read_corpus(tmp_path)


def _corpus_page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=180).run().switch_page("app_pages/explorer.py").run()
    at.switch_page("app_pages/corpus.py").run()
    return at


def test_page_opens_a_folder_shows_charts_and_keeps_it_on_a_bad_one(batch_folder):
    _, out = batch_folder
    at = _corpus_page()
    assert not at.exception
    assert any("No batch open yet" in i.value for i in at.info)
    at.text_input(key="corpus_folder_input").set_value(str(out))
    at.button[0].click().run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    t = corpus.totals(corpus.read_corpus(out).sessions)
    assert metrics["Sessions"] == f"{t['sessions']:,}" and metrics["Failed"] == "1"
    assert metrics["Tokens before → after"] == components.before_after(t["tokens_before"], t["tokens_after"])[0]
    assert metrics["Token reduction"] == f"{100 * t['reduction']:.1f} %"
    assert len(at.get("plotly_chart")) == 6
    at.selectbox(key="corpus_filter_errors").set_value("errors only").run()
    assert "1 of" in at.caption[-1].value or any("1 of" in c.value for c in at.caption)
    at.text_input(key="corpus_folder_input").set_value(str(SAMPLES))
    at.button[0].click().run()
    assert "not a batch folder" in at.error[0].value and "still open" in at.error[0].value
    assert {m.label: m.value for m in at.metric}["Sessions"] == f"{t['sessions']:,}"  # the previous batch stays
    assert ui.GENERIC_ERROR not in [e.value for e in at.error]


def test_clicking_a_session_opens_it_in_the_explorer_with_the_batch_settings(batch_folder):
    _, out = batch_folder
    at = _corpus_page()
    at.text_input(key="corpus_folder_input").set_value(str(out))
    at.button[0].click().run()
    shown = corpus.read_corpus(out)
    row = shown.sessions[shown.sessions["file"] == "pi_session.jsonl"].iloc[0]
    at.session_state["corpus_open"] = row["session_id"]
    at.run()
    assert not at.exception
    assert at.title[0].value == "Session explorer"
    assert at.session_state[session_state.LOADED].origin == "corpus"
    assert any("pi_session.jsonl · corpus" in t.value for t in at.text)
    statuses = " · ".join(f"{s} {int(row[s]):,}" for s in STATUSES)
    assert any(f"Messages per status: {statuses}" in c.value for c in at.caption)  # pruned as in the batch


def test_the_explorer_gets_the_settings_the_batch_ran_with(tmp_path):
    from pruner import PruneConfig
    from pruner.batch import BatchSettings
    config = PruneConfig(deduplicate=False, near_duplicate_threshold=0.9, orphan_policy="drop_pair")
    run_batch([str(SAMPLES / "native_demo.jsonl")], tmp_path / "out", BatchSettings(config=config), workers=1)
    shown = corpus.read_corpus(tmp_path / "out")
    assert corpus.batch_config(shown) == config


def test_a_batch_with_replay_shows_dollars_per_strategy_with_its_prices(tmp_path):
    from pruner.batch import BatchSettings
    out = tmp_path / "out"
    run_batch([str(SAMPLES / "native_demo.jsonl"), str(SAMPLES / "workload-tool_agent-50.jsonl")], out,
              BatchSettings(replay=("full", "cache_aware_prune")), workers=1)
    shown = corpus.read_corpus(out)
    totals = corpus.replay_totals(shown.replay)
    assert list(totals["strategy"]) == ["full", "cache_aware_prune"] and list(totals["sessions"]) == [2, 2]
    assert totals["dollars"].iloc[0] == pytest.approx(shown.replay[shown.replay["strategy"] == "full"]["dollars"].sum())
    fig = corpus_charts.dollars_figure(totals)
    assert list(fig.data[0].y) == totals["dollars"].tolist()
    at = _corpus_page()
    at.text_input(key="corpus_folder_input").set_value(str(out))
    at.button[0].click().run()
    assert not at.exception and len(at.get("plotly_chart")) == 7
    assert any(c.value.startswith("Prices: ") and "USD per MTok" in c.value for c in at.caption)
