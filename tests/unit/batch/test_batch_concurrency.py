"""Two real ``pruner batch`` processes on one ``--out`` (issue 23, defect 1), each on its own Dask
LocalCluster: the second is refused while the first runs, naming it, and nothing is lost; a batch
killed with SIGKILL leaves a stale lock that the next run takes over, and the result holds every
session exactly once.

The inputs are generated sessions (about 0.7 s of pruning each) so that a run lasts long enough to be
caught in the middle. Every process started here is stopped here, by its process id.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from pruner.bench.workloads import generate
from pruner.formats.export import dumps
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

FILES = 16
TURNS = 150
WAIT_S = 180


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("inputs")
    for seed in range(FILES):
        (folder / f"session-{seed:02d}.jsonl").write_text(
            dumps(generate("tool_agent", turns=TURNS, seed=seed), to="native"), encoding="utf-8")
    return folder


def _batch(inputs: Path, out: Path, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pruner", "batch", str(inputs), "--out", str(out),
                             "--workers", "1"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, **popen)


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {WAIT_S} s for {what}")
        time.sleep(0.05)


def _kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc`` and then each process it had started (its Dask cluster), by process id."""
    import psutil
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    for child in children:
        try:
            os.kill(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    psutil.wait_procs(children, timeout=30)


def _messages_per_file(inputs: Path) -> dict[str, int]:
    """Messages in each native file, counted from the raw text: every line but the header is one."""
    return {str(p): len(p.read_text(encoding="utf-8").splitlines()) - 1 for p in sorted(inputs.glob("*.jsonl"))}


def _assert_every_session_once(out: Path, inputs: Path) -> None:
    sessions = pd.read_parquet(out / "sessions")
    decisions = pd.read_parquet(out / "decisions")
    expected = _messages_per_file(inputs)
    assert sorted(sessions["source"]) == sorted(expected)  # each file once: nothing lost, nothing twice
    assert sessions["error"].isna().all()
    assert {r.source: int(r.messages_before) for r in sessions.itertuples()} == expected
    per_session = decisions.groupby("session_id").size().to_dict()
    assert per_session == {r.session_id: expected[r.source] for r in sessions.itertuples()}
    assert not decisions.duplicated(["session_id", "position"]).any()
    committed = {p.name for p in (out / "sessions").glob("part-*.parquet")}
    assert {p.name for p in (out / "decisions").glob("part-*.parquet")} == committed
    assert not (out / "_pruner_batch.lock").exists()


def test_a_second_batch_on_a_running_folder_is_refused_and_nothing_is_lost(inputs, tmp_path):
    """Round 3, defect 01."""
    out = tmp_path / "out"
    first = _batch(inputs, out)
    try:
        _wait_for(lambda: (out / "_pruner_batch.lock").exists() or first.poll() is not None, "the first lock")
        second = _batch(inputs, out)
        _, second_err = second.communicate(timeout=WAIT_S)
        running_meanwhile = first.poll() is None
        first_out, first_err = first.communicate(timeout=WAIT_S)
    finally:
        if first.poll() is None:
            _kill_tree(first)
    assert running_meanwhile, "the first batch ended before the second was refused; the test proved nothing"
    assert second.returncode == 2, second_err
    assert f"another batch is running on this folder (process {first.pid} on " in second_err
    assert second_err.count("\n") == 1
    assert first.returncode == 0, first_err
    assert f"sessions: {FILES} processed, 0 failed" in first_out and "NOT WRITTEN" not in first_out
    _assert_every_session_once(out, inputs)
    again = _batch(inputs, out)
    again_out, again_err = again.communicate(timeout=WAIT_S)
    assert again.returncode == 0, again_err
    assert f"0 processed now, {FILES} skipped" in again_out


def test_a_killed_batchs_lock_is_taken_over_and_every_session_is_there_once(inputs, tmp_path):
    """Round 3, defect 01."""
    out = tmp_path / "out"
    killed = _batch(inputs, out)
    try:
        _wait_for(lambda: any((out / "sessions").glob("part-*.parquet")) or killed.poll() is not None,
                  "the first partition")
        assert killed.poll() is None, "the batch finished before it could be killed; the test proved nothing"
    finally:
        _kill_tree(killed)
    assert (out / "_pruner_batch.lock").exists()  # left behind: its process is gone
    done_before = len(pd.read_parquet(out / "sessions"))
    assert 0 < done_before < FILES
    rerun = _batch(inputs, out)
    rerun_out, rerun_err = rerun.communicate(timeout=WAIT_S)
    assert rerun.returncode == 0, rerun_err
    assert f"lock:     took over the folder from process {killed.pid} on " in rerun_out
    assert f"{FILES - done_before} processed now, {done_before} skipped" in rerun_out
    _assert_every_session_once(out, inputs)
