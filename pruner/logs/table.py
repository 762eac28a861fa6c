"""The logs folder: one table of session rows that is also the incremental manifest.

Layout::

    OUT/sessions.parquet     one row per session (columns: ``COLUMNS``)
    OUT/_pruner_logs.json    what the last run found and did (for people; never read back for results)
    OUT/_pruner_batch.lock   held while a run writes (one run per folder: ``pruner.batch.lock``)

Every row carries the files it was made from (path, size, mtime, SHA-256), so
the table and what it was made from can never disagree: both are replaced in
one rename. A run commits every few seconds; a run killed between commits
loses only the sessions since the last commit, which the next run redoes (each
session is keyed by its agent and main file, so nothing is ever held twice).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from contextlib import contextmanager
from typing import Any, BinaryIO, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from ..batch.lock import LOCK, acquire, release
from ..errors import ConfigurationError
from ..files import write_atomic
from .names import printable

TABLE = "sessions.parquet"
SUMMARY = "_pruner_logs.json"

_S, _I, _F, _B = pa.string(), pa.int64(), pa.float64(), pa.bool_()

#: Identity, files and facts of a session; the money columns follow (``pruner.logs.money.COLUMNS``).
BASE_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("session_key", _S),  # "<agent>:<main file>": a session's identity across runs
    ("agent", _S),  # claude_code, codex, pi, gemini_cli
    ("person", _S),  # pruner logs --homes: the person's or machine's sub-folder; "" (null: earlier tables) else
    ("project", _S),  # the folder the agent filed it under (Codex: the recorded cwd)
    ("cwd", _S),  # the working folder the session records ("" when none)
    ("source", _S),  # the main file
    ("files", _S),  # JSON [[path, size, mtime_ns, sha256], ...]: main file first, then its subagent files
    ("bytes", _I),  # all its files
    ("subagent_files", _I),
    ("format", _S),
    ("name", _S),
    ("start", _S),  # first recorded timestamp, ISO 8601 UTC
    ("end", _S),  # last recorded timestamp
    ("models", _S),  # JSON {model: requests}
    ("requests_main", _I),
    ("requests_subagent", _I),
    ("error", _S),  # null unless the session could not be read (retried on every run)
    ("damaged_lines", _I),  # lines left out of the bill: not JSON, or usage not whole numbers in range
    ("removed", _B),  # its main file is gone: the row is kept, and marked
    ("stale", _B),  # its database could not be read at the last run: the row is as billed before (retried)
)


def schema(extra: tuple[tuple[str, pa.DataType], ...] = ()) -> pa.Schema:
    return pa.schema([pa.field(name, kind) for name, kind in (*BASE_COLUMNS, *extra)])


#: What ``plan`` and the row readers rely on: a table without these columns, of these kinds, is not ours.
REQUIRED = {"session_key": _S, "source": _S, "files": _S, "error": _S, "removed": _B}


def _unreadable(path: str, why: str) -> ConfigurationError:
    return ConfigurationError(f"{printable(path)}: cannot read the logs table ({why}); move it away or choose "
                              "another logs folder", setting="out")


def _open_table(path: str) -> BinaryIO | None:
    """The table file, opened without following a link or waiting on a pipe; None when there is none.

    A named pipe at the table's name would block the reader for ever, and a link would have the run
    read (and then replace) something that is not this folder's: both are refused, as the batch
    command refuses its manifest."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise _unreadable(path, "it is a symbolic link; the table is a regular file of the folder") from None
        raise _unreadable(path, exc.strerror or str(exc)) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode) else "not a file"
        raise _unreadable(path, f"this is {kind}, not a table")
    return os.fdopen(fd, "rb")


def _check_rows(path: str, rows: list[dict[str, Any]]) -> None:
    """Every row has a key and a ``files`` cell of the shape ``base_row`` writes (else the table is refused)."""
    for n, r in enumerate(rows, start=1):
        if not isinstance(r.get("session_key"), str) or not isinstance(r.get("source"), str):
            raise _unreadable(path, f"row {n:,} has no session_key or source")
        try:
            files = json.loads(r["files"]) if isinstance(r.get("files"), str) else None
        except ValueError:
            files = None
        if not (isinstance(files, list) and files and all(
                isinstance(f, list) and len(f) == 4 and isinstance(f[0], str) and isinstance(f[3], str)
                and all(isinstance(x, int) and not isinstance(x, bool) for x in f[1:3]) for f in files)):
            raise _unreadable(path, f"row {n:,} ({r['session_key'][:80]}): its files cell is not "
                                    "[[path, size, mtime_ns, sha256], ...]")


_BATCH = 1024  # rows converted to Python at a time by a sparse load


def load_rows(out: str, columns: tuple[str, ...] | None = None, *, sparse: bool = False
              ) -> dict[str, dict[str, Any]]:
    """session_key -> row (only ``columns`` when given), from the folder's table (empty when there is none).
    ``sparse``: a row without its null cells (most of a bill-only row's: its strategy and bound columns),
    read a batch of rows at a time, for a run that holds every row while it reads (issue 32: a row costs
    what it holds, not the table's width); ``row.get(column)`` reads the same either way.

    A table this command did not write (another Parquet file, a damaged cell, a pipe or a link at its
    name) is refused with one line naming it; a column it lacks (a table of an earlier version) is
    read as null, which ``plan`` takes as a reason to read the session again."""
    path = os.path.join(out, TABLE)
    try:
        fh = _open_table(path)
        if fh is None:
            return {}
        with fh:
            # ParquetFile, not read_table: read_table loads pyarrow.dataset, which imports pandas (a second
            # on this machine, most of an unchanged rerun)
            # one thread, no pre-buffering: a read through a Python file object starts Arrow's CPU and IO
            # pools, whose threads can outlive the interpreter and abort it at exit ("terminate called
            # without an active exception", apache/arrow#34314 and #50482; it cut a CI run's CSV)
            parquet = pq.ParquetFile(fh, pre_buffer=False)
            held = parquet.schema_arrow
            for name, kind in REQUIRED.items():
                if held.get_field_index(name) < 0 or held.field(name).type != kind:
                    raise _unreadable(path, f"it has no {name} column of {kind}; it is not a logs table")
            wanted = [c for c in columns if held.get_field_index(c) >= 0] if columns else None
            if sparse:
                batches = parquet.iter_batches(batch_size=_BATCH, columns=wanted, use_threads=False)
                rows = [{k: v for k, v in r.items() if v is not None} for batch in batches for r in batch.to_pylist()]
            else:
                rows = parquet.read(columns=wanted, use_threads=False).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise _unreadable(path, str(exc)) from None
    _check_rows(path, rows)
    return {r["session_key"]: r for r in rows}


class _NoPandas:
    """A ``sys.meta_path`` finder for which pandas cannot be imported (``_no_pandas_probe``)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (not while a logs table is built)", name=name)
        return None


@contextmanager
def _no_pandas_probe() -> Iterator[None]:
    """pyarrow's conversion of Python lists (``pa.array``, ``Table.from_pydict``) first asks whether each
    list is a pandas object, and to ask imports pandas (pyarrow's ``pandas_api`` shim, pyarrow 26,
    ``pandas-shim.pxi``): ~50 MB of RSS for a run that never uses pandas (issue 32: flat memory). While
    pandas is not imported, no object can be one; so here an ``import pandas`` fails, and the shim
    takes pandas as absent for that question. Its methods that need pandas (``Table.to_pandas``) import
    it again when called, so pandas works as before in this process afterwards."""
    if "pandas" in sys.modules:  # imported already (the dashboard): nothing to spare
        yield
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def save_rows(out: str, rows: dict[str, dict[str, Any]], table_schema: pa.Schema) -> None:
    """Replace the table with ``rows`` (sorted by key) in one rename."""
    # Every text escaped where UTF-8 cannot hold it (a reader's message quoting a name, a recorded field):
    # no cell can make the write fail.
    # Column by column: a list per column, not a dict per row of every column (most of them null in a
    # bill-only row), so a commit of many rows costs one pointer per cell (issue 32: flat memory).
    ordered = [r for _, r in sorted(rows.items())]
    with _no_pandas_probe():
        table = pa.Table.from_pydict({name: [printable(v) if isinstance(v := r.get(name), str) else v
                                             for r in ordered] for name in table_schema.names}, schema=table_schema)
    write_atomic(os.path.join(out, TABLE), lambda fh: pq.write_table(table, fh), follow_symlinks=False)


def save_summary(out: str, body: dict[str, Any]) -> None:
    """The run's summary; a link planted at its name is replaced, never followed (as the table's)."""
    write_atomic(os.path.join(out, SUMMARY), json.dumps(body, indent=2, sort_keys=True) + "\n",
                 follow_symlinks=False)


def check_folder(out: str) -> None:
    """``ConfigurationError`` unless ``out`` is absent, empty, or a logs folder (before it is locked).

    The table and the summary must be regular files (or, for the summary, a link the write replaces):
    a pipe or a device at either name is refused before anything is read or written."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise ConfigurationError(f"{printable(out)}: this is a file; a logs folder must be a folder", setting="out")
    if os.path.isdir(out):
        names = [n for n in os.listdir(out) if not n.startswith(".") and n != LOCK]
        if names and TABLE not in names and SUMMARY not in names:
            raise ConfigurationError(f"{printable(out)}: the folder is not empty and is not a logs folder; choose a "
                                     "new or empty folder", setting="out")
        summary = os.path.join(out, SUMMARY)
        if os.path.lexists(summary):
            mode = os.lstat(summary).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                raise ConfigurationError(f"{printable(summary)}: this is not a file; the logs folder's summary is "
                                         "a file this command writes; move it away or choose another logs folder",
                                         setting="out")


#: The temporary names ``write_atomic`` gives the table and the summary (``.<name>.<16 hex>.tmp``).
_TEMPORARY = re.compile(rf"^\.(?:{re.escape(TABLE)}|{re.escape(SUMMARY)})\.[0-9a-f]{{16}}\.tmp$")


def tidy(out: str) -> None:
    """Remove what an interrupted write of this command left (under the lock: no other run is writing).

    Only regular files with the writer's own temporary names go: a folder, a link or anything else
    that merely looks like one was not written by this command and is left alone."""
    for name in os.listdir(out):
        path = os.path.join(out, name)
        if _TEMPORARY.match(name) and stat.S_ISREG(os.lstat(path).st_mode):
            os.remove(path)


@contextmanager
def locked(out: str) -> Iterator[None]:
    """Hold the folder for the run: reliability's batch lock (``pruner.batch.lock``), one run per folder.

    The lock names the process holding it; a second run on the folder is refused with that name, and
    a lock left by a run that was killed (its process gone) is taken over."""
    acquired = acquire(out)
    try:
        yield
    finally:
        release(out, acquired.holder)
