"""A team's logs: ``pruner logs --homes SHARED`` (one home folder per person or machine) and ``--scheduler``
(the reading on a real Dask cluster: a ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1,
started and stopped here by process id, one of them killed in the middle of a run).

The shared folder is built from the shared real files (the tests skip without them), each person's home
laid out as the agents lay theirs out; the figures checked are summed from the raw files by
``tests/support/raw_bill.py``, not by pruner's readers.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.cli import main
from pruner.logs import read_session, run_logs
from pruner.logs.discover import AGENTS
from pruner.logs.homes import discover_homes
from pruner.logs.table import TABLE
from tests.support.paths import ROOT, TESTS
from tests.support.raw_bill import session_dollars
from tests.unit.batch.test_batch_cluster import DASK, RUN_TIMEOUT_S, Cluster, _stop

#: person -> (agent folder inside the person's HOME, real file under ../shared/data/real, name it gets there)
PEOPLE = {
    "alice": (
        (".claude/projects/-work-demo", "claude-code/task-patterns-998db3cd.jsonl", "998db3cd.jsonl"),
        (".codex/sessions/2026/05/11", "codex/codemie-rollout-2026-05-11.jsonl", "rollout-2026-05-11T11-26-55-a.jsonl"),
    ),
    "bob": (
        (".claude/projects/-work-codemie", "claude-code/codemie-session-3fe1b6bc.jsonl", "3fe1b6bc.jsonl"),
        (".claude/projects/-work-codemie/3fe1b6bc/subagents", "claude-code/codemie-subagent-a485154.jsonl",
         "agent-a485154.jsonl"),
        (".gemini/tmp/fb8e242a/chats", "gemini-cli/codemie-session-2025-12-01.json", "session-2025-12-01.json"),
    ),
    "carol-laptop": (
        (".pi/agent/sessions/--work-pi--", "pi/large-session.jsonl", "2025-11-20_large.jsonl"),
        (".claude/projects/-work-viewer", "claude-code/ccviewer-fe5e1c67.jsonl", "fe5e1c67.jsonl"),
        (".gemini/tmp/907f2064/chats", "gemini-cli/codemie-session-2026-01-16-file-ops.json",
         "session-2026-01-16.json"),
    ),
}
#: Small real Claude Code sessions copied (under new names) into every person's home for the killed-worker
#: test, so that many sessions wait while the worker is killed.
FILLERS = ("claude-code/ccviewer-5c0375b4.jsonl", "claude-code/dmux-a9185eb7.jsonl")
AGENT_OF = {".claude": "claude_code", ".codex": "codex", ".pi": "pi", ".gemini": "gemini_cli"}
SLOW = TESTS / "support" / "slow_reads.py"


def _shared(real_data: Path, root: Path, copies: int = 0) -> Path:
    for person, layout in PEOPLE.items():
        for folder, source, name in layout:
            (root / person / folder).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(real_data / source, root / person / folder / name)
        for n in range(copies):
            for k, source in enumerate(FILLERS):
                folder = root / person / ".claude" / "projects" / f"-work-copy{k}"
                folder.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(real_data / source, folder / f"copy-{n:03d}.jsonl")
    return root


def _expected(shared: Path) -> dict[str, tuple[str, float]]:
    """main file -> (person, dollars summed from the raw files), found by walking the folder here."""
    expected = {}
    for person in sorted(p.name for p in shared.iterdir() if p.is_dir() and not p.name.startswith(".")):
        home = shared / person
        for path in sorted(home.rglob("*.json*")):
            rel = path.relative_to(home).parts
            agent = AGENT_OF[rel[0]]
            if "subagents" in rel:
                continue
            subs = sorted((path.with_suffix("") / "subagents").glob("agent-*.jsonl")) if agent == "claude_code" else []
            expected[str(path)] = (person, session_dollars(agent, [path, *subs]))
    return expected


def _rows(out: Path) -> list[dict]:
    return pq.read_table(out / TABLE).to_pylist()


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "XDG_CACHE_HOME"):
        env.pop(var, None)
    return env


def _assert_billed_as_the_raw_files(rows: list[dict], shared: Path) -> None:
    expected = _expected(shared)
    assert sorted(r["source"] for r in rows) == sorted(expected)  # every session once
    assert not [r for r in rows if r["error"] or r["money_error"]]
    assert {r["source"]: r["person"] for r in rows} == {s: p for s, (p, _) in expected.items()}
    got = {r["source"]: r["billed"] for r in rows}
    assert got == pytest.approx({s: d for s, (_, d) in expected.items()}, abs=1e-6)
    assert sum(got.values()) == pytest.approx(sum(d for _, d in expected.values()), abs=1e-5)
    assert sum(got.values()) > 0


# -- --homes on this machine (no cluster) -----------------------------------------------------------------

def test_homes_label_each_session_with_its_person_and_bill_a_file_shared_by_two_once(real_data, tmp_path):
    shared = _shared(real_data, tmp_path / "shared")
    (shared / ".snapshot" / ".claude" / "projects" / "-x").mkdir(parents=True)  # hidden: not a person
    shutil.copyfile(real_data / FILLERS[0], shared / ".snapshot" / ".claude" / "projects" / "-x" / "s.jsonl")
    (shared / "README.txt").write_text("not a person\n")
    # dave's home holds a hard link to bob's session: one file, billed once (bob's, the first in name order)
    linked = shared / "dave" / ".claude" / "projects" / "-work-codemie"
    linked.mkdir(parents=True)
    bobs = shared / "bob" / ".claude" / "projects" / "-work-codemie" / "3fe1b6bc.jsonl"
    os.link(bobs, linked / "3fe1b6bc.jsonl")
    found = discover_homes(str(shared))
    assert sorted({p for p, _ in found}) == ["alice", "bob", "carol-laptop", "dave"]
    sessions = [s for _, loc in found for s in loc.sessions]
    assert not [s for p, loc in found for s in loc.sessions if s.person != p]
    assert [s.person for s in sessions if s.main.path.endswith("3fe1b6bc.jsonl")] == ["bob"]
    out = tmp_path / "out"
    summary = run_logs(sessions, str(out))
    rows = _rows(out)
    assert summary.read == len(rows) == len({r["session_key"] for r in rows})
    os.remove(linked / "3fe1b6bc.jsonl")  # the expected sums walk the folder: dave's copy is the same session
    _assert_billed_as_the_raw_files(rows, shared)


def test_a_plain_run_has_no_person_and_a_homes_run_relabels_without_reading(real_data, tmp_path):
    shared = _shared(real_data, tmp_path / "shared")
    alice = shared / "alice"
    out = tmp_path / "out"
    from pruner.logs import discover
    plain = [s for loc in discover({"HOME": str(alice)}) for s in loc.sessions]
    run_logs(plain, str(out), workers=1)
    assert {r["person"] for r in _rows(out)} == {""}
    team = [s for _, loc in discover_homes(str(shared)) for s in loc.sessions]
    second = run_logs(team, str(out))
    assert (second.read, second.unchanged) == (len(team) - len(plain), len(plain))
    people = {r["source"]: r["person"] for r in _rows(out)}
    assert people == {s.main.path: s.person for s in team}


def test_reading_a_session_is_pure_so_a_retried_task_gives_the_same_row(real_data, tmp_path):
    """Dask runs a dead worker's task again elsewhere: the second reading must equal the first and leave
    the files as they were (read_session writes nothing)."""
    shared = _shared(real_data, tmp_path / "shared")
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes()) for p in shared.rglob("*") if p.is_file()}
    for _, loc in discover_homes(str(shared)):
        for s in loc.sessions:
            assert read_session(s) == read_session(s), s.key
    after = {p: (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes()) for p in shared.rglob("*") if p.is_file()}
    assert after == before


@pytest.mark.parametrize("argv, message", [
    (["--homes", "{tmp}/nowhere"],
     "nowhere: does not exist; a team's folder holds one home folder per person or machine (choose it with --homes"),
    (["--homes", "{tmp}", "--claude-dir", "{tmp}"], "--claude-dir names one agent folder of one home"),
    (["--homes", "{tmp}", "--scheduler", "not an address"], "not a scheduler address"),
    (["--homes", "{tmp}", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "not allowed with argument"),
])
def test_cli_bad_team_arguments_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    argv = ["logs", "--out", str(tmp_path / "out"), *[a.replace("{tmp}", str(tmp_path)) for a in argv]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_unreachable_scheduler_is_one_line_and_exit_2(real_data, tmp_path, capsys, monkeypatch):
    import socket

    from pruner.logs import cluster
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 2.0)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again at once: nothing listens there
    shared = _shared(real_data, tmp_path / "shared")
    code = main(["logs", "--homes", str(shared), "--out", str(tmp_path / "out"), "--bill-only",
                 "--scheduler", f"tcp://127.0.0.1:{port}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    lines = [line for line in err if not line.startswith("read ")]  # the progress line before the connection
    assert len(lines) == 1 and f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in lines[0], err


def test_scheduler_without_the_batch_extra_names_it(tmp_path, capsys, monkeypatch):
    (tmp_path / "shared" / "alice").mkdir(parents=True)
    monkeypatch.setitem(sys.modules, "distributed", None)
    code = main(["logs", "--homes", str(tmp_path / "shared"), "--out", str(tmp_path / "out"),
                 "--scheduler", "tcp://127.0.0.1:1"])
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        "pruner logs --scheduler needs the batch extra: pip install 'pruner[batch]'"]
    assert not (tmp_path / "out").exists()


# -- --scheduler: a real Dask scheduler and two worker processes ------------------------------------------

class SlowCluster(Cluster):
    """The batch tests' cluster, its workers reading through ``tests/support/slow_reads.py``."""

    def start(self, workers: int) -> None:
        self._start("scheduler", [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                  "--no-dashboard"])
        for n in range(workers):
            # --no-nanny: the process started here is the worker itself, so killing it kills the worker
            self._start(f"worker{n}", [str(DASK), "worker", self.address, "--host", "127.0.0.1", "--nthreads", "1",
                                       "--no-nanny", "--no-dashboard", "--name", f"worker{n}", "--preload",
                                       str(SLOW)])
        self.wait_for_workers(workers)


@pytest.fixture
def cluster(tmp_path):
    if not DASK.exists():
        pytest.fail(f"the dask command is missing at {DASK}; pip install -e . installs it")
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    c = SlowCluster(logs)
    try:
        c.start(workers=2)
        yield c
    finally:
        c.stop()


def _logs(cluster: Cluster, shared: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pruner", "logs", "--homes", str(shared), "--out", str(out),
                             "--scheduler", cluster.address, "--json", *extra], cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_scheduler_run_makes_the_local_runs_table_row_for_row(cluster, real_data, tmp_path):
    shared = _shared(real_data, tmp_path / "shared")
    out = tmp_path / "out"
    proc = _logs(cluster, shared, out, "--strategies", "full,cache_aware")
    stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, stderr + cluster.log("worker0")
    assert f"dask: {cluster.address} with 2 worker(s)" in stderr
    assert json.loads(stdout)["read"] == sum(len([x for x in v if "subagents" not in x[0]]) for v in PEOPLE.values())
    local = tmp_path / "local"
    sessions = [s for _, loc in discover_homes(str(shared)) for s in loc.sessions]
    run_logs(sessions, str(local), strategies=("full", "cache_aware"), workers=1)
    on_cluster, here = _rows(out), _rows(local)
    assert [r["session_key"] for r in on_cluster] == [r["session_key"] for r in here]
    for a, b in zip(on_cluster, here):
        assert a == b, a["session_key"]  # no timing column: every cell equal
    _assert_billed_as_the_raw_files(on_cluster, shared)
    again = _logs(cluster, shared, out, "--strategies", "full,cache_aware")  # a rerun reads nothing, runs no task
    stdout, stderr = again.communicate(timeout=RUN_TIMEOUT_S)
    assert again.returncode == 0 and json.loads(stdout)["read"] == 0, stderr


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(cluster, real_data, tmp_path):
    shared = _shared(real_data, tmp_path / "shared", copies=6)
    out = tmp_path / "out"
    victim = cluster.procs["worker0"]
    proc = _logs(cluster, shared, out, "--bill-only")
    killed_while, waiting = None, 0
    try:
        with cluster.client() as client:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while proc.poll() is None and time.monotonic() < deadline:
                processing = client.processing()
                victim_addr = next((a for a, w in client.scheduler_info()["workers"].items()
                                    if w.get("name") == "worker0"), None)
                if victim_addr and processing.get(victim_addr):
                    killed_while = list(processing[victim_addr])
                    waiting = client.run_on_scheduler(lambda dask_scheduler: sum(
                        1 for t in dask_scheduler.tasks.values() if t.state not in ("memory", "released", "erred")))
                    os.kill(victim.pid, signal.SIGKILL)  # no goodbye: the scheduler must notice the lost worker
                    victim.wait()
                    break
                time.sleep(0.05)
        stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        _stop(proc)
    assert killed_while, "the run ended before the worker could be killed mid-task"
    assert waiting > 2, "tasks should still be waiting when the worker is killed"
    assert proc.returncode == 0, stderr + cluster.log("worker1")
    summary = json.loads(stdout)
    rows = _rows(out)
    assert summary["read"] == len(rows) == len({r["session_key"] for r in rows}) and summary["errors"] == 0
    _assert_billed_as_the_raw_files(rows, shared)
    print(f"\n[logs cluster] killed worker0 while it read {killed_while}; {len(rows)} sessions, each once")


def test_a_task_that_fails_for_good_is_an_error_row_the_next_run_reads_again(real_data, tmp_path, monkeypatch):
    """A task Dask gives up on (a worker killed more often than it allows, a reader that runs out of memory)
    must not drop its sessions: each becomes an error row, and the next run reads it again."""
    from distributed import LocalCluster

    from pruner.logs import run as logs_run
    from pruner.logs.cluster import DaskReader

    shared = _shared(real_data, tmp_path / "shared")
    sessions = [s for _, loc in discover_homes(str(shared)) for s in loc.sessions]
    doomed = sessions[0].key
    real = logs_run.read_session

    def failing(found, strategies=(), bound=False):
        if found.key == doomed:
            raise MemoryError("no room for this one")
        return real(found, strategies, bound)

    out = tmp_path / "out"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        monkeypatch.setattr(logs_run, "read_session", failing)  # in this process: the workers are threads here
        first = run_logs(sessions, str(out), reader=DaskReader(cluster.scheduler_address))
        rows = {r["session_key"]: r for r in _rows(out)}
        assert (first.read, first.errors) == (len(sessions), 1) and len(rows) == len(sessions)
        assert rows[doomed]["error"].endswith("not read on the Dask cluster (MemoryError: no room for this one); "
                                              "run the command again to read it")
        monkeypatch.setattr(logs_run, "read_session", real)
        second = run_logs(sessions, str(out), reader=DaskReader(cluster.scheduler_address))
    assert (second.read, second.retried, second.errors) == (1, 1, 0)
    _assert_billed_as_the_raw_files(_rows(out), shared)


def test_cli_list_names_each_person_and_their_agents_folders(real_data, tmp_path, capsys):
    shared = _shared(real_data, tmp_path / "shared")
    assert main(["logs", "--homes", str(shared), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["person", "agent", "sessions"]
    listed = {(line.split()[0], line.split()[1]): int(line.split()[2]) for line in lines[1:]}
    assert len(listed) == len(PEOPLE) * len(AGENTS)  # every agent of every person, found or not
    expected: dict[tuple[str, str], int] = {}
    for person, layout in PEOPLE.items():
        for folder, _, _ in layout:
            if "subagents" not in folder:
                key = (person, AGENT_OF[folder.split("/")[0]])
                expected[key] = expected.get(key, 0) + 1
    assert {k: n for k, n in listed.items() if n} == expected


_names = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x2FF, blacklist_characters="/"), min_size=1,
                 max_size=8)


@given(sessions=st.lists(st.tuples(_names, st.integers(0, 3), st.integers(0, 10**7)), max_size=300,
                         unique_by=lambda t: (t[0], t[1])),
       workers=st.integers(1, 16), strategies=st.sampled_from([(), ("full",), ("full", "cache_aware")]))
def test_the_tasks_hold_every_session_once_under_distinct_keys(sessions, workers, strategies):
    """The split into Dask tasks loses and duplicates nothing, whatever the sessions, sizes and workers."""
    from pruner.logs import FileState, LogSession
    from pruner.logs.cluster import tasks

    todo = tuple(LogSession("claude_code", "p", FileState(f"/shared/p{person}/{name}.jsonl", size, 1),
                            person=f"p{person}") for name, person, size in sessions)
    split = tasks(todo, workers, strategies, False, "token")
    held = [s for chunk in split.values() for s in chunk]
    assert sorted(s.key for s in held) == sorted(s.key for s in todo)
    assert len(held) == len(todo) and all(split.values())
    assert all(len(chunk) == 1 for chunk in split.values()) or not strategies
    assert all(len(chunk) <= 64 for chunk in split.values())


def test_report_by_person_sums_each_persons_raw_files(real_data, tmp_path, capsys):
    """``pruner logs report --by person`` on a ``--homes`` table: each person's billed dollars are the sum
    of their own raw files (computed here from the JSONL), and the groups add up to the whole."""
    shared = _shared(real_data, tmp_path / "shared")
    out = tmp_path / "out"
    run_logs([s for _, loc in discover_homes(str(shared)) for s in loc.sessions], str(out))
    capsys.readouterr()
    assert main(["logs", "report", "--out", str(out), "--by", "person", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    groups = report["groups"] if isinstance(report, dict) else report
    got = {g["group"]: g["billed"] for g in groups}
    want: dict[str, float] = {}
    for person, dollars in _expected(shared).values():
        want[person] = want.get(person, 0.0) + dollars
    assert got == pytest.approx(want, abs=1e-6)
    assert sorted(got) == sorted(PEOPLE)
