"""Read the agent logs into the logs folder, incrementally: only new or changed sessions are read.

A session is unchanged when every one of its files (main file and subagent
files) has the size and modification time its row records: it is not opened.
When a size or time differs, the file's SHA-256 decides: the same content (a
file merely touched) keeps the row and records the new time; other content (a
session an agent is still writing) is read again and its row replaced, never
added beside the old one. A session whose main file is gone keeps its row,
marked ``removed`` (and unmarked when the file comes back).

A row is read again, whatever its files, when it holds an error (a file that
could not be read may be readable now: error rows are retried on every run),
when it was billed at another version of the shipped price table than this
run's (``money.prices_version``: an upgrade that changes a price re-bills every
row; a table of an earlier version records no price-table version, so its rows
are all read again once), or whose bill columns are of another shape (``money.BILL_VERSION``: a
table written before a bill column was added is read again once, as for the price table). One session is one row
whatever the number of paths to it (``pruner.logs.aliases``); a row held under
another path of a file this run lists (a table written before that rule, or a
link added since) is dropped, so nothing is billed twice. A row whose session is found now under
another person (``pruner.logs.homes``: a team's folder renamed, or a table a plain run made) has its
``person`` rewritten; the person is where the files were found, not their content, so it is not read.

Where the sessions are read is the run's one seam (``Reader``): this process or a pool of them by
default, a Dask cluster with ``pruner.logs.cluster.DaskReader``; the rest is the same either way.

The run commits its rows every ``COMMIT_SECONDS`` (one atomic rename of the
table, see ``pruner.logs.table``), so an interrupted run (Ctrl-C, SIGTERM, or
SIGKILL) loses at most the sessions since the last commit, and the next run
reads those again. One run per folder: the folder's lock is held throughout.
"""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Callable, Iterable, Iterator, NoReturn

from ..model import Session
from .agents import AGENTS as AGENT_REGISTRY
from .aliases import same_file
from .found import LogSession
from .names import clean, printable
from .row import base_row, damaged_lines, digest_file, recorded_cwd, session_facts, states_of
from .table import TABLE, check_folder, load_rows, locked, save_rows, save_summary, schema, tidy

#: The columns ``plan`` reads (and the run's summary of what the table holds).
PLAN_COLUMNS = ("session_key", "source", "files", "strategies", "error", "removed", "prices_version", "bound_version",
                "damaged_lines", "bill_version", "person", "stale")
#: How often a run writes what it has so far (seconds).
COMMIT_SECONDS = 5.0


@dataclass(frozen=True)
class Plan:
    """What a run has to do, decided from the folder listing and the rows already held."""

    todo: tuple[LogSession, ...]  # new, or content changed
    new: int
    changed: int
    touched: tuple[tuple[str, str], ...]  # (session key, files JSON): same content, new times
    unchanged: int
    removed: tuple[str, ...]  # keys whose main file is gone
    digests: dict[str, tuple[str, ...]] = field(default_factory=dict)  # key -> digests computed while planning
    retried: int = 0  # of ``changed``: rows that held an error
    repriced: int = 0  # of ``changed``: rows billed at another price table (or of an earlier version)
    returned: tuple[str, ...] = ()  # keys marked removed whose main file is back (same content)
    merged: tuple[str, ...] = ()  # keys held under another path of a file listed now: dropped
    relabelled: tuple[tuple[str, str], ...] = ()  # (session key, person): found now under another person
    stale: tuple[str, ...] = ()  # keys of a database this run could not list: kept, marked stale
    fresh: tuple[str, ...] = ()  # keys marked stale whose database lists them again, unchanged: unmarked


def plan(found: Iterable[LogSession], held: dict[str, dict[str, Any]], strategies: tuple[str, ...] = (),
         prices: str | None = None, bound: bool = False, retry_errors: bool = True) -> Plan:
    """``strategies``: what this run replays; a row made with other strategies is read again.
    ``prices``: the price table's version (``money.prices_version``); a row of another is read again.
    ``bound``: this run computes the hindsight bound; a row without it (or of another ``BOUND_VERSION``)
    is read again (a run without ``bound`` keeps the bound a row holds).
    ``retry_errors``: False reads a row that holds an error again only when its files changed, as any
    other row (``pruner logs --watch``'s later cycles: a file that stays unreadable is not read again
    every few seconds; the watch's first run, a plain run, retries every error row)."""
    from .bound import BOUND_VERSION
    from .money import BILL_VERSION, prices_version

    prices = prices_version() if prices is None else prices
    found_list = list(found)
    todo, touched, digests = [], [], {}
    wanted = ",".join(strategies)
    new = changed = unchanged = retried = repriced = 0
    seen: set[str] = set()
    returned, relabelled, unstale = [], [], []
    identities = set()
    # a database listed as its file (it could not be listed: locked, a column renamed) and the databases
    # whose sessions are listed (``LogSession.entry``), by the key of the file itself
    unlisted = {s.key for s in found_list if not s.entry}
    listed = {f"{s.agent}:{printable(s.main.path)}" for s in found_list if s.entry}
    for s in found_list:
        if s.key in seen:  # two names that escape alike (``names.printable``): the first is the session
            continue
        seen.add(s.key)
        if not s.entry:  # a database holds many sessions: a row of another session is not an alias of it
            identities.add((s.main.device, s.main.inode))
        row = held.get(s.key)
        if row is None:
            todo.append(s)
            new += 1
            continue
        failed = bool(row.get("error"))
        if (failed and retry_errors) or not failed and (
                row.get("prices_version") != prices or (row.get("strategies") or "") != wanted
                or row.get("bill_version") != BILL_VERSION
                or (bound and row.get("bound_version") != BOUND_VERSION)):
            todo.append(s)
            changed += 1
            retried += bool(row.get("error"))
            repriced += not row.get("error") and row.get("prices_version") != prices
            continue
        if row.get("removed"):
            returned.append(s.key)  # unless its content changed (then its new row is not removed either)
        if row.get("stale"):
            unstale.append(s.key)  # its database is listed again; unless its content changed (then it is read)
        if (row.get("person") or "") != printable(s.person):  # a label, not content: the row is not read again
            relabelled.append((s.key, printable(s.person)))
        old = {state.path: (state, digest) for state, digest in states_of(row)}
        if [f.path for f in s.files] == [path for path in old] and all(
                (old[f.path][0].size, old[f.path][0].mtime_ns) == (f.size, f.mtime_ns) for f in s.files):
            unchanged += 1
            continue
        if s.entry:  # a session inside a database: its records' size or time moved, so it is read again
            todo.append(s)
            changed += 1
            continue
        fresh = []
        same = [f.path for f in s.files] == list(old)
        for f in s.files:
            prior = old.get(f.path)
            if prior is not None and (prior[0].size, prior[0].mtime_ns) == (f.size, f.mtime_ns):
                fresh.append(prior[1])
                continue
            try:
                fresh.append(digest_file(f.path))
            except OSError:
                fresh.append("")
            same = same and prior is not None and fresh[-1] == prior[1]
        if same:
            touched.append((s.key, base_row(s, fresh)["files"]))
            unchanged += 1
        else:
            todo.append(s)
            digests[s.key] = tuple(fresh)
            changed += 1
            if returned and returned[-1] == s.key:
                returned.pop()
    identities.discard((0, 0))
    merged, removed, stale = [], [], []
    for k, r in sorted(held.items()):
        if k in seen:
            continue
        if any(k[:i] in unlisted for i, ch in enumerate(k) if ch == "#"):
            # a session of a database that could not be listed now: its bill stands, marked stale (the
            # database is listed again next run); never dropped as another path of the database file
            if not r.get("error") and not r.get("stale"):
                stale.append(k)
            continue
        if k in listed:  # the database's own error row: it lists its sessions again
            merged.append(k)
            continue
        main = states_of(r)[0][0].path  # the path itself (a name that is not UTF-8 is escaped in ``source``)
        if same_file(main, identities):
            merged.append(k)
        elif not r.get("removed") and not os.path.exists(main):
            removed.append(k)
    todo_keys = {s.key for s in todo}
    return Plan(tuple(todo), new, changed, tuple(touched), unchanged, tuple(removed), digests, retried, repriced,
                tuple(returned), tuple(merged), tuple(relabelled), tuple(stale),
                tuple(k for k in unstale if k not in todo_keys))


def error_message(exc: BaseException, where: str) -> str:
    """A row's error, for a person: the reader's own message (a ``FormatError`` names the file, line and
    field), or what went wrong in words, never Python's exception text for a value nested too deeply."""
    if isinstance(exc, RecursionError):
        return (f"{where}: JSON nested too deeply to read (more than about 1,000 levels of arrays and objects); "
                "this is not an agent's record")
    if isinstance(exc, MemoryError):
        return f"{where}: too large to read in this machine's memory"
    return str(exc) if hasattr(exc, "file") else f"{where}: {type(exc).__name__}: {exc}"


def read_session(found: LogSession, strategies: tuple[str, ...] = (), bound: bool = False) -> dict[str, Any]:
    """One session's row (a worker's job): digests, load, facts, money (``strategies`` replayed).

    An agent that records no cache counts (``Agent.records_cache``: Goose) has its cache token cells null,
    not 0: its cache-read share is unknown, and a report says so rather than "0 %"."""
    row = _read_session(found, strategies, bound)
    agent = AGENT_REGISTRY.get(found.agent)
    if agent is not None and not agent.records_cache:
        row.update(cache_read_tokens=None, cache_write_tokens=None)
    return row


def _read_session(found: LogSession, strategies: tuple[str, ...], bound: bool) -> dict[str, Any]:
    """``read_session``'s row, as the agent's readers give it.

    Without strategies a single-file session of an agent with a bill-only reader (``Agent.read_usage``,
    e.g. ``pruner.formats.claude_code_usage``: the usage skeleton, the file read and hashed once) is read by it, and
    its money found in one pass (``money.usage_columns``); a file that reader leaves to the full
    one, and every other format, is read in full. Both give the same row."""
    from ..formats import load_session
    from .money import money_columns, usage_columns

    unnamed = next((f.path for f in found.files if not clean(f.path)), None)
    if unnamed is not None:  # its name could be neither stored nor shown: one error row, the others are read
        row = base_row(found, [""] * len(found.files))
        row["error"] = (f"{printable(unnamed)}: the file name is not UTF-8 (its undecodable bytes are shown as "
                        "\\xNN); the session is not read; rename the file to read it")
        return row
    read_entry = AGENT_REGISTRY[found.agent].read_entry if found.agent in AGENT_REGISTRY else None
    if found.entry and read_entry is not None:
        return _read_entry(found, read_entry, strategies, bound)
    read_usage = AGENT_REGISTRY[found.agent].read_usage if found.agent in AGENT_REGISTRY else None
    if not strategies and read_usage is not None and len(found.files) == 1:
        try:
            skeleton = read_usage(found.main.path)
        except Exception:  # an unreadable file, JSON nested too deeply, ...: the full reader names it
            skeleton = None
        if skeleton is not None:
            session, digest = skeleton
            row = base_row(found, [digest])
            money, facts = usage_columns(session)
            row.update(format=session.source_format, name=session.name, cwd=recorded_cwd(session),
                       damaged_lines=damaged_lines(session), **facts)
            row.update(money)
            return row
    try:
        digests = [digest_file(f.path) for f in found.files]
    except OSError as exc:
        row = base_row(found, [""] * len(found.files))
        row["error"] = f"{found.main.path}: cannot read the file ({exc.strerror or exc})"
        return row
    row = base_row(found, digests)
    try:
        load = AGENT_REGISTRY[found.agent].load if found.agent in AGENT_REGISTRY else None
        session = load(found) if load is not None else load_session(found.main.path)
    except Exception as exc:
        row["error"] = error_message(exc, found.main.path)
        return row
    if strategies:
        money, facts = money_columns(session, strategies, bound), session_facts(session)
    else:
        money, facts = usage_columns(session)
    row.update(format=session.source_format, name=session.name, cwd=recorded_cwd(session),
               damaged_lines=damaged_lines(session), **facts)
    row.update(money)
    return row


def _read_entry(found: LogSession, read: Callable[[LogSession, bool], tuple[Session, str] | None],
                strategies: tuple[str, ...], bound: bool) -> dict[str, Any]:
    """The row of a session inside a database (``LogSession.entry``): the bill-only reading first when no
    strategy is replayed (None: unsure), else the full one; its digest is its records' (the agent's)."""
    from .money import money_columns, usage_columns

    from .agents.database import Unreadable

    try:
        read_ = (read(found, True) if not strategies else None) or read(found, False)
        if read_ is None:
            raise ValueError("the agent's reader returned nothing")
        session, digest = read_
    except Exception as exc:
        row = base_row(found, [""])
        row["error"] = error_message(exc, found.key)
        if isinstance(exc, Unreadable):
            row["unreadable"] = True  # ``run_logs`` keeps the row billed before, marked stale
        return row
    row = base_row(found, [digest])
    if strategies:
        money, facts = money_columns(session, strategies, bound), session_facts(session)
    else:
        money, facts = usage_columns(session)
    row.update(format=session.source_format, name=session.name, cwd=recorded_cwd(session),
               damaged_lines=damaged_lines(session), **facts)
    row.update(money)
    return row


#: (sessions done, sessions to do, files done, files to do, bytes done, bytes to do, seconds so far)
Progress = Callable[[int, int, int, int, int, int, float], None]
#: Where the sessions are read: (sessions, strategies, bound) -> (session, ``read_session``'s row) for each,
#: in any order. The run's own is ``_rows`` (this process or a pool of them); ``pruner.logs.cluster`` reads
#: on a Dask cluster. The plan, the merge into the table and its commits stay the run's, whoever reads.
Reader = Callable[[tuple[LogSession, ...], tuple[str, ...], bool], Iterable[tuple[LogSession, dict[str, Any]]]]


@dataclass(frozen=True)
class LogsSummary:
    out: str
    sessions: int  # rows held after the run (removed ones included)
    read: int  # sessions read now
    new: int
    changed: int
    touched: int  # same content, new modification time: kept
    unchanged: int
    removed: int  # marked removed now
    errors: int  # rows read now that hold an error
    bytes_read: int
    seconds: float
    interrupted: bool = False
    retried: int = 0  # of ``changed``: rows that held an error, read again
    repriced: int = 0  # of ``changed``: rows billed at another price table, read again
    returned: int = 0  # rows marked removed whose file is back: unmarked
    merged: int = 0  # rows held under another path of a file read now: dropped (one session, one row)
    damaged_lines: int = 0  # in the rows held: lines left out of the bill (``row.damaged_lines``)
    damaged_sessions: int = 0  # rows held with at least one such line
    stale: int = 0  # rows of a database that could not be read now: kept as billed before, marked stale

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict
        return asdict(self)


class _Stop(Exception):
    """SIGTERM, turned into an orderly stop that commits what is done."""


def _on_term(signum: int, frame: FrameType | None) -> NoReturn:  # pragma: no cover - exercised through a subprocess
    raise _Stop()


def run_logs(found: Iterable[LogSession], out: str, *, strategies: tuple[str, ...] = (), workers: int = 1,
             progress: Progress | None = None, bound: bool = False, retry_errors: bool = True,
             reader: Reader | None = None) -> LogsSummary:
    """Bring ``out``'s table up to date with ``found`` (see the module docstring); ``strategies``:
    the replay strategies whose dollars each row holds (none: the bill and the ledger only); ``bound``:
    each row also holds the hindsight bound (``pruner.logs.bound``; needs ``strategies``);
    ``retry_errors``: see ``plan``; ``reader``: where the sessions are read (``Reader``; default
    ``workers`` processes of this machine)."""
    from .money import COLUMNS as MONEY_COLUMNS

    start = time.perf_counter()
    out = os.path.abspath(out)
    check_folder(out)
    table_schema = schema(MONEY_COLUMNS)
    with locked(out):
        tidy(out)
        # What planning needs (a few columns) first: a rerun with nothing to do reads no more.
        index = load_rows(out, columns=PLAN_COLUMNS)
        p = plan(found, index, strategies, bound=bound, retry_errors=retry_errors)
        changes = bool(p.todo or p.touched or p.removed or p.returned or p.merged or p.relabelled or p.stale
                       or p.fresh)
        rows = load_rows(out, sparse=True) if changes else dict(index)
        for key, files in p.touched:
            rows[key] = {**rows[key], "files": files}
        for key in p.removed:
            rows[key] = {**rows[key], "removed": True}
        for key in p.returned:
            rows[key] = {**rows[key], "removed": False}
        for key in p.merged:
            del rows[key]
        for key, person in p.relabelled:
            rows[key] = {**rows[key], "person": person}
        for key in p.stale:
            rows[key] = {**rows[key], "stale": True}
        for key in p.fresh:
            rows[key] = {**rows[key], "stale": False}
        # A new folder's empty table is written now only when nothing is to be read; else at the first
        # commit, after the first session: the first table write costs 25-40 MB of RSS (pyarrow's Parquet
        # writer and Arrow's buffers), which would otherwise sit under the largest session's peak (issue 32).
        missing = not os.path.exists(os.path.join(out, TABLE))
        if (p.touched or p.removed or p.returned or p.merged or p.relabelled or p.stale or p.fresh
                or (missing and not p.todo)):
            save_rows(out, rows, table_schema)
        total_bytes = sum(s.size for s in p.todo)
        total_files = sum(len(s.files) for s in p.todo)
        done = done_files = done_bytes = errors = 0
        kept_stale = len(p.stale)
        interrupted = False
        previous = signal.signal(signal.SIGTERM, _on_term)
        last_commit = time.perf_counter()
        try:
            if progress:
                progress(0, len(p.todo), 0, total_files, 0, total_bytes, 0.0)
            # not held in a name: an interrupted loop drops the reading at once, which cancels what is not started
            for found_session, row in (reader(p.todo, strategies, bound) if reader
                                       else _rows(p.todo, workers, strategies, bound)):
                earlier = rows.get(found_session.key)
                if row.pop("unreadable", False) and earlier is not None and not earlier.get("error"):
                    # the database could not be read now (locked, a column renamed): the bill made from it
                    # before stands, marked stale, and the session is read again next run
                    rows[found_session.key] = {**earlier, "stale": True}
                    kept_stale += 1
                else:
                    rows[found_session.key] = row
                    errors += row.get("error") is not None
                done += 1
                done_files += len(found_session.files)
                done_bytes += found_session.size
                now = time.perf_counter()
                if now - last_commit >= COMMIT_SECONDS:
                    save_rows(out, rows, table_schema)
                    last_commit = now
                if progress:
                    progress(done, len(p.todo), done_files, total_files, done_bytes, total_bytes, now - start)
        except (KeyboardInterrupt, _Stop):
            interrupted = True
        finally:
            signal.signal(signal.SIGTERM, previous)
            if done or not os.path.exists(os.path.join(out, TABLE)):  # a new folder interrupted first: its table
                save_rows(out, rows, table_schema)
        damaged = [r.get("damaged_lines") or 0 for r in rows.values()]
        summary = LogsSummary(out=out, sessions=len(rows), read=done, new=p.new, changed=p.changed,
                              touched=len(p.touched), unchanged=p.unchanged, removed=len(p.removed), errors=errors,
                              bytes_read=done_bytes, seconds=time.perf_counter() - start, interrupted=interrupted,
                              retried=p.retried, repriced=p.repriced, returned=len(p.returned),
                              merged=len(p.merged), damaged_lines=sum(damaged),
                              damaged_sessions=sum(1 for d in damaged if d), stale=kept_stale)
        save_summary(out, summary.as_dict())
    return summary


_PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies (Linux)


def _worker_start(parent: int) -> None:
    """In each worker process: stopping is the parent's job, and a worker never outlives it.

    A forked worker inherited the parent's SIGTERM handler (an orderly stop that commits the table, which
    only the parent may do) and survived the parent's SIGKILL, reading on with no one to hand its rows to.
    Now Ctrl-C reaches the parent alone (it cancels what is not started), SIGTERM ends a worker, and on
    Linux the worker gets SIGTERM when its parent dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: a worker ends when it next finds its queue closed
        pass
    if os.getppid() != parent:  # the parent died before the request above was made
        os._exit(1)


def _rows(todo: tuple[LogSession, ...], workers: int, strategies: tuple[str, ...], bound: bool = False
          ) -> Iterator[tuple[LogSession, dict[str, Any]]]:
    """(session, row) in order; with more than one worker, read in worker processes."""
    if workers <= 1 or len(todo) < 2:
        for s in todo:
            yield s, read_session(s, strategies, bound)
        return
    # Largest first: the last tasks are small, so no worker sits idle while another reads a big session
    # (the table is saved sorted by key, so the order of reading changes nothing in it).
    todo = tuple(sorted(todo, key=lambda s: (-s.size, s.key)))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_start, initargs=(os.getpid(),))
    try:
        # chunks keep the per-task overhead small for thousands of small files; a replay takes seconds, so
        # one session per task there (chunks of big sessions would leave a worker idle at the end)
        chunk = 1 if strategies else max(1, min(64, len(todo) // (8 * workers)))
        read = partial(read_session, strategies=strategies, bound=bound)
        for s, row in zip(todo, pool.map(read, todo, chunksize=chunk)):
            yield s, row
    finally:  # an interrupted run does not wait for the sessions not yet started
        pool.shutdown(wait=True, cancel_futures=True)

