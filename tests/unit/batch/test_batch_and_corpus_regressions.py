"""Regression tests for issue 23 (reliability round 3), the batch and Corpus side: defects 1, 3, 8, 13,
16, 17 (pruner batch and its folder) and 12, 15 (the Corpus page's logic), each named
after the behaviour it pins (its defect in its docstring). The CLI, summariser and replay side is in
tests/unit/replay/test_cli_and_replay_regressions.py; the
two-process tests (a second batch refused while the first runs, a killed batch's lock taken over) in
tests/unit/batch/test_batch_concurrency.py.

Run against the old main (f2633c4, a scratch worktree): every test here failed there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from pruner.batch import BatchSettings, Folder, expand_inputs, run_batch
from pruner.batch.worker import Partition, process_file, run_partition
from pruner.errors import ConfigurationError, PrunerError
from pruner.replay import ReplaySettings
from tests.support.paths import SAMPLES
from tests.support.cli_run import finishes, make_fifo, run_cli

pytestmark = pytest.mark.slow  # CONTRIBUTING.md, "Running the tests": out of the fast lane

NATIVE = SAMPLES / "native_demo.jsonl"


def _dead_process() -> tuple[int, float]:
    """The pid and start time of a process that has ended (started and reaped here)."""
    import psutil
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    started = psutil.Process(proc.pid).create_time()
    proc.wait()
    return proc.pid, started


def _write_lock(out: Path, *, pid: int, started: float, host: str | None = None) -> None:
    import socket
    out.mkdir(parents=True, exist_ok=True)
    (out / "_pruner_batch.lock").write_text(json.dumps({"pid": pid, "started": started,
                                                        "host": host or socket.gethostname(), "token": "old"}))


# --- 1: a second batch on the same folder destroyed the running one's files ------------------------------

def test_a_second_batch_is_refused_naming_the_running_one_and_touches_nothing(tmp_path):
    """Round 3, defect 01."""
    out = tmp_path / "out"
    run_batch([str(NATIVE)], out, workers=1)
    import psutil
    me = psutil.Process(os.getpid())
    _write_lock(out, pid=me.pid, started=me.create_time())  # a live holder: this very process
    in_flight = [out / "decisions" / ".part-live.parquet.0123abcd.tmp", out / "decisions" / "part-live.parquet"]
    for path in in_flight:
        path.write_bytes(b"being written by the running batch")
    with pytest.raises(ConfigurationError, match=rf"another batch is running on this folder \(process {me.pid} "):
        run_batch([str(NATIVE), str(SAMPLES / "openai_chat.json")], out, workers=1)
    assert all(p.read_bytes() == b"being written by the running batch" for p in in_flight)
    assert json.loads((out / "_pruner_batch.lock").read_text())["pid"] == me.pid  # not released by the refused run


def test_the_cli_refuses_with_one_line_and_exit_2(tmp_path, capsys):
    """Round 3, defect 01."""
    out = tmp_path / "out"
    import psutil
    me = psutil.Process(os.getpid())
    _write_lock(out, pid=me.pid, started=me.create_time())
    code, _, err = run_cli(["batch", NATIVE, "--out", out], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"another batch is running on this folder (process {me.pid} on " in err


def test_a_lock_whose_process_is_gone_is_taken_over_and_released(tmp_path):
    """Round 3, defect 01."""
    out = tmp_path / "out"
    run_batch([str(NATIVE)], out, workers=1)
    pid, started = _dead_process()
    _write_lock(out, pid=pid, started=started)
    leftover = out / "decisions" / "part-killed.parquet"  # the killed run's uncommitted partition
    leftover.write_bytes(b"x")
    summary = run_batch([str(NATIVE), str(SAMPLES / "openai_chat.json")], out, workers=1)
    assert summary.took_over.startswith(f"process {pid} on ") and summary.files == 1 and summary.skipped == 1
    assert not leftover.exists() and not (out / "_pruner_batch.lock").exists()
    manifest = json.loads((out / "_pruner_batch.json").read_text())
    assert manifest["last_run"]["took_over"] == summary.took_over


def test_a_reused_pid_with_another_start_time_is_a_stale_lock(tmp_path):
    """The pid alone is not enough: this process's pid with a start time an hour earlier is another process.

    Round 3, defect 01."""
    out = tmp_path / "out"
    import psutil
    me = psutil.Process(os.getpid())
    _write_lock(out, pid=me.pid, started=me.create_time() - 3600)
    summary = run_batch([str(NATIVE)], out, workers=1)
    assert summary.took_over.startswith(f"process {me.pid} ") and summary.files == 1


def test_a_lock_from_another_host_is_refused_not_guessed(tmp_path):
    """Round 3, defect 01."""
    out = tmp_path / "out"
    _write_lock(out, pid=1, started=0.0, host="some-other-host.invalid")
    with pytest.raises(ConfigurationError, match="another host"):
        run_batch([str(NATIVE)], out, workers=1)


def test_racing_manifest_writers_always_leave_valid_json(tmp_path):
    """Two writers of the manifest (as two runs were) never fail a rename nor leave half a file.

    Round 3, defect 01."""
    out = tmp_path / "out"
    folder = Folder(str(out))
    settings = BatchSettings()
    folder.prepare(settings)
    errors: list[BaseException] = []

    def writer(n: int):
        try:
            for i in range(150):
                folder.write_manifest(settings, {"writer": n, "i": i, "pad": "x" * 2000})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    readings = 0
    while any(t.is_alive() for t in threads):
        body = json.loads((out / "_pruner_batch.json").read_text())  # never half a file
        assert body["last_run"] == {} or body["last_run"]["pad"] == "x" * 2000
        readings += 1
    for t in threads:
        t.join()
    assert errors == [] and readings > 0
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]


def test_a_task_of_a_run_that_lost_the_folder_commits_nothing(tmp_path):
    """Round 3, defect 01."""
    out = tmp_path / "out"
    from pruner.batch.lock import acquire, release
    Folder(str(out)).prepare(BatchSettings())
    lock = acquire(str(out))
    try:
        stale = Partition(key="k1", out=str(out), files=(str(NATIVE),), settings=BatchSettings(),
                          lock_token="a-run-that-was-stopped")
        with pytest.raises(PrunerError, match="no longer holds the folder"):
            run_partition(stale)
        assert not list((out / "sessions").iterdir()) and not list((out / "decisions").iterdir())
        live = Partition(key="k1", out=str(out), files=(str(NATIVE),), settings=BatchSettings(),
                         lock_token=lock.holder.token)
        run_partition(live)
        assert len(pd.read_parquet(out / "sessions")) == 1
    finally:
        release(str(out), lock.holder)


# --- 3: the manifest's fixed temporary name followed a planted link -----------------------------------

def test_a_link_planted_at_the_manifests_temporary_name_is_not_followed(tmp_path):
    """Round 3, defect 03."""
    out = tmp_path / "out"
    run_batch([str(NATIVE)], out, workers=1)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, out / "._pruner_batch.json.tmp")
    run_batch([str(NATIVE)], out, workers=1)
    assert victim.read_text() == "precious"
    assert json.loads((out / "_pruner_batch.json").read_text())["pruner_batch"] == 1


def test_a_manifest_that_is_a_link_is_refused_and_never_written_through(tmp_path):
    """Round 3, defect 03."""
    out = tmp_path / "out"
    run_batch([str(NATIVE)], out, workers=1)
    victim = tmp_path / "victim.json"
    victim.write_text((out / "_pruner_batch.json").read_text())
    before = victim.read_text()
    (out / "_pruner_batch.json").unlink()
    os.symlink(victim, out / "_pruner_batch.json")
    with pytest.raises(ConfigurationError, match="symbolic link"):
        run_batch([str(NATIVE)], out, workers=1)
    Folder(str(out)).write_manifest(BatchSettings(), {"x": 1})  # replaces the link, not its target
    assert victim.read_text() == before and not os.path.islink(out / "_pruner_batch.json")


# --- 8: a listed file replaced by a pipe hung the worker ------------------------------------------------

def test_a_file_that_became_a_pipe_is_an_error_row_not_a_hang(tmp_path):
    """Round 3, defect 08."""
    fifo = make_fifo(tmp_path / "x.jsonl")
    rows = finishes(lambda: process_file(str(fifo), BatchSettings(), "k"), 20, unblock=fifo)
    assert len(rows) == 1 and "named pipe (FIFO)" in rows[0]["error"] and str(fifo) in rows[0]["error"]


def test_a_done_file_replaced_by_a_pipe_is_not_waited_on_when_rerun(tmp_path):
    """Round 3, defect 08."""
    from pruner.batch.run import file_digest
    fifo = make_fifo(tmp_path / "x.jsonl")
    assert finishes(lambda: file_digest(str(fifo)), 20, unblock=fifo) is None


# --- 13: a batch replay with an unknown model ran the whole batch for $0 ----------------------------------

def test_an_unknown_replay_model_is_refused_before_any_work(tmp_path, capsys):
    """Round 3, defect 13."""
    with pytest.raises(ConfigurationError, match="no prices for model 'nonexistent'"):
        BatchSettings(replay=("full",), replay_settings=ReplaySettings(model="nonexistent"))
    out = tmp_path / "out"
    start = time.monotonic()
    code, out_text, err = run_cli(["batch", NATIVE, "--out", out, "--replay", "full", "--model", "nonexistent"], capsys)
    assert code == 2 and "no prices for model 'nonexistent'" in err and err.count("\n") == 1
    assert out_text == "" and not out.exists()  # no folder, no cluster
    assert time.monotonic() - start < 30


# --- 16: the batch folder read its own manifest as an input ----------------------------------------------

def test_the_batch_folders_own_files_are_never_inputs(tmp_path, capsys):
    """Round 3, defect 16."""
    out = tmp_path / "out"
    run_batch([str(NATIVE)], out, workers=1)
    assert expand_inputs([str(out)], exclude=str(out)).files == ()
    assert expand_inputs([str(out / "*")], exclude=str(out)).files == ()
    code, text, _ = run_cli(["batch", out, "--out", out], capsys)
    assert code == 0 and "0 processed now" in text and "failed:" not in text
    sessions = pd.read_parquet(out / "sessions")
    assert list(sessions["source"]) == [str(NATIVE)] and sessions["error"].isna().all()


def test_a_file_of_the_batch_folder_named_directly_is_refused(tmp_path):
    """Round 3, defect 16."""
    out = tmp_path / "out"
    run_batch([str(NATIVE)], out, workers=1)
    with pytest.raises(ConfigurationError, match="belongs to the batch folder"):
        expand_inputs([str(out / "_pruner_batch.json")], exclude=str(out))


# --- 17: a pipe named directly was "no such file"; one in a folder vanished without a count -------------------

def test_a_pipe_named_directly_is_named_for_what_it_is(tmp_path):
    """Round 3, defect 17."""
    fifo = make_fifo(tmp_path / "p.jsonl")
    with pytest.raises(ConfigurationError, match=r"p\.jsonl: this is a named pipe \(FIFO\), not a file"):
        expand_inputs([str(fifo)])


def test_a_pipe_inside_an_input_folder_is_counted_as_passed_over(tmp_path, capsys):
    """Round 3, defect 17."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_bytes(NATIVE.read_bytes())
    make_fifo(tmp_path / "logs" / "b.jsonl")
    found = expand_inputs([str(tmp_path / "logs")])
    assert [Path(f.path).name for f in found.files] == ["a.jsonl"] and found.passed_over == 1
    assert expand_inputs([str(tmp_path / "logs" / "*.jsonl")]).passed_over == 1
    code, text, _ = run_cli(["batch", tmp_path / "logs", "--out", tmp_path / "out"], capsys)
    assert code == 0 and "not read: 1 files" in text and "pipes" in text


# --- 12 / 15: the Corpus page ---------------------------------------------------------------------------------------

def _six_runs(tmp_path: Path) -> Path:
    """Six runX/session.jsonl files with different content (different lengths: different reductions)."""
    from pruner.bench.workloads import generate
    from pruner.formats.export import dumps
    for n in range(6):
        (tmp_path / f"run{n}").mkdir()
        (tmp_path / f"run{n}" / "session.jsonl").write_text(
            dumps(generate("tool_agent", turns=4 + 6 * n, seed=n), to="native"), encoding="utf-8")
    out = tmp_path / "out"
    run_batch([str(tmp_path / f"run{n}") for n in range(6)], out, workers=1)
    return out


def test_sessions_of_files_with_one_name_stay_apart_in_gain_most_and_least(tmp_path):
    """Round 3, defect 12."""
    from dashboard import corpus_charts
    from dashboard.logic.corpus import extremes, read_corpus
    corpus = read_corpus(_six_runs(tmp_path))
    most, least = extremes(corpus.sessions)
    for rows in (most, least):
        figure = corpus_charts.extremes_figure(rows, title="t")
        labels = list(figure.data[0].y)
        assert sorted(labels) == [f"run{n}/session.jsonl" for n in range(6)]  # six bars, each its own
        # each bar's value is its own session's reduction, computed here from its tokens
        for label, value, (sid, before, after) in zip(labels, figure.data[0].x, figure.data[0].customdata):
            row = corpus.sessions[corpus.sessions["session_id"] == sid].iloc[0]
            assert row["source"].endswith(label)
            assert value == pytest.approx(100 * (1 - after / before), abs=0.01)


def test_labels_use_as_many_folders_as_tell_files_apart():
    """Round 3, defect 12."""
    from dashboard.logic.corpus import distinct_labels
    labels = distinct_labels(["/a/x/s.jsonl", "/b/x/s.jsonl", "/c/y/s.jsonl", "/c/other.json"])
    assert labels == {"/a/x/s.jsonl": "a/x/s.jsonl", "/b/x/s.jsonl": "b/x/s.jsonl", "/c/y/s.jsonl": "y/s.jsonl",
                      "/c/other.json": "other.json"}


def test_an_impossible_reduction_is_an_unreadable_row_and_the_rest_is_shown(tmp_path):
    """Round 3, defect 15."""
    import pyarrow.parquet as pq
    from dashboard import corpus_charts
    from dashboard.logic.corpus import extremes, read_corpus, totals
    out = _six_runs(tmp_path)
    honest = read_corpus(out).sessions
    import pyarrow as pa
    from pruner.batch import SESSIONS
    values = [float("inf"), -1e300, 1e300]  # forge three rows of the table, wherever they are
    for path in sorted((out / "sessions").glob("part-*.parquet")):
        table = pq.read_table(path).to_pandas()
        for i in table.index:
            if values:
                table.loc[i, "reduction"] = values.pop()
        pq.write_table(pa.Table.from_pandas(table, schema=SESSIONS, preserve_index=False), path)
    frame = read_corpus(out).sessions
    bad = frame["error"].notna()
    forged = 3
    assert not values and int(bad.sum()) == forged
    assert frame.loc[bad, "error"].str.startswith("unreadable row of the sessions table: reduction ").all()
    kept = frame[~bad]
    assert set(kept["session_id"]) == set(honest["session_id"]) - set(frame.loc[bad, "session_id"])
    assert totals(frame)["sessions"] == len(frame) - forged
    corpus_charts.reduction_histogram(frame)  # raised "Maximum allowed size exceeded"
    most, _ = extremes(frame)
    assert len(most) == len(frame) - forged and most["reduction_pct"].abs().max() <= 100


@pytest.mark.parametrize("body", [[], "x", {"pruner_batch": 1, "settings": [], "schema": [], "last_run": {}}])
def test_a_manifest_of_the_wrong_shape_is_named_not_a_crash(body, tmp_path):
    """Round 3, defect 15."""
    from dashboard.logic.corpus import read_corpus
    out = tmp_path / "out"
    run_batch([str(NATIVE)], out, workers=1)
    (out / "_pruner_batch.json").write_text(json.dumps(body))
    with pytest.raises(ConfigurationError, match=r"_pruner_batch\.json: .*it is not a batch manifest"):
        read_corpus(out)


def test_a_folder_that_cannot_hold_the_lock_is_one_line(tmp_path, capsys):
    """Round 3, defect 01."""
    if os.geteuid() == 0:
        out = Path("/proc/pruner-batch-out")  # not even root can make a folder there
    else:
        locked = tmp_path / "ro"
        locked.mkdir()
        locked.chmod(0o500)
        out = locked / "out"
    code, _, err = run_cli(["batch", NATIVE, "--out", out], capsys)
    assert code == 2 and err.count("\n") == 1 and "cannot lock the batch folder" in err
