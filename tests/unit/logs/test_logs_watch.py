"""``pruner logs --watch`` (issue 32, Live): a real subprocess on a temporary HOME picks up a new session and a
grown one, a half-written last line is read when it is complete, and Ctrl-C leaves the table consistent
(exit 130, one line). In-process: the cycles yield only what changed, an unreadable file is not read every
cycle, a busy folder skips a cycle, and the session being written now is the one modified last.

The fixture sessions are the shipped samples (``sample_sessions/``), laid out as the agents lay them out;
every dollar figure checked is summed from the raw files by ``tests/support/raw_bill.py``.
"""

from __future__ import annotations

import json
import os
import random
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

from pruner.logs import discover, run_logs
from pruner.logs.live import live_row, live_session
from pruner.logs.run import plan
from pruner.logs.table import TABLE, load_rows, locked
from pruner.logs.watch import Busy, Cycle, cycles
from tests.support.paths import SAMPLES
from tests.support.raw_bill import session_dollars

CLAUDE = SAMPLES / "claude_code.jsonl"
AGENT_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "XDG_CACHE_HOME")


#: The watch started as from a terminal: SIGINT at its default and not blocked, whatever the test process
#: holds. An ignored signal passes through fork and exec, and a non-interactive shell starts a background
#: job with SIGINT ignored (POSIX): a suite launched as ``.ci/run &`` gave the watch SIGINT ignored, and it
#: slept through Ctrl-C in ``cycles`` (twice on fresh clones; reproduced by hand: ``trap '' INT`` before
#: ``pruner logs --watch``, /proc's SigIgn 0x6, still running after kill -INT, stopped by SIGTERM). A
#: watch that keeps an inherited "ignore" is right for a background job; the test is of a terminal's.
#: The wrapper execs in place (same pid), so the signal the test sends is the watch's.
AS_FROM_A_TERMINAL = [sys.executable, "-c", "import os, signal, sys; "
                      "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
                      "signal.signal(signal.SIGINT, signal.SIG_DFL); "
                      "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"]


def _parent_sigint() -> str:
    """How this test process holds SIGINT (its handler, and whether blocked): said in a failure."""
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    return f"the test process's SIGINT handler {signal.getsignal(signal.SIGINT)!r}, blocked {blocked}"


def _stopped(proc: subprocess.Popen, stderr: Path) -> int:
    """The watch's exit status once Ctrl-C reached it. A watch still running 120 s later (it happened once,
    under a CI run at load 10, and never alone) is aborted, and Python's fault handler (``-X faulthandler``)
    writes where each of its threads stood into ``stderr``: the failure says where it hung."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        proc.wait(timeout=60)
        pytest.fail(f"the watch did not stop within 120 s of Ctrl-C ({_parent_sigint()}); where its threads stood:\n"
                    + stderr.read_text(encoding="utf-8", errors="replace")[-6000:])


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _raw(agent: str, text: str, tmp: Path) -> float:
    """The raw bill of ``text`` as a file of its own (its complete lines only: a half-written one is not a request)."""
    copy = tmp / f"raw-{agent}-{len(text)}.jsonl"
    copy.write_text("".join(line for line in text.splitlines(keepends=True) if line.endswith("\n")), encoding="utf-8")
    return session_dollars(agent, [copy])


def _rows(out: Path) -> dict[str, dict]:
    return {r["source"]: r for r in pq.read_table(out / TABLE).to_pylist()}


def _wait(what, timeout: float = 120.0):
    """Poll until ``what()`` is true (a generous bound: speed is the benchmarks' business, not this test's)."""
    end = time.monotonic() + timeout
    while True:
        try:
            found = what()
        except (FileNotFoundError, OSError, ValueError):  # the table not written yet
            found = None
        if found:
            return found
        assert time.monotonic() < end, f"not seen within {timeout:g} s"
        time.sleep(0.1)


@pytest.fixture
def home(tmp_path) -> Path:
    root = tmp_path / "home"
    (root / ".claude/projects/-work-demo").mkdir(parents=True)
    return root


@pytest.mark.slow
def test_watch_picks_up_a_new_and_a_grown_session_and_ctrl_c_keeps_the_table(home, tmp_path):
    lines = _lines(CLAUDE)
    grown = home / ".claude/projects/-work-demo/live.jsonl"
    grown.write_text("".join(lines[:8]), encoding="utf-8")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in AGENT_VARS} | {"HOME": str(home)}
    stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with stdout.open("w") as so, stderr.open("w") as se:
        proc = subprocess.Popen([*AS_FROM_A_TERMINAL, "-X", "faulthandler", "-m", "pruner", "logs", "--out", str(out),
                                 "--watch", "--interval", "0.5", "--strategies", "as_recorded,full,cache_aware"],
                                env=env, stdout=so, stderr=se, cwd=tmp_path)
    try:
        _wait(lambda: str(grown) in _rows(out))

        # grown: four more lines and half of the next (a writer caught mid-line); new: a session of another project
        half = lines[12][: len(lines[12]) // 2]
        with grown.open("a", encoding="utf-8") as fh:
            fh.write("".join(lines[8:12]) + half)
        new = home / ".claude/projects/-work-api/new.jsonl"
        new.parent.mkdir(parents=True)
        shutil.copyfile(CLAUDE, new)
        size = grown.stat().st_size
        rows = _wait(lambda: (r := _rows(out)).get(str(grown), {}).get("bytes") == size and str(new) in r and r)
        part = rows[str(grown)]
        assert part["error"] is None and part["damaged_lines"] == 1  # left out of the bill, not an error
        assert part["billed"] == pytest.approx(_raw("claude_code", grown.read_text("utf-8"), tmp_path), abs=1e-9)
        assert rows[str(new)]["billed"] == pytest.approx(session_dollars("claude_code", [new]), abs=1e-9)

        with grown.open("a", encoding="utf-8") as fh:  # the line completed, and the rest of the session
            fh.write(lines[12][len(half):] + "".join(lines[13:]))
        size = grown.stat().st_size
        rows = _wait(lambda: (r := _rows(out)).get(str(grown), {}).get("bytes") == size and r)
        whole = rows[str(grown)]
        assert whole["error"] is None and whole["damaged_lines"] == 0
        assert whole["billed"] == pytest.approx(session_dollars("claude_code", [grown]), abs=1e-9)
        _wait(lambda: "live.jsonl" in stdout.read_text(encoding="utf-8").splitlines()[-1])
        before = stderr.read_text(encoding="utf-8")
    finally:
        code = _stopped(proc, stderr)
    said = stderr.read_text(encoding="utf-8")
    assert code == 130, said
    added = said[len(before):].splitlines()
    assert len(added) == 1 and "stopped" in added[0] and str(out) in added[0], said
    assert "Traceback" not in said
    # the table after the stop: readable, one row per session, its bill the raw files' own sum
    table = pq.read_table(out / TABLE).to_pylist()
    assert sorted(r["source"] for r in table) == sorted([str(grown), str(new)])
    expected = session_dollars("claude_code", [grown]) + session_dollars("claude_code", [new])
    assert sum(r["billed"] for r in table) == pytest.approx(expected, abs=1e-9)
    last = stdout.read_text(encoding="utf-8").splitlines()[-1]
    from pruner.money import money
    assert last.startswith("+") and money(session_dollars("claude_code", [grown])) in last, last


def _found(home: Path):
    return [s for loc in discover({"HOME": str(home)}) for s in loc.sessions]


class _Script:
    """``sleep`` for ``cycles``: each call runs the next step (a change to the files), then Ctrl-C."""

    def __init__(self, *steps):
        self.steps = list(steps)

    def __call__(self, seconds: float) -> None:
        assert seconds == 0.25
        if not self.steps:
            raise KeyboardInterrupt
        self.steps.pop(0)()


def test_cycles_yield_only_what_changed_and_the_session_written_last(home, tmp_path):
    lines = _lines(CLAUDE)
    first = home / ".claude/projects/-work-demo/a.jsonl"
    first.write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "out"
    run_logs(_found(home), str(out))
    second = home / ".claude/projects/-work-demo/b.jsonl"

    def add():
        second.write_text("".join(lines[:6]), encoding="utf-8")
        os.utime(second, ns=(first.stat().st_mtime_ns + 10**9,) * 2)  # written after a.jsonl, whatever the clock

    def touch():
        os.utime(first, ns=(first.stat().st_mtime_ns - 10**9,) * 2)  # same content: no figure changes

    def grow():
        with second.open("a", encoding="utf-8") as fh:
            fh.write("".join(lines[6:]))
        os.utime(second, ns=(first.stat().st_mtime_ns + 2 * 10**9,) * 2)

    seen = []
    with pytest.raises(KeyboardInterrupt):
        for cycle in cycles(lambda: _found(home), str(out), interval=0.25, sleep=_Script(add, lambda: None, touch,
                                                                                         grow)):
            seen.append(cycle)
    assert [type(c) for c in seen] == [Cycle, Cycle]  # the unchanged and the touched cycles said nothing
    assert [(c.summary.new, c.grown) for c in seen] == [(1, 0), (0, 1)]
    assert all(c.live is not None and c.live.source == str(second) for c in seen)
    live = seen[-1].live
    assert live is not None and live.billed == pytest.approx(session_dollars("claude_code", [second]), abs=1e-9)
    usage = [json.loads(line)["message"]["usage"] for line in lines if '"usage"' in line]
    read = sum(u.get("cache_read_input_tokens") or 0 for u in usage)
    total = read + sum((u.get("input_tokens") or 0) + (u.get("cache_creation_input_tokens") or 0) for u in usage)
    assert live.cache_read_share == pytest.approx(read / total)
    assert "b.jsonl" in seen[-1].text() and f"{100 * read / total:.1f} %" in seen[-1].text()


def test_an_unreadable_file_is_read_again_only_when_it_changes(home, tmp_path):
    """The watch's later cycles do not retry an error row every few seconds; a plain run still does."""
    chats = home / ".gemini/tmp/p1/chats"
    chats.mkdir(parents=True)
    broken = chats / "session-1.json"
    text = (SAMPLES / "gemini_cli.json").read_text(encoding="utf-8")
    broken.write_text(text[: len(text) // 2], encoding="utf-8")  # Gemini CLI caught mid-rewrite
    out = tmp_path / "out"
    run_logs(_found(home), str(out))
    held = load_rows(str(out))
    assert held[f"gemini_cli:{broken}"]["error"]
    assert len(plan(_found(home), held).todo) == 1  # a plain run retries it
    assert plan(_found(home), held, retry_errors=False).todo == ()
    broken.write_text(text, encoding="utf-8")
    again = plan(_found(home), held, retry_errors=False)
    assert [s.main.path for s in again.todo] == [str(broken)]


def test_a_cycle_finding_the_folder_held_by_another_run_is_skipped(home, tmp_path):
    (home / ".claude/projects/-work-demo/a.jsonl").write_text(CLAUDE.read_text("utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    seen = []
    with locked(str(out)), pytest.raises(KeyboardInterrupt):
        for cycle in cycles(lambda: _found(home), str(out), interval=0.25, sleep=_Script(lambda: None)):
            seen.append(cycle)
    assert len(seen) == 1 and isinstance(seen[0], Busy) and str(os.getpid()) in seen[0].reason
    assert not (out / TABLE).exists()


def _row(key: str, mtime: int, **cells) -> dict:
    return {"session_key": key, "source": f"/logs/{key}.jsonl", "agent": "claude_code", "error": None,
            "removed": False, "files": json.dumps([[f"/logs/{key}.jsonl", 10, mtime, "d"]]), **cells}


@given(st.lists(st.tuples(st.integers(0, 50), st.booleans(), st.booleans()), min_size=1, max_size=12),
       st.randoms(use_true_random=False))
def test_the_live_session_is_the_present_readable_row_modified_last_in_any_order(specs, rnd: random.Random):
    rows = [_row(f"s{i}", mtime, error="boom" if failed else None, removed=gone)
            for i, (mtime, failed, gone) in enumerate(specs)]
    ok = [(mtime, f"s{i}") for i, (mtime, failed, gone) in enumerate(specs) if not failed and not gone]
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    picked = live_row(shuffled)
    assert (picked["session_key"] if picked else None) == (max(ok)[1] if ok else None)


def test_the_live_figures_name_cache_aware_and_the_best_strategy_keeping_the_recall_bar():
    row = _row("s", 5, billed=1.0, modelled=0.9, input_tokens=100, cache_read_tokens=700, cache_write_tokens=200,
               requests_main=3, requests_subagent=1, prices="pruner prices, retrieved 2026-11-30",
               cache_aware_dollars=0.8, cache_aware_feasible=True, cache_aware_recall=1.0,
               truncate_dollars=0.3, truncate_feasible=True, truncate_recall=0.5,  # cheaper, but loses half
               full_dollars=0.95, full_feasible=True, full_recall=1.0,
               compact_dollars=0.1, compact_feasible=False, compact_recall=None)  # over the window
    live = live_session([row], ["full", "truncate", "cache_aware", "compact"])
    assert live is not None and live.requests == 4 and live.cache_read_share == pytest.approx(0.7)
    assert live.watched is not None and live.watched.dollars == 0.8
    assert live.best is not None and (live.best.strategy, live.best.dollars) == ("cache_aware", 0.8)
    assert "cache_aware $0.8000" in live.text() and "pruner prices, retrieved 2026-11-30" in live.text()
    bill_only = live_session([_row("s", 5, billed=1.0)], ["cache_aware"])
    assert bill_only is not None and bill_only.cache_read_share is None and "no strategy replayed" in bill_only.text()


@pytest.mark.parametrize("argv, says", [
    (["--watch", "--interval", "0"], "not a positive number of seconds"),
    (["--watch", "--interval", "-1"], "not a positive number of seconds"),
    (["--interval", "2"], "add --watch"),
    (["--watch", "--list"], "give one of them"),
    (["--watch", "--interval", "100000"], "more than a day"),
])
def test_watch_flags_that_cannot_work_are_refused_in_one_line(argv, says, tmp_path, capsys):
    from pruner.cli import main

    code = main(["logs", "--out", str(tmp_path / "out"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()



def test_an_interrupt_mid_cycle_commits_what_the_cycle_read_and_frees_the_folder(home, tmp_path, monkeypatch):
    """Ctrl-C while a cycle reads its second new session: the first is committed, the table is whole, and
    the next run (the lock released) reads only the other. Ctrl-C while a cycle lists the folders: the
    table is the last commit's, byte for byte."""
    from pruner.logs import run as logs_run

    project = home / ".claude/projects/-work-demo"
    (project / "a.jsonl").write_text(CLAUDE.read_text("utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    run_logs(_found(home), str(out))
    committed = (out / TABLE).read_bytes()

    def listing_stopped():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        list(cycles(listing_stopped, str(out), interval=0.25, sleep=lambda s: None))
    assert (out / TABLE).read_bytes() == committed

    for name in ("b.jsonl", "c.jsonl"):
        (project / name).write_text(CLAUDE.read_text("utf-8"), encoding="utf-8")
    real, calls = logs_run.read_session, []

    def stopped_on_the_second(found, *a, **kw):
        calls.append(found.main.path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(found, *a, **kw)

    monkeypatch.setattr(logs_run, "read_session", stopped_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        list(cycles(lambda: _found(home), str(out), interval=0.25, sleep=lambda s: None))
    rows = _rows(out)
    assert sorted(Path(p).name for p in rows) == ["a.jsonl", "b.jsonl"]  # found in path order: b before c
    assert all(r["billed"] == pytest.approx(session_dollars("claude_code", [CLAUDE]), abs=1e-9) for r in rows.values())
    monkeypatch.setattr(logs_run, "read_session", real)
    rest = run_logs(_found(home), str(out))
    assert (rest.read, rest.new) == (1, 1) and len(_rows(out)) == 3


@pytest.mark.slow
def test_sigterm_stops_the_watch_like_ctrl_c(home, tmp_path):
    session = home / ".claude/projects/-work-demo/a.jsonl"
    session.write_text(CLAUDE.read_text("utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in AGENT_VARS} | {"HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "pruner", "logs", "--out", str(out), "--watch", "--interval", "0.5",
                             "--bill-only"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    try:
        _wait(lambda: str(session) in _rows(out))
        _wait(lambda: (out / "_pruner_logs.json").exists())
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.splitlines()[-1].startswith("pruner logs --watch: stopped") and "Traceback" not in err
    assert [r["billed"] for r in _rows(out).values()] == pytest.approx([session_dollars("claude_code", [session])])


def test_another_run_between_two_cycles_uses_the_folder_and_the_watch_reads_nothing_twice(home, tmp_path):
    """The lock is held per cycle: a plain run between two cycles is not refused, and the next cycle plans
    against the table it left (the session it read is not read again)."""
    project = home / ".claude/projects/-work-demo"
    (project / "a.jsonl").write_text(CLAUDE.read_text("utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    run_logs(_found(home), str(out))
    other = []

    def another_run():
        (project / "b.jsonl").write_text(CLAUDE.read_text("utf-8"), encoding="utf-8")
        other.append(run_logs(_found(home), str(out)))  # not refused: no cycle holds the folder now

    seen = list(_take(cycles(lambda: _found(home), str(out), interval=0.25, sleep=_Script(another_run))))
    assert [(s.new, s.read) for s in other] == [(1, 1)]
    assert seen == []  # the watch's cycle found nothing left to read
    assert sorted(Path(p).name for p in _rows(out)) == ["a.jsonl", "b.jsonl"]


def _take(it):
    try:
        yield from it
    except KeyboardInterrupt:
        return


def test_a_watch_stopped_while_its_first_run_closes_ends_with_its_own_line(home, tmp_path,
                                                                                         monkeypatch, capsys):
    """A SIGTERM that fell after the first run's commit but before the cycles began (while the closing lines
    were printed) reached the CLI's generic handler: "pruner logs: interrupted" instead of the watch's own
    line. Wherever the interrupt falls, a watch ends with the same one line and 130.

    Regression."""
    import pruner.cli.logs as logs_cli
    from pruner.cli import main

    session = home / ".claude/projects/-work-demo/a.jsonl"
    session.write_text(CLAUDE.read_text("utf-8"), encoding="utf-8")
    for var in AGENT_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))

    def interrupted(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(logs_cli, "closing_lines", interrupted)
    out = tmp_path / "out"
    assert main(["logs", "--out", str(out), "--watch", "--interval", "0.5", "--bill-only"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("pruner logs --watch: stopped") and not any("interrupted" in e for e in err)
    assert [r["billed"] for r in _rows(out).values()] == pytest.approx([session_dollars("claude_code", [session])])
