"""The fuzz suite for ``pruner logs`` itself (issue 31): hypothesis builds a hostile Claude Code home
folder, the command runs on it, the folder changes, it runs again, and again with nothing changed.

A home folder holds real sessions (one to four files of a few requests; some lines not JSON, some
usages damaged, some lines written twice, one model without a price) and around them what real
home folders hold: a project folder linked under another name, a session file linked or hard-linked
into another project, a link that loops back to the projects folder, a link to nothing, a named
pipe and a folder with a session's name, a file name that is not UTF-8 and one with spaces, a tab, a
newline and accents, a hidden file (not a session), a file that cannot be read
during the first run (a real ``EACCES``, also as root: ``tests/support/unreadable.py``), and in
the logs folder a planted link at the summary's name, a named pipe or another file at the table's
name, a folder and a link named like the writer's temporary files, a temporary file a killed run
left. Between the runs sessions grow by a request or are cut short (mid-line), and the unreadable
file becomes readable.

Invariants, checked after every run against the folder as it is then:

* no internal error: every run exits 0, or 2 with one line when the table's name holds something
  that is not a logs table (it is then moved away and the run repeated);
* one row per real session: the rows are the distinct real files, whatever the paths to them;
* the bill is the independent sum, made here from the raw lines of the distinct real files (each
  request at its model's list price; a line that is not JSON, or a usage that is not whole numbers
  in range, adds nothing; a model without a price adds nothing), and ``damaged_lines`` is the
  number of such lines, counted here;
* nothing outside the logs folder is written, created or removed;
* the last run, on an unchanged folder, changes no row.

Profiles, as the other fuzz suites set them: ``CI`` set, ``FUZZ_EXAMPLES_CI`` examples (bounded to
about a minute on this project's 2-core machine); ``PRUNER_NIGHTLY=1``, ``FUZZ_EXAMPLES_NIGHTLY``;
otherwise 25, so a developer's run stays quick. The number of examples run is printed at the end.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pruner.cli import main
from pruner.replay import default_prices
from tests.support.profile import profile
from tests.support.unreadable import permission_checks

# CI: 30 hostile home folders (was 80: 140 s in the serial run of 2026-12-07). Each example builds a home of
# links, loops, pipes and unreadable files and runs `pruner logs` three times; the derandomized CI draw is the
# same 30 every run, enough to cover each hostility the strategy draws (the suite prints the count). The wide
# search stays nightly: 10,000 random folders.
FUZZ_EXAMPLES_CI = 30
FUZZ_EXAMPLES_NIGHTLY = 10_000
#: ``PRUNER_NIGHTLY=1`` (tests/support/profile.py: the one switch every suite reads).
PROFILE = profile()
EXAMPLES = {"nightly": FUZZ_EXAMPLES_NIGHTLY, "ci": FUZZ_EXAMPLES_CI, "dev": 25}[PROFILE]
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TABLE, SUMMARY = "sessions.parquet", "_pruner_logs.json"
MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", "mystery-model-9")  # the last has no price
GOOD = (0, 4, 12, 1200, 9800, 3.0, 200_000)
BAD = (-500, "12", 1.5, True, 10**13, [], float("nan"))
_PRICES = default_prices()
_counted: list[int] = [0]


@pytest.fixture(scope="module", autouse=True)
def _print_example_count(request):
    yield
    plugins = request.config.pluginmanager
    reporter, capture = plugins.getplugin("terminalreporter"), plugins.getplugin("capturemanager")
    line = f"logs fuzz: {_counted[0]:,} examples run ({PROFILE} profile, {EXAMPLES:,} per property)"
    if reporter is None or capture is None:  # pragma: no cover - run without pytest's terminal
        print(line)
        return
    with capture.global_and_fixture_disabled():  # shown in a passing run too, as the other suites' counts are
        reporter.write_line(line)


# ---- the folder ------------------------------------------------------------------------------------


def _line(**fields) -> str:
    return json.dumps(fields, allow_nan=True)


def _request(n: int, parent: str, draw) -> list[str]:
    """One user line and the reply it gets (one line, one request), or a damaged line in between."""
    stamp = f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z"
    common = {"sessionId": "s", "cwd": "/work/demo", "isSidechain": False, "timestamp": stamp}
    user = _line(type="user", uuid=f"u{n}", parentUuid=parent, message={"role": "user", "content": "go on"}, **common)
    usage: dict = {}
    for field in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"):
        pick = draw(st.integers(0, 40))
        if pick < 34:
            usage[field] = GOOD[pick % len(GOOD)]
        elif pick < 39:
            usage[field] = BAD[pick % len(BAD)]
        # else: the field is missing (a count of 0)
    reply = _line(type="assistant", uuid=f"a{n}", parentUuid=f"u{n}", requestId=f"req{n}", **common,
                  message={"id": f"msg{n}", "role": "assistant", "model": draw(st.sampled_from(MODELS)),
                           "content": [{"type": "text", "text": "ok"}], "usage": usage})
    lines = [user, reply]
    extra = draw(st.integers(0, 9))
    if extra == 0:
        lines.append("{not json")
    elif extra == 1:
        lines.append("[1, 2]")
    elif extra == 2:
        lines.append(reply)  # an agent writes some lines twice: dropped, not billed twice
    return lines


def _session_lines(draw, start: int, requests: int, parent: str | None = None) -> list[str]:
    lines = [] if parent else [_line(type="user", uuid=f"u{start}-root", parentUuid=None, sessionId="s",
                                     cwd="/work/demo", message={"role": "user", "content": "start"})]
    parent = parent or f"u{start}-root"
    for n in range(start, start + requests):
        lines += _request(n, parent, draw)
        parent = f"a{n}"
    return lines


def _write(path: Path | bytes, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\n".join(lines) + "\n")


@st.composite
def homes(draw):
    """What to build: the sessions, their aliases and the odd entries, the changes between runs."""
    count = draw(st.integers(1, 4))
    return {
        "sessions": [draw(st.integers(1, 4)) for _ in range(count)],
        "alias": [draw(st.sampled_from(["", "", "file_link", "hard_link", "folder_link"])) for _ in range(count)],
        "odd": draw(st.lists(st.sampled_from(["loop", "dangling", "fifo", "folder", "fifo_link", "not_utf8",
                                              "odd_name", "hidden"]), max_size=3, unique=True)),
        "unreadable": draw(st.integers(-1, count - 1)),
        "planted": draw(st.sampled_from(["", "", "summary_link", "table_fifo", "table_junk", "temp_folder",
                                         "temp_link", "temp_left"])),
        "change": [draw(st.sampled_from(["", "", "grow", "truncate"])) for _ in range(count)],
        "cut": draw(st.floats(0.05, 0.95)),
    }


def _build(base: Path, plan: dict, draw) -> tuple[Path, list[Path]]:
    """The home folder; the real session files (what the rows must be)."""
    projects = base / "home" / ".claude" / "projects"
    real = []
    for k, requests in enumerate(plan["sessions"]):
        folder = projects / f"-p{k}"
        folder.mkdir(parents=True)
        path = folder / f"s{k}.jsonl"
        _write(path, _session_lines(draw, 100 * k, requests))
        real.append(path)
        alias = plan["alias"][k]
        if alias == "folder_link":
            (projects / f"-link{k}").symlink_to(folder, target_is_directory=True)
        elif alias in ("file_link", "hard_link"):
            other = projects / f"-other{k}"
            other.mkdir()
            if alias == "file_link":
                (other / f"alias{k}.jsonl").symlink_to(path)
            else:
                os.link(path, other / f"hard{k}.jsonl")
    first = projects / "-p0"
    for odd in plan["odd"]:
        if odd == "loop":
            (first / "loop").symlink_to(projects, target_is_directory=True)
            (projects / "-loop").symlink_to(projects, target_is_directory=True)
        elif odd == "dangling":
            (first / "gone.jsonl").symlink_to(base / "nowhere.jsonl")
        elif odd == "fifo":
            os.mkfifo(first / "pipe.jsonl")
        elif odd == "fifo_link":
            os.mkfifo(base / "outside-pipe")
            (first / "pipe-link.jsonl").symlink_to(base / "outside-pipe")
        elif odd == "folder":
            (first / "folder.jsonl").mkdir()
        elif odd == "odd_name":  # a session all the same: spaces, a tab, a newline, a dash, accents
            path = first / "-a sess\tion\nnamed ünïcode.jsonl"
            _write(path, _session_lines(draw, 800, 1))
            real.append(path)
        elif odd == "hidden":  # a name the agent's own listing skips: not a session
            _write(first / ".hidden.jsonl", _session_lines(draw, 700, 1))
        elif odd == "not_utf8":
            bad = os.path.join(os.fsencode(first), b"bad\xff\xfe.jsonl")
            _write(bad, _session_lines(draw, 900, 1))
            real.append(Path(os.fsdecode(bad)))
    (base / "outside.txt").write_text("precious\n", encoding="utf-8")
    return projects, real


def _plant(out: Path, base: Path, planted: str) -> None:
    out.mkdir(exist_ok=True)
    if planted == "summary_link":
        (out / SUMMARY).symlink_to(base / "outside.txt")
    elif planted == "table_fifo":
        os.mkfifo(out / TABLE)
    elif planted == "table_junk":
        (out / TABLE).write_bytes(b"PAR1 this is not a table")
    elif planted == "temp_folder":
        (out / f".{TABLE}.X.tmp").mkdir()
    elif planted == "temp_link":
        (out / f".{TABLE}.0123456789abcdef.tmp").symlink_to(base / "outside.txt")
    elif planted == "temp_left":
        (out / f".{TABLE}.fedcba9876543210.tmp").write_bytes(b"half a table")


def _change(real: list[Path], plan: dict, draw) -> None:
    for k, how in enumerate(plan["change"]):
        path = real[k]
        if how == "grow":
            lines = path.read_text(encoding="utf-8").splitlines()
            last = next(json.loads(x)["uuid"] for x in reversed(lines) if x.startswith('{"type": "assistant"'))
            _write(path, lines + _session_lines(draw, 100 * k + 50, 1, parent=last))
        elif how == "truncate":  # cut where an agent still writing would be: after the first line, mid-line
            data = path.read_bytes()
            path.write_bytes(data[: max(data.index(b"\n") + 1, int(len(data) * plan["cut"]))])


# ---- what the rows must be, from the raw files ---------------------------------------------------------


def _count(value) -> int | None:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if 0 <= value <= 10**12 else None


def _not_json(constant: str):
    raise ValueError(f"{constant} is not JSON")


def _raw(path: Path) -> tuple[float | None, int]:
    """(dollars, damaged lines) of one session file, from its raw lines; dollars None where it has replies
    and none of them records usage (no bill, which is not a bill of $0: issue 41)."""
    dollars, damaged, seen = 0.0, 0, set()
    replies = billed = 0
    for raw in path.read_bytes().decode("utf-8").split("\n"):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw, parse_constant=_not_json)  # NaN and Infinity are not JSON
        except ValueError:
            damaged += 1
            continue
        if not isinstance(entry, dict):
            damaged += 1
            continue
        if raw in seen:  # an exact repeat
            continue
        seen.add(raw)
        msg = entry.get("message")
        if entry.get("type") == "assistant" and isinstance(msg, dict) and msg.get("model") != "<synthetic>":
            replies += 1
        if entry.get("type") != "assistant" or not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict):
            continue
        u = msg["usage"]
        counts = [_count(u.get(f)) for f in ("input_tokens", "cache_read_input_tokens",
                                             "cache_creation_input_tokens", "output_tokens")]
        if any(c is None for c in counts):
            damaged += 1
            continue
        billed += 1
        price = _PRICES.find(msg.get("model"))
        if price is not None:
            fresh, read, written, out = counts
            write = price.input if price.cache_write_5m is None else price.cache_write_5m
            dollars += (fresh * price.input + read * price.cached_input + written * write + out * price.output) / 1e6
    return (None if replies and not billed else dollars), damaged


def _snapshot(base: Path, out: Path) -> dict[str, tuple]:
    """Everything under ``base`` but the logs folder: kind, size, time and content."""
    seen: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(os.fsencode(base)):
        if os.fsencode(out) == dirpath:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.fsencode(out) == path:
                continue
            st_ = os.lstat(path)
            body = b""
            if stat.S_ISREG(st_.st_mode) and st_.st_mode & 0o400:
                with open(path, "rb") as fh:
                    body = hashlib.sha256(fh.read()).digest()
            seen[os.fsdecode(path)] = (stat.S_IFMT(st_.st_mode), st_.st_size, st_.st_mtime_ns, body)
    return seen


def _run(projects: Path, out: Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["logs", "--bill-only", "--agent", "claude_code", "--claude-dir", str(projects),
                     "--out", str(out)])
    return code, err.getvalue()


def _run_refusals_aside(projects: Path, out: Path, base: Path) -> int:
    """Run; a refusal (exit 2, one line naming the table) moves the table's name aside and runs again."""
    code, err = _run(projects, out)
    if code == 2:
        lines = [x for x in err.splitlines() if "error" in x]
        assert len(lines) == 1 and "cannot read the logs table" in lines[0], err
        os.rename(out / TABLE, base / "moved-aside")
        code, err = _run(projects, out)
    assert code == 0, err
    return code


def _check(out: Path, real: list[Path], unreadable: set[Path]) -> list[dict]:
    rows = pq.read_table(out / TABLE).to_pylist()
    live = [r for r in rows if not r["removed"]]
    assert len(live) == len(real), [r["source"] for r in rows]  # one row per real session
    by_file = {os.stat(json.loads(r["files"])[0][0]).st_ino: r for r in live}
    assert sorted(by_file) == sorted(os.stat(p).st_ino for p in real)  # and they are the real files
    for path in real:
        row = by_file[os.stat(path).st_ino]
        if path in unreadable or not os.fsencode(path).decode("utf-8", "replace") == str(path):
            assert row["error"] is not None and row["billed"] is None
            continue
        dollars, damaged = _raw(path)
        assert row["error"] is None, row["error"]
        assert row["billed"] == (None if dollars is None else pytest.approx(dollars, rel=1e-9, abs=1e-9)), path
        assert row["damaged_lines"] == damaged, path
    return rows


@pytest.fixture(scope="module", autouse=True)
def _no_fsync():
    """The writer's ``fsync`` made a no-op for this suite: durability is not what is fuzzed here, and the
    disk flushes (six an example) were most of an example's time on this machine."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", lambda fd: None)
        yield


@FUZZ
@given(homes(), st.data())
@pytest.mark.slow
def test_logs_on_a_hostile_home_folder_keeps_its_invariants(plan, data):
    _counted[0] += 1
    base = Path(tempfile.mkdtemp(prefix="pruner-logs-fuzz-"))
    try:
        projects, real = _build(base, plan, data.draw)
        out = base / "out"
        _plant(out, base, plan["planted"])
        locked = real[plan["unreadable"]] if plan["unreadable"] >= 0 else None
        before = _snapshot(base, out)
        if locked is not None:
            locked.chmod(0)
        try:
            with permission_checks():
                _run_refusals_aside(projects, out, base)
        finally:
            if locked is not None:
                locked.chmod(0o644)
        moved = {str(base / "moved-aside")}
        after = {k: v for k, v in _snapshot(base, out).items() if k not in moved}
        assert after == {k: v for k, v in before.items() if k not in moved}  # nothing outside written
        _check(out, real, {locked} if locked is not None else set())

        _change(real, plan, data.draw)
        before = _snapshot(base, out)
        _run_refusals_aside(projects, out, base)
        assert _snapshot(base, out) == before
        rows = _check(out, real, set())

        _run_refusals_aside(projects, out, base)  # nothing changed: no row changes
        assert pq.read_table(out / TABLE).to_pylist() == rows
        assert _snapshot(base, out) == before
    finally:
        shutil.rmtree(base, ignore_errors=True)
