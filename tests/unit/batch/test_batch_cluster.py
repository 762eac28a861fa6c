"""pruner batch against a real Dask cluster on this machine: a `dask scheduler` and two `dask worker`
processes on 127.0.0.1 (separate OS processes, real TCP), and a worker killed in the middle of a run.

The fixture starts each process itself and stops each one by its process id.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import REAL_DATA, ROOT, SAMPLES
from tests.support.batch import batch_results, read_tables, serial_results

pytestmark = pytest.mark.slow

DASK = Path(sys.executable).with_name("dask")
START_TIMEOUT_S = 120
RUN_TIMEOUT_S = 400


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


class Cluster:
    """A scheduler and named workers, each an OS process this object started."""

    def __init__(self, logs: Path):
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.logs = logs
        self.procs: dict[str, subprocess.Popen] = {}

    def _start(self, name: str, argv: list[str]) -> None:
        log = open(self.logs / f"{name}.log", "wb")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            cwd=self.logs)
        log.close()

    def start(self, workers: int) -> None:
        self._start("scheduler", [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                  "--no-dashboard"])
        for n in range(workers):
            # --no-nanny: the process started here is the worker itself, so killing it kills the worker
            self._start(f"worker{n}", [str(DASK), "worker", self.address, "--host", "127.0.0.1", "--nthreads", "1",
                                       "--no-nanny", "--no-dashboard", "--name", f"worker{n}"])
        self.wait_for_workers(workers)

    def client(self):
        from distributed import Client
        return Client(self.address, timeout="30s")

    def wait_for_workers(self, n: int) -> None:
        with self.client() as client:
            client.wait_for_workers(n, timeout=START_TIMEOUT_S)

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        for name in reversed(list(self.procs)):  # workers first, the scheduler last
            _stop(self.procs[name])


@pytest.fixture
def cluster(tmp_path):
    if not DASK.exists():
        pytest.fail(f"the dask command is missing at {DASK}; pip install -e . installs it")
    logs = tmp_path / "logs"
    logs.mkdir()
    c = Cluster(logs)
    try:
        c.start(workers=2)
        yield c
    finally:
        c.stop()


def _batch(cluster: Cluster, inputs, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pruner", "batch", *map(str, inputs), "--out", str(out),
                             "--scheduler", cluster.address], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _corpus(tmp_path: Path, copies: int) -> Path:
    """The samples plus ``copies`` copies of the tau-bench file (or of a long generated session without it)."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLES, corpus / "samples")
    tau = REAL_DATA / "tau-bench" / "gpt-4o-airline.json"
    for n in range(copies):
        if tau.exists():
            shutil.copy(tau, corpus / f"tau-{n:02d}.json")
        else:
            from pruner import save_session
            from pruner.bench.workloads import generate
            save_session(generate("tool_agent", turns=400, seed=n), corpus / f"agent-{n:02d}.jsonl")
    return corpus


def _assert_equals_serial(out: Path, inputs) -> None:
    expected = serial_results(inputs, exclude=out)
    found = batch_results(out)  # raises when a session appears twice
    assert found.keys() == expected.keys()
    for key, want in expected.items():
        assert found[key] == (want if want["error"] is None else {"error": want["error"]}), key


def test_batch_on_a_real_scheduler_and_two_worker_processes(cluster, tmp_path, real_data):
    inputs = [SAMPLES, real_data]
    out = tmp_path / "out"
    proc = _batch(cluster, inputs, out)
    stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, stderr + cluster.log("worker0")
    assert f"{cluster.address} with 2 worker(s)" in stderr
    assert f"cluster:  {cluster.address}, 2 worker(s)" in stdout
    _assert_equals_serial(out, inputs)
    with cluster.client() as client:  # both workers took part
        assert len(client.scheduler_info()["workers"]) == 2


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(cluster, tmp_path):
    corpus = _corpus(tmp_path, copies=8)
    out = tmp_path / "out"
    victim = cluster.procs["worker0"]
    proc = _batch(cluster, [corpus], out)
    killed_while = None
    try:
        with cluster.client() as client:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while proc.poll() is None and time.monotonic() < deadline:
                processing = client.processing()
                victim_addr = next((a for a, w in client.scheduler_info()["workers"].items()
                                    if w.get("name") == "worker0"), None)
                written = len(list((out / "sessions").glob("part-*.parquet"))) if (out / "sessions").is_dir() else 0
                if victim_addr and processing.get(victim_addr) and written >= 1:
                    killed_while = list(processing[victim_addr])
                    os.kill(victim.pid, signal.SIGKILL)  # no goodbye: the scheduler must notice the lost worker
                    victim.wait()
                    break
                time.sleep(0.05)
        stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        _stop(proc)
    assert killed_while, "the run ended before the worker could be killed mid-task"
    assert proc.returncode == 0, stderr + cluster.log("worker1")
    _assert_equals_serial(out, [corpus])
    sessions, decisions = read_tables(out)
    files = {str(p) for p in corpus.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".traj")}
    assert set(sessions["source"]) == files
    assert not decisions.duplicated(["session_id", "position"]).any()
    print(f"\n[cluster] killed worker0 while it ran {killed_while}; {len(sessions)} sessions, each once")
