"""The hindsight bound across a folder of logs (issue 30, "Where a user sees it"): ``pruner logs --bound``
stores each session's bound, a run that asks for it reads again a row made without it, and the folder's
sums (``pruner logs``' closing line, the Corpus page's section) add only the sessions where both the bound
and ``cache_aware`` have a figure. Each session's bound is read from ``pruner replay --limit --json`` of the
same file; every sum is the test's own, over the Parquet rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from dashboard.logic import corpus_bound
from pruner.cli import main
from pruner.logs import discover, run_logs
from pruner.logs.bound import BOUND_VERSION, bound_answer, largest_gaps
from pruner.logs.table import TABLE
from pruner.money import money
from pruner.replay import strategy_names
from tests.support.paths import SAMPLES

FILES = {".claude/projects/-work-alpha/s1.jsonl": "claude_code.jsonl",
         ".pi/agent/sessions/--work-beta--/2025-11-20_s.jsonl": "pi_session.jsonl"}


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for where, sample in FILES.items():
        (home / where).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / sample, home / where)
    return home


def _found(home: Path):
    return [s for loc in discover({"HOME": str(home)}) for s in loc.sessions]


def _rows(out: Path) -> list[dict]:
    return pq.read_table(out / TABLE).to_pylist()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("logs")
    home, out = _home(tmp), tmp / "out"
    first = run_logs(_found(home), str(out), strategies=tuple(strategy_names()))
    second = run_logs(_found(home), str(out), strategies=tuple(strategy_names()), bound=True)
    third = run_logs(_found(home), str(out), strategies=tuple(strategy_names()), bound=True)
    return home, out, (first, second, third)


def test_each_rows_bound_is_what_pruner_replay_limit_writes_for_its_file(folder, tmp_path):
    home, out, _ = folder
    rows = _rows(out)
    assert len(rows) == len(FILES)
    for row in rows:
        source = json.loads(row["files"])[0][0]
        target = tmp_path / (Path(source).name + ".json")
        assert main(["replay", source, "--limit", "--json", str(target)]) == 0
        limit = json.loads(target.read_text())["limit"]
        assert row["bound_version"] == BOUND_VERSION
        assert row["bound_dollars"] == pytest.approx(limit["combined"]["dollars"], abs=1e-6)
        assert json.loads(row["bound_schedule"]) == [[a["request"], a["action"]] for a in limit["combined"]["schedule"]]
        for family in ("prune", "compaction", "clearing"):
            expected = limit[family]["dollars"] if limit[family]["applicable"] else None
            assert row[f"bound_{family}_dollars"] == pytest.approx(expected, abs=1e-6)


def test_a_run_asking_for_the_bound_reads_again_only_the_rows_made_without_it(folder):
    _, _, (first, second, third) = folder
    assert first.read == len(FILES)
    assert second.read == len(FILES) and second.changed == len(FILES)  # made without the bound: read again
    assert third.read == 0 and third.unchanged == len(FILES)


def test_the_folder_sum_adds_only_sessions_with_both_figures_and_names_the_count(folder):
    _, out, _ = folder
    rows = _rows(out)
    both = [r for r in rows if r["bound_dollars"] is not None and r["cache_aware_feasible"]
            and r["cache_aware_applicable"] and r["cache_aware_dollars"] is not None]
    answer = bound_answer(rows)
    assert answer.online == "cache_aware" and answer.sessions == len(both) and answer.computed == len(rows)
    at_most = sum(r["modelled"] - r["bound_dollars"] for r in both)
    saved = sum(r["modelled"] - r["cache_aware_dollars"] for r in both)
    assert answer.at_most == pytest.approx(at_most, abs=1e-6)
    assert answer.online_saving == pytest.approx(saved, abs=1e-6)
    text = answer.text()
    assert f"Across {len(both):,} of {len(rows):,} sessions with the bound" in text
    assert (f"cache_aware would have saved {money(saved)}" if saved >= 0 else
            f"cache_aware would have cost {money(-saved)} more") in text


def test_the_corpus_page_groups_by_project_and_lists_the_largest_gaps_first(folder):
    import pandas as pd

    _, out, _ = folder
    rows = _rows(out)
    frame = pd.DataFrame(rows)
    by_project = corpus_bound.by_frame(frame, "project")
    assert sorted(by_project["project"]) == sorted({r["project"] for r in rows if r["bound_dollars"] is not None})
    assert by_project["sessions"].sum() == bound_answer(rows).sessions
    gaps = largest_gaps(rows)
    expected = sorted((r["cache_aware_dollars"] - r["bound_dollars"] for r in rows
                       if r["bound_dollars"] is not None and r["cache_aware_feasible"]), reverse=True)
    assert [g["gap"] for g in gaps] == pytest.approx(expected, abs=1e-6)
    assert list(corpus_bound.gaps_frame(frame)["session"]) == [g["session_key"] for g in gaps]


def test_without_the_bound_the_folder_says_it_was_not_computed_and_how_to_ask_for_it():
    text = bound_answer([{"modelled": 1.0, "bound_version": None}]).text()
    assert text.startswith("The hindsight bound: not computed") and "pruner logs --bound" in text


def test_bound_needs_the_replay(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(_home(tmp_path)))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    code = main(["logs", "--out", str(tmp_path / "out"), "--bound", "--bill-only"])
    assert code != 0
    assert "--bound needs the strategies' replay" in capsys.readouterr().err


@pytest.mark.usefixtures("fresh_streamlit_caches")
def test_the_corpus_page_shows_the_folders_bound_sentence(folder):
    from streamlit.testing.v1 import AppTest

    from tests.support.paths import ROOT

    _, out, _ = folder
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=180).run()
    at.switch_page("app_pages/corpus.py").run()
    at.text_input(key="corpus_folder_input").set_value(str(out))
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    expected = bound_answer(_rows(out)).text()
    assert any(m.value.replace("\\", "") == expected for m in at.markdown), expected
    assert any(d.value.columns[0] == "session" for d in at.dataframe)  # the largest gaps
