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
from contextlib import contextmanager
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from ..batch.lock import LOCK, acquire, release
from ..errors import ConfigurationError
from ..files import write_atomic

TABLE = "sessions.parquet"
SUMMARY = "_pruner_logs.json"

_S, _I, _F, _B = pa.string(), pa.int64(), pa.float64(), pa.bool_()

#: Identity, files and facts of a session; the money columns follow (``pruner.logs.money.COLUMNS``).
BASE_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("session_key", _S),  # "<agent>:<main file>": a session's identity across runs
    ("agent", _S),  # claude_code, codex, pi, gemini_cli
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
    ("error", _S),  # null unless the session could not be read
    ("removed", _B),  # its main file is gone: the row is kept, and marked
)


def schema(extra: tuple[tuple[str, pa.DataType], ...] = ()) -> pa.Schema:
    return pa.schema([pa.field(name, kind) for name, kind in (*BASE_COLUMNS, *extra)])


def load_rows(out: str, columns: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
    """session_key -> row (only ``columns`` when given), from the folder's table (empty when there is none)."""
    path = os.path.join(out, TABLE)
    if not os.path.exists(path):
        return {}
    try:
        # ParquetFile, not read_table: read_table loads pyarrow.dataset, which imports pandas (a second
        # on this machine, most of an unchanged rerun)
        rows = pq.ParquetFile(path).read(columns=list(columns) if columns else None).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise ConfigurationError(f"{path}: cannot read the logs table ({exc}); choose another logs folder",
                                 setting="out") from None
    return {r["session_key"]: r for r in rows}


def save_rows(out: str, rows: dict[str, dict[str, Any]], table_schema: pa.Schema) -> None:
    """Replace the table with ``rows`` (sorted by key) in one rename."""
    ordered = [{name: r.get(name) for name in table_schema.names} for _, r in sorted(rows.items())]
    table = pa.Table.from_pylist(ordered, schema=table_schema)
    write_atomic(os.path.join(out, TABLE), lambda fh: pq.write_table(table, fh), follow_symlinks=False)


def save_summary(out: str, body: dict[str, Any]) -> None:
    write_atomic(os.path.join(out, SUMMARY), json.dumps(body, indent=2, sort_keys=True) + "\n")


def check_folder(out: str) -> None:
    """``ConfigurationError`` unless ``out`` is absent, empty, or a logs folder (before it is locked)."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise ConfigurationError(f"{out}: this is a file; a logs folder must be a folder", setting="out")
    if os.path.isdir(out):
        names = [n for n in os.listdir(out) if not n.startswith(".") and n != LOCK]
        if names and TABLE not in names and SUMMARY not in names:
            raise ConfigurationError(f"{out}: the folder is not empty and is not a logs folder; choose a new or "
                                     "empty folder", setting="out")


def tidy(out: str) -> None:
    """Remove what an interrupted write left (under the lock: no other run is writing)."""
    for name in os.listdir(out):
        if name.startswith(f".{TABLE}.") and name.endswith(".tmp"):
            os.remove(os.path.join(out, name))


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
