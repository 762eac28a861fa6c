"""Issue 31 (reliability round 4): ``pruner logs`` on a real home folder. One regression test per
defect of the logs command, each named after it, and the three behaviours the issue asked to decide
(``test_decided_r4_…``). Sessions are the repository's sample Claude Code and Codex files, laid out
as the agents lay them out; every dollar figure a test checks is summed from the raw file by
``tests/support/raw_bill.py`` or by the test itself."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pruner.logs import discover, run_logs
from pruner.logs.table import SUMMARY, TABLE
from tests.support.paths import SAMPLES
from tests.support.raw_bill import claude_code as raw_claude_bill
from tests.support.unreadable import permission_checks

CLAUDE = SAMPLES / "claude_code.jsonl"
CODEX = SAMPLES / "codex_rollout.jsonl"
AGENT_VARIABLES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "XDG_CACHE_HOME")


def _home(tmp_path: Path, *names: str) -> Path:
    """A home folder with the sample Claude Code session under project ``-p``, once per name."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    for name in names or ("s1.jsonl",):
        shutil.copyfile(CLAUDE, project / name)
    return home


def _found(home: Path):
    return [s for loc in discover({"HOME": str(home)}) for s in loc.sessions]


def _rows(out: Path) -> list[dict]:
    return pq.read_table(out / TABLE).to_pylist()


def _cli(home: Path, out: Path, *extra: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home)}
    for var in AGENT_VARIABLES:
        env.pop(var, None)
    return subprocess.run([sys.executable, "-m", "pruner", "logs", "--out", str(out), *extra], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_the_summary_write_replaces_a_planted_link_and_never_follows_it(tmp_path):
    """Round 4, defect 01."""
    home, out = _home(tmp_path), tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n", encoding="utf-8")
    (out / SUMMARY).symlink_to(outside)
    run_logs(_found(home), str(out))
    assert outside.read_text(encoding="utf-8") == "precious\n"
    assert not (out / SUMMARY).is_symlink() and json.loads((out / SUMMARY).read_text())["read"] == 1


def test_one_session_is_one_row_whatever_the_number_of_paths_to_it(tmp_path):
    """Round 4, defect 02."""
    home, out = _home(tmp_path), tmp_path / "out"
    projects = home / ".claude" / "projects"
    real = projects / "-p" / "s1.jsonl"
    (projects / "-q").symlink_to(projects / "-p", target_is_directory=True)  # a linked project folder
    (projects / "-r").mkdir()
    (projects / "-r" / "alias.jsonl").symlink_to(real)  # a linked session file
    os.link(real, projects / "-p" / "hard.jsonl")  # a hard link: another name, the same inode
    summary = run_logs(_found(home), str(out))
    rows = _rows(out)
    assert len(rows) == 1 and summary.sessions == 1
    assert rows[0]["source"] in (str(real), str(projects / "-p" / "hard.jsonl"))  # a real place, not a link
    assert rows[0]["billed"] == pytest.approx(raw_claude_bill([real]), abs=1e-9)  # once, not four times

    # A table that holds the session under another path too (as one written before this rule does):
    # the rerun drops that row, and bills the session once.
    alias = str(projects / "-q" / "s1.jsonl")
    files = json.loads(rows[0]["files"])
    files[0][0] = alias
    twice = [rows[0], {**rows[0], "session_key": f"claude_code:{alias}", "source": alias, "project": "-q",
                       "files": json.dumps(files)}]
    pq.write_table(pa.Table.from_pylist(twice, schema=pq.read_schema(out / TABLE)), out / TABLE)
    again = run_logs(_found(home), str(out))
    assert [r["source"] for r in _rows(out)] == [rows[0]["source"]] and again.merged == 1


def test_an_error_row_is_retried_on_every_run(tmp_path):
    """Round 4, defect 03."""
    home, out = _home(tmp_path, "s1.jsonl", "s2.jsonl"), tmp_path / "out"
    locked = home / ".claude" / "projects" / "-p" / "s2.jsonl"
    locked.chmod(0)
    try:
        with permission_checks():  # a real EACCES, also as root (tests/support/unreadable.py)
            first = run_logs(_found(home), str(out))
    finally:
        locked.chmod(0o644)
    assert first.errors == 1
    assert [r["error"] is not None for r in _rows(out)] == [False, True]
    second = run_logs(_found(home), str(out))
    rows = {Path(r["source"]).name: r for r in _rows(out)}
    assert rows["s2.jsonl"]["error"] is None and second.errors == 0 and second.retried == 1
    assert rows["s2.jsonl"]["billed"] == pytest.approx(raw_claude_bill([locked]), abs=1e-9)


def _damaged_file(path: Path) -> int:
    """The sample session with one usage made negative and two lines that are not JSON objects; the
    number of lines the bill cannot use, counted here."""
    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[5])
    assert entry["type"] == "assistant" and entry["requestId"] == "req_B"  # a request of one line
    entry["message"]["usage"]["output_tokens"] = -500
    lines[5] = json.dumps(entry)
    lines[3:3] = ["{this is not json", "[1, 2, 3]"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 3


@pytest.mark.parametrize("mode", [["--bill-only"], ["--strategies", "full"]], ids=["fast", "full"])
def test_damaged_lines_are_counted_in_the_row_and_summarised(tmp_path, mode):
    """Round 4, defect 04."""
    home, out = _home(tmp_path), tmp_path / "out"
    session = home / ".claude" / "projects" / "-p" / "s1.jsonl"
    damaged = _damaged_file(session)
    if mode == ["--bill-only"]:
        from pruner.formats.claude_code_usage import read_usage
        assert read_usage(str(session)) is not None  # the fast reader reads it: the fast path is tested
    done = _cli(home, out, *mode, "--json")
    assert done.returncode == 0, done.stderr
    [row] = _rows(out)
    assert row["damaged_lines"] == damaged and json.loads(done.stdout)["damaged_lines"] == damaged
    assert f"{damaged} damaged lines" in done.stderr and "damaged_lines column" in done.stderr
    # what is billed: every request but the damaged one (the sum over the lines the bill can use)
    kept = [line for line in session.read_text(encoding="utf-8").splitlines() if '"output_tokens": -500' not in line]
    clean = tmp_path / "clean.jsonl"
    clean.write_text("\n".join(line for line in kept if line.startswith("{\"")) + "\n", encoding="utf-8")
    assert row["billed"] == pytest.approx(raw_claude_bill([clean]), abs=1e-9)


@pytest.mark.slow
def test_a_name_that_is_not_utf8_is_one_error_row_and_the_rest_are_read(tmp_path):
    """Round 4, defect 07."""
    home, out = _home(tmp_path), tmp_path / "out"
    project = os.fsencode(home / ".claude" / "projects" / "-p")
    bad = os.path.join(project, b"bad\xff.jsonl")
    shutil.copyfile(CLAUDE, bad)
    for _ in range(2):  # and a rerun, which failed the same way
        done = _cli(home, out, "--bill-only")
        assert done.returncode == 0, done.stderr
        rows = {r["source"]: r for r in _rows(out)}
        assert len(rows) == 2
        shown = str(home / ".claude" / "projects" / "-p" / "bad\\xff.jsonl")
        assert "not UTF-8" in rows[shown]["error"] and shown in rows[shown]["error"]
        good = rows[str(home / ".claude" / "projects" / "-p" / "s1.jsonl")]
        assert good["error"] is None and good["billed"] == pytest.approx(raw_claude_bill([CLAUDE]), abs=1e-9)


def test_a_codex_cwd_that_is_a_lone_surrogate_is_read(tmp_path):
    """Round 4, defect 08."""
    home, out = _home(tmp_path), tmp_path / "out"
    day = home / ".codex" / "sessions" / "2025" / "10" / "02"
    day.mkdir(parents=True)
    text = CODEX.read_text(encoding="utf-8")
    assert '"cwd":"/home/dev/cli"' in text
    (day / "rollout-2025-10-02T14-00-00-x.jsonl").write_text(text.replace('"cwd":"/home/dev/cli"', '"cwd":"\\ud800"'),
                                                              encoding="utf-8")
    done = _cli(home, out, "--bill-only")
    assert done.returncode == 0, done.stderr
    rows = {r["agent"]: r for r in _rows(out)}
    assert set(rows) == {"claude_code", "codex"} and rows["codex"]["error"] is None
    assert rows["codex"]["project"] == "\ufffd" and rows["codex"]["billed"] > 0  # as the reader repairs it


def test_a_named_pipe_at_the_tables_name_is_refused_without_waiting(tmp_path):
    """Round 4, defect 09."""
    home, out = _home(tmp_path), tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / TABLE)
    done = _cli(home, out, "--bill-only", timeout=60)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()[-1:]
    assert "cannot read the logs table" in line and "named pipe" in line and "--out" in line


def _write_table(path: Path, rows: list[dict]) -> None:
    pq.write_table(pa.Table.from_pylist(rows), path)


@pytest.mark.parametrize("damage", ["other_shape", "files_not_json", "files_not_a_list"])
def test_a_table_of_another_shape_or_a_damaged_files_cell_is_one_line(tmp_path, damage):
    """Round 4, defect 10."""
    home, out = _home(tmp_path), tmp_path / "out"
    assert run_logs(_found(home), str(out)).read == 1
    if damage == "other_shape":
        _write_table(out / TABLE, [{"x": 1, "y": "two"}])
    else:
        rows = _rows(out)
        rows[0]["files"] = "[[" if damage == "files_not_json" else json.dumps({"path": "x"})
        pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(out / TABLE)), out / TABLE)
    done = _cli(home, out, "--bill-only")
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()[-1:]
    assert "cannot read the logs table" in line and "move it away" in line and "--out" in line
    assert "Error:" not in line and "internal error" not in line


def test_the_removed_mark_is_cleared_when_the_file_comes_back(tmp_path):
    """Round 4, defect 11."""
    home, out = _home(tmp_path), tmp_path / "out"
    session = home / ".claude" / "projects" / "-p" / "s1.jsonl"
    run_logs(_found(home), str(out))
    away = tmp_path / "away.jsonl"
    os.rename(session, away)
    run_logs(_found(home), str(out))
    assert [r["removed"] for r in _rows(out)] == [True]
    os.rename(away, session)  # the same file, unchanged: same size and time
    back = run_logs(_found(home), str(out))
    assert [r["removed"] for r in _rows(out)] == [False] and back.read == 0 and back.returned == 1


def test_tidying_removes_only_the_temporary_files_this_command_wrote(tmp_path):
    """Round 4, defect 13."""
    home, out = _home(tmp_path), tmp_path / "out"
    run_logs(_found(home), str(out))
    folder = out / f".{TABLE}.X.tmp"
    folder.mkdir()
    lookalike = out / f".{TABLE}.0123456789abcdef.tmp"
    lookalike.symlink_to(tmp_path / "elsewhere")
    leftover = out / f".{TABLE}.fedcba9876543210.tmp"  # what a killed write leaves
    leftover.write_bytes(b"half a table")
    done = _cli(home, out, "--bill-only")
    assert done.returncode == 0, done.stderr
    assert folder.is_dir() and lookalike.is_symlink() and not leftover.exists()


# ---- the three behaviours the issue asked to decide ---------------------------------------------------


def test_decided_r4_a_strategy_infeasible_from_its_first_request_shows_no_recall(tmp_path):
    """Nothing was sent, so there is no recall: the row holds null, ``pruner replay``'s table a dash."""
    from pruner.formats import load_session
    from pruner.logs.money import money_columns
    from pruner.replay import context_recall, replay
    from pruner.replay.report import table

    session = load_session(str(CLAUDE))
    r = replay(session, ["full", "truncate"], snapshots=False)
    context_recall(r)
    run = r.runs["truncate"]
    refused = dataclasses.replace(run, rows=[dataclasses.replace(x, window=1, rejected=True) for x in run.rows])
    assert refused.totals["infeasible_from"] == min(x.request for x in run.rows)  # from its first request
    forced = dataclasses.replace(r, runs={**r.runs, "truncate": refused})
    printed = {line.split()[0]: line.split()[-1] for line in table(forced).splitlines()[1:3]}
    assert printed == {"full": "%", "truncate": "-"}

    from pruner.logs.money import strategy_cells

    row = strategy_cells("truncate", refused)
    assert row["truncate_recall"] is None and row["truncate_feasible"] is False
    ok = money_columns(session, ("full",))
    assert ok["full_recall"] == 1.0  # a strategy that sent its requests keeps its measure


def test_decided_r4_a_session_whose_requests_are_all_unpriced_has_no_strategy_dollars(tmp_path):
    home, out = _home(tmp_path), tmp_path / "out"
    session = home / ".claude" / "projects" / "-p" / "s1.jsonl"
    session.write_text(CLAUDE.read_text(encoding="utf-8").replace("claude-sonnet-4-5", "mystery-model-9"),
                       encoding="utf-8")
    run_logs(_found(home), str(out), strategies=("full", "truncate"))
    [row] = _rows(out)
    requests = sum(1 for line in session.read_text().splitlines() if '"requestId"' in line)
    assert row["unpriced_requests"] == len({json.loads(x)["requestId"] for x in session.read_text().splitlines()
                                            if '"requestId"' in x}) and requests
    assert row["full_dollars"] is None and row["truncate_dollars"] is None  # unpriced, not $0
    assert row["full_feasible"] is True


def test_decided_r4_rows_carry_the_price_table_version_and_are_billed_again_when_it_changes(tmp_path, monkeypatch):
    import pruner.logs.money as logs_money
    from pruner.replay import default_prices

    home, out = _home(tmp_path), tmp_path / "out"
    first = run_logs(_found(home), str(out))
    [row] = _rows(out)
    assert row["prices_version"] and first.read == 1
    assert run_logs(_found(home), str(out)).read == 0

    shipped = default_prices()
    doubled = dataclasses.replace(shipped, models=tuple(dataclasses.replace(
        m, input=2 * m.input, cached_input=2 * m.cached_input, output=2 * m.output,
        cache_write_5m=None if m.cache_write_5m is None else 2 * m.cache_write_5m,
        cache_write_1h=None if m.cache_write_1h is None else 2 * m.cache_write_1h) for m in shipped.models))
    for cached in ("_shipped_prices", "prices_version"):
        getattr(getattr(logs_money, cached, None), "cache_clear", lambda: None)()
    monkeypatch.setattr(logs_money, "default_prices", lambda: doubled)
    try:
        upgraded = run_logs(_found(home), str(out))
        [again] = _rows(out)
    finally:
        for cached in ("_shipped_prices", "prices_version"):
            getattr(getattr(logs_money, cached, None), "cache_clear", lambda: None)()
    assert upgraded.read == 1 and upgraded.repriced == 1
    assert again["prices_version"] != row["prices_version"]
    assert again["billed"] == pytest.approx(2 * raw_claude_bill([CLAUDE]), abs=1e-9)


_JUNK = ("{not json", "[1, 2]", "7", '"text"', "\u00a0", "\u3000 ", "NaN", '{"a": NaN}', "{", "}")
_USAGE = (-500, "12", 1.5, True, 10**13, None, 3.0, 0, 2**63, [], {})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_fast_and_the_full_reader_count_the_same_damaged_lines(tmp_path_factory, data):
    """Lines that are not JSON objects, and usages damaged in every way, drawn into the sample session:
    the bill-only reader's row and the full reader's row agree on ``damaged_lines`` and on the bill, and
    the count is the test's own (lines that are not a JSON object, usages that are not whole numbers).

    Round 4, defect 04."""
    from pruner.formats import load_session
    from pruner.formats.claude_code_usage import read_usage
    from pruner.logs.discover import FileState, LogSession
    from pruner.logs.money import money_columns
    from pruner.logs.row import damaged_lines
    from pruner.logs.run import read_session

    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    damaged_replies = set()  # a reply written over several lines loses its usage once
    replies = [k for k, line in enumerate(lines) if '"type":"assistant"' in line]
    for k in data.draw(st.lists(st.sampled_from(replies), max_size=3, unique=True), label="damaged replies"):
        entry = json.loads(lines[k])
        field = data.draw(st.sampled_from(sorted(entry["message"]["usage"])), label="field")
        value = data.draw(st.sampled_from(_USAGE), label="value")
        entry["message"]["usage"][field] = value
        lines[k] = json.dumps(entry)
        whole = value is None or (not isinstance(value, (bool, str, list, dict)) and float(value).is_integer()
                                  and 0 <= value <= 10**12)
        if not whole:
            damaged_replies.add(entry["message"]["id"])
    expected = len(damaged_replies)
    junk = data.draw(st.lists(st.tuples(st.integers(1, len(lines)), st.sampled_from(_JUNK)), max_size=4),
                     label="junk lines")
    for at, text in sorted(junk, reverse=True):
        lines.insert(at, text)
        expected += bool(text.strip())
    path = tmp_path_factory.mktemp("damaged") / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    st_ = os.stat(path)
    found = LogSession("claude_code", "p", FileState(str(path), st_.st_size, st_.st_mtime_ns))
    fast = read_session(found)  # the bill-only reading
    whole = load_session(str(path))  # what the full reading reads
    assert fast.get("error") is None
    assert fast["damaged_lines"] == damaged_lines(whole)
    assert fast["billed"] == pytest.approx(money_columns(whole)["billed"], abs=1e-12)
    assert fast["damaged_lines"] == expected
    assert read_usage(str(path)) is not None  # the fast reader read it: both paths were compared
