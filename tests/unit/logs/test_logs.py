"""``pruner logs``: a home folder laid out like a real machine's, built here from the shared real
files; every session is found (subagent files with their session), and reruns read only what changed."""

from __future__ import annotations

import json
import os
import re
import signal
import shutil
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pruner.errors import ConfigurationError
from pruner.logs import discover, run_logs
from pruner.logs import run as logs_run
from pruner.logs.table import TABLE, locked

#: (agent folder inside HOME, real file under ../shared/data/real, name it gets there)
LAYOUT = (
    (".claude/projects/-work-demo", "claude-code/task-patterns-998db3cd.jsonl", "998db3cd.jsonl"),
    (".claude/projects/-work-demo", "claude-code/cctrace-phase0-main.jsonl", "phase0.jsonl"),
    (".claude/projects/-work-viewer", "claude-code/ccviewer-fe5e1c67.jsonl", "fe5e1c67.jsonl"),
    (".claude/projects/-work-codemie", "claude-code/codemie-session-3fe1b6bc.jsonl", "3fe1b6bc.jsonl"),
    (".claude/projects/-work-codemie/3fe1b6bc/subagents", "claude-code/codemie-subagent-a485154.jsonl",
     "agent-a485154.jsonl"),
    (".codex/sessions/2026/05/11", "codex/codemie-rollout-2026-05-11.jsonl", "rollout-2026-05-11T11-26-55-a.jsonl"),
    (".pi/agent/sessions/--work-pi--", "pi/large-session.jsonl", "2025-11-20_large.jsonl"),
    (".gemini/tmp/fb8e242a/chats", "gemini-cli/codemie-session-2025-12-01.json", "session-2025-12-01.json"),
    (".gemini/tmp/907f2064/chats", "gemini-cli/codemie-session-2026-01-16-file-ops.json", "session-2026-01-16.json"),
)
SESSIONS = {"claude_code": 4, "codex": 1, "pi": 1, "gemini_cli": 2}  # the subagent file is not a session


@pytest.fixture
def home(real_data, tmp_path) -> Path:
    root = tmp_path / "home"
    for folder, source, name in LAYOUT:
        (root / folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real_data / source, root / folder / name)
    return root


def _env(home: Path, **extra) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def _found(home: Path, **kw):
    return [s for loc in discover(_env(home), **kw) for s in loc.sessions]


def test_every_session_is_found_with_its_subagent_file_and_project(home):
    locations = {loc.agent: loc for loc in discover(_env(home))}
    # every other registered agent's folder is absent from this home: none of its sessions
    assert {a: len(loc.sessions) for a, loc in locations.items() if loc.sessions or a in SESSIONS} == SESSIONS
    claude = {os.path.basename(s.main.path): s for s in locations["claude_code"].sessions}
    assert [os.path.basename(f.path) for f in claude["3fe1b6bc.jsonl"].subagents] == ["agent-a485154.jsonl"]
    assert claude["998db3cd.jsonl"].project == "-work-demo" and not claude["998db3cd.jsonl"].subagents
    assert locations["claude_code"].files == 5  # four sessions, one subagent file
    codex = locations["codex"].sessions[0]
    first = json.loads(Path(codex.main.path).read_text(encoding="utf-8").splitlines()[0])
    assert codex.project == first["payload"]["cwd"]
    assert {s.project for s in locations["gemini_cli"].sessions} == {"fb8e242a", "907f2064"}


def test_the_agents_own_variables_and_our_options_move_the_folders(home, tmp_path):
    moved = tmp_path / "elsewhere"
    shutil.copytree(home / ".claude", moved / "claude")
    shutil.copytree(home / ".codex", moved / "codex")
    shutil.copytree(home / ".pi" / "agent", moved / "pi")
    shutil.copytree(home / ".gemini", moved / "gem" / ".gemini")
    empty = tmp_path / "empty-home"
    empty.mkdir()
    env = {"HOME": str(empty), "CLAUDE_CONFIG_DIR": str(moved / "claude"), "CODEX_HOME": str(moved / "codex"),
           "PI_CODING_AGENT_DIR": str(moved / "pi"), "GEMINI_CLI_HOME": str(moved / "gem")}
    by_agent = {loc.agent: (len(loc.sessions), loc.how) for loc in discover(env) if loc.sessions}
    assert by_agent == {"claude_code": (4, "$CLAUDE_CONFIG_DIR"), "codex": (1, "$CODEX_HOME"),
                        "pi": (1, "$PI_CODING_AGENT_DIR"), "gemini_cli": (2, "$GEMINI_CLI_HOME")}
    option = discover({"HOME": str(empty)}, overrides={"pi": str(home / ".pi" / "agent" / "sessions")})
    assert [(loc.agent, len(loc.sessions)) for loc in option if loc.sessions] == [("pi", 1)]


def test_list_days_are_the_days_the_sessions_record_not_their_files_times(home, capsys, monkeypatch):
    """Issue 41: `pruner logs --list` dated a copied or restored folder by its files' times (the copy day);
    its days are the ones the sessions record, read here from the raw text of each agent's files."""
    from pruner.cli import main

    now = 2_000_000_000  # 2033-05-18: a copy made then
    for s in _found(home):
        for f in s.files:
            os.utime(f.path, (now, now))
    for key, value in _env(home).items():
        monkeypatch.setenv(key, value)
    assert main(["logs", "--list", "--agent", "codex", "--agent", "gemini_cli"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    for agent in ("codex", "gemini_cli"):
        # each file's first and last recorded day, from its raw text
        stamps = [re.findall(r'"(\d{4}-\d{2}-\d{2})T\d', Path(f.path).read_text(errors="replace"))
                  for s in _found(home, agents=(agent,)) for f in s.files]
        first, last = min(x[0] for x in stamps if x), max(x[-1] for x in stamps if x)
        assert f"{first} .. {last}" in rows[agent], rows[agent]
        assert "2033-05-18" not in rows[agent]


def test_project_and_day_filters(home):
    assert {s.project for s in _found(home, project="-work-demo")} == {"-work-demo"}
    old = 1_600_000_000  # 2020-09-13
    for s in _found(home):
        for f in s.files:
            os.utime(f.path, (old, old))
    # --since/--until read the days a session records, not its files' times: old file times change nothing
    # (every fixture session records its dates, the latest of them read here from the raw text)
    latest = max(re.findall(r'"(\d{4}-\d{2}-\d{2})T', "".join(
        Path(f.path).read_text(errors="replace") for s in _found(home) for f in s.files)))
    assert len(_found(home, since="2021-01-01")) == sum(SESSIONS.values())
    assert _found(home, since=(date.fromisoformat(latest) + timedelta(days=1)).isoformat()) == []
    assert len(_found(home, since="2020-09-13", until="2030-01-01")) == sum(SESSIONS.values())
    # --until looks at the day a session starts: the Gemini session of 2026-01-16 started after 2026-01-01
    names = {os.path.basename(s.main.path) for s in _found(home, until="2026-01-01", agents=("gemini_cli",))}
    assert names == {"session-2025-12-01.json"}


def _rows(out: Path) -> list[dict]:
    return pq.read_table(out / TABLE).to_pylist()


def test_rerun_reads_nothing_touch_rereads_one_grown_is_replaced_removed_is_marked(home, tmp_path, monkeypatch):
    out = tmp_path / "out"
    first = run_logs(_found(home), str(out))
    assert (first.read, first.new) == (sum(SESSIONS.values()), sum(SESSIONS.values()))
    assert sorted(r["agent"] for r in _rows(out)) == sorted(a for a, n in SESSIONS.items() for _ in range(n))

    opened: list[str] = []
    real_digest, real_read = logs_run.digest_file, logs_run.read_session
    monkeypatch.setattr(logs_run, "digest_file", lambda p: opened.append(p) or real_digest(p))
    monkeypatch.setattr(logs_run, "read_session", lambda s, *a: opened.append(s.main.path) or real_read(s, *a))

    again = run_logs(_found(home), str(out))
    assert (again.read, again.unchanged, opened) == (0, sum(SESSIONS.values()), [])

    pi = home / ".pi/agent/sessions/--work-pi--/2025-11-20_large.jsonl"
    os.utime(pi, None)
    touched = run_logs(_found(home), str(out))
    assert (touched.read, touched.touched, opened) == (0, 1, [str(pi)])  # its digest, nothing else

    opened.clear()
    gemini = home / ".gemini/tmp/fb8e242a/chats/session-2025-12-01.json"
    doc = json.loads(gemini.read_text(encoding="utf-8"))
    doc["messages"] += [{"id": "late-u", "timestamp": "2025-12-01T21:55:00.000Z", "type": "user", "content": "more"},
                        {"id": "late-g", "timestamp": "2025-12-01T21:55:04.000Z", "type": "gemini", "content": "ok",
                         "model": doc["messages"][1]["model"],
                         "tokens": {"input": 19000, "output": 5, "cached": 18000, "thoughts": 0, "tool": 0}}]
    gemini.write_text(json.dumps(doc), encoding="utf-8")
    grown = run_logs(_found(home), str(out))
    assert (grown.read, grown.changed) == (1, 1)
    assert set(opened) == {str(gemini)}
    rows = [r for r in _rows(out) if r["source"] == str(gemini)]
    assert len(rows) == 1 and rows[0]["requests_main"] == 1 + sum(m["type"] == "gemini" for m in doc["messages"][:-2])
    assert rows[0]["end"] == "2025-12-01T21:55:04Z"

    (home / ".claude/projects/-work-demo/phase0.jsonl").unlink()
    gone = run_logs(_found(home), str(out))
    assert gone.removed == 1 and gone.sessions == sum(SESSIONS.values())
    marked = [r for r in _rows(out) if r["removed"]]
    assert [os.path.basename(r["source"]) for r in marked] == ["phase0.jsonl"]


def test_a_second_run_on_the_same_folder_is_refused(home, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with locked(str(out)):
        busy = f"another batch is running on this folder \\(process {os.getpid()}"
        with pytest.raises(ConfigurationError, match=busy):
            run_logs(_found(home), str(out))


@pytest.mark.slow
def test_killed_run_resumes_without_losing_or_duplicating_a_session(home, tmp_path):
    """SIGKILL after the first commit: the rows committed stay, the rerun reads only the others."""
    out = tmp_path / "out"
    script = ("import os, sys, signal\n"
              "from pruner.logs import discover, run_logs\n"
              "from pruner.logs import run as r\n"
              "r.COMMIT_SECONDS = 0.0\n"  # commit after every session
              "seen = []\n"
              "def progress(done, todo, *rest):\n"
              "    if done == 3: os.kill(os.getpid(), signal.SIGKILL)\n"
              f"found = [s for loc in discover({{'HOME': {str(home)!r}}}) for s in loc.sessions]\n"
              f"run_logs(found, {str(out)!r}, progress=progress)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr
    kept = _rows(out)
    assert len(kept) == 3
    rest = run_logs(_found(home), str(out))
    assert (rest.read, rest.unchanged) == (sum(SESSIONS.values()) - 3, 3)
    keys = [r["session_key"] for r in _rows(out)]
    assert len(keys) == len(set(keys)) == sum(SESSIONS.values())


@pytest.mark.slow
def test_cli_lists_what_it_found_and_a_rerun_reads_nothing(home, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "HOME": str(home)}
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "XDG_CACHE_HOME"):
        env.pop(var, None)
    listed = subprocess.run([sys.executable, "-m", "pruner", "logs", "--list"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    lines = {line.split()[0]: line.split() for line in listed.stdout.splitlines()[1:]}
    assert {a: int(lines[a][1]) for a in SESSIONS} == SESSIONS
    assert lines["claude_code"][2] == "5" and str(home / ".claude" / "projects") in listed.stdout
    first = subprocess.run([sys.executable, "-m", "pruner", "logs", "--out", str(out), "--json"], env=env,
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["read"] == sum(SESSIONS.values())
    assert "MB/s" in first.stderr
    second = subprocess.run([sys.executable, "-m", "pruner", "logs", "--out", str(out), "--json"], env=env,
                            capture_output=True, text=True, timeout=600)
    assert json.loads(second.stdout)["read"] == 0


@pytest.mark.slow
def test_done_when_the_billed_total_is_the_sum_of_every_files_own_bill_subagents_included(home, tmp_path):
    """Done when (issue 22): HOME laid out like a real machine's; the command finds every session and its
    billed total equals each session's raw-file sum (tests/support/raw_bill.py), subagent file included."""
    from tests.support.raw_bill import session_dollars

    out = tmp_path / "out"
    env = {**os.environ, "HOME": str(home)}
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "XDG_CACHE_HOME"):
        env.pop(var, None)
    done = subprocess.run([sys.executable, "-m", "pruner", "logs", "--bill-only", "--out", str(out), "--json"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = _rows(out)
    assert len(rows) == sum(SESSIONS.values()) and not [r for r in rows if r["error"] or r["money_error"]]
    expected = {}
    for folder, _, name in LAYOUT:
        path = home / folder / name
        if path.parent.name == "subagents":
            continue
        agents = {".claude": "claude_code", ".codex": "codex", ".pi": "pi", ".gemini": "gemini_cli"}
        agent = agents[folder.split("/")[0]]
        subs = sorted((path.with_suffix("") / "subagents").glob("agent-*.jsonl")) if agent == "claude_code" else []
        expected[str(path)] = session_dollars(agent, [path, *subs])
    got = {r["source"]: r["billed"] for r in rows}
    assert got == pytest.approx(expected, abs=1e-6)
    assert sum(got.values()) == pytest.approx(sum(expected.values()), abs=1e-5)
    with_sub = next(r for r in rows if r["source"].endswith("3fe1b6bc.jsonl"))
    assert with_sub["requests_subagent"] > 0 and with_sub["subagent_files"] == 1
    assert expected[with_sub["source"]] > session_dollars("claude_code", [Path(with_sub["source"])])


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its exit status is left to collect


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc (Linux)")
def test_a_killed_runs_workers_do_not_outlive_it(home, tmp_path):
    """A run's worker processes inherited its SIGTERM handler and outlived its SIGKILL, reading on with no one
    to hand their rows to (they had to be killed by process id). Now each dies with its parent.

    Regression."""
    out, pids = tmp_path / "out", tmp_path / "pids"
    script = ("import os, signal, multiprocessing\n"
              "from pruner.logs import discover, run_logs\n"
              "def progress(done, todo, *rest):\n"
              "    if done == 1:\n"
              "        workers = [p.pid for p in multiprocessing.active_children()]\n"
              f"        open({str(pids)!r}, 'w').write(' '.join(map(str, workers)))\n"
              "        os.kill(os.getpid(), signal.SIGKILL)\n"
              f"found = [s for loc in discover({{'HOME': {str(home)!r}}}) for s in loc.sessions]\n"
              f"run_logs(found, {str(out)!r}, workers=2, progress=progress)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr
    workers = [int(p) for p in pids.read_text().split()]
    assert len(workers) == 2
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in workers if _alive(p)]
    for p in left:  # leave nothing running after the test, whatever it found
        os.kill(p, signal.SIGKILL)
    assert left == []
