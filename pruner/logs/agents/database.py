"""An agent's SQLite database, opened as ``pruner logs`` opens every one: read-only, never written, and
nothing created beside it.

SQLite's plain read-only opening (``mode=ro``) of a database in WAL mode creates its ``-wal`` and
``-shm`` files when they are missing (and leaves them there), and cannot open it at all where the folder
cannot be written. So the opening depends on what is beside the database:

* not in WAL mode (a rollback journal), or in WAL mode with both ``-wal`` and ``-shm`` present (the agent
  is running, or was): ``mode=ro``, which creates nothing and reads what the ``-wal`` holds;
* in WAL mode without a ``-wal`` file (the agent closed it cleanly: every change is in the database
  file): ``immutable=1``, which reads the file alone and creates nothing;
* in WAL mode with a ``-wal`` but no ``-shm`` (a folder copied, an agent that crashed), or where the
  openings above fail (a folder that cannot be written): the database and its ``-wal`` are copied to a
  temporary folder (one copy per process while they stay the same, removed when the process ends) and
  the copy is read, so the ``-wal``'s content is read and nothing is written beside the original.

``snapshot`` holds one read transaction over the statements of one session, so records an agent writes
while they are read are seen all or not at all (the next run reads them).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
from contextlib import contextmanager
from typing import Any, Iterator
from urllib.parse import quote

from ...errors import FormatError

#: The last millisecond (and second) of year 9999, UTC: an agent's record timed later is damaged.
LAST_MS, LAST_S = 253402300799999, 253402300799

#: A database's copies: (path, its and its -wal's size and time) -> (the copy, the process that made it).
_COPIES: dict[tuple[Any, ...], tuple[str, int]] = {}
_CLEANED: set[int] = set()  # the processes whose copies are removed when they end


class Unreadable(FormatError):
    """The database could not be opened or queried this run (locked, a column renamed, a folder that cannot
    be read): ``pruner logs`` keeps the rows it billed from it before, marked stale, and tries again next run."""


def _is_wal(path: str) -> bool:
    """Whether the database file's header says WAL mode (read and write versions 2, bytes 18 and 19)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[:16] == b"SQLite format 3\x00" and header[18:20] == b"\x02\x02"


def _uri(path: str, query: str) -> str:
    return f"file:{quote(os.path.abspath(path))}?{query}"


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _remove_copies(path: str | None = None) -> None:
    """This process's copies (of ``path`` only, when given) removed: a worker process forked from another
    holds its parent's entries too, and leaves them to it."""
    me = os.getpid()
    for key, (copy, owner) in list(_COPIES.items()):
        if owner == me and (path is None or key[0] == path):
            shutil.rmtree(os.path.dirname(copy), ignore_errors=True)
            del _COPIES[key]


def _clean_at_exit() -> None:
    """Remove this process's copies when it ends: ``atexit`` for a plain process, and a multiprocessing
    finaliser for a pool's worker (which ends without running ``atexit``)."""
    if os.getpid() in _CLEANED:
        return
    _CLEANED.add(os.getpid())
    atexit.register(_remove_copies)
    from multiprocessing import util

    util.Finalize(None, _remove_copies, exitpriority=0)


def _copy(path: str) -> str:
    """A copy of the database and its ``-wal`` in a temporary folder (reused while both stay the same)."""
    key = (os.path.abspath(path), _stat(path), _stat(path + "-wal"))
    held = _COPIES.get(key)
    if held is not None and held[1] == os.getpid() and os.path.exists(held[0]):
        return held[0]
    _remove_copies(key[0])  # an earlier state of the same database: replaced
    _clean_at_exit()
    folder = tempfile.mkdtemp(prefix="pruner-db-")
    copy = os.path.join(folder, "copy.db")
    try:
        shutil.copyfile(path, copy)
        if os.path.exists(path + "-wal"):
            shutil.copyfile(path + "-wal", copy + "-wal")
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise sqlite3.OperationalError(f"unable to open database file ({exc.strerror or exc})") from None
    _COPIES[key] = (copy, os.getpid())
    return copy


#: How long a reader waits for an agent's write lock (seconds): an agent's write takes milliseconds; a
#: database locked longer is read next run (its rows kept, marked stale), not waited on.
BUSY_SECONDS = 1.0


def _open(uri: str) -> sqlite3.Connection:
    con = sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS)
    con.text_factory = bytes
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens it now: a failure is seen here
    except sqlite3.Error:
        con.close()
        raise
    return con


def connect(path: str) -> sqlite3.Connection:
    """``path`` opened read-only (the agent's database is never written, nothing is created beside it,
    and a missing file is an error, not a new empty database; see the module), its text read as bytes."""
    if not os.path.isfile(path):
        raise sqlite3.OperationalError("unable to open database file (no such file)")
    if not _is_wal(path):
        return _open(_uri(path, "mode=ro"))
    wal, shm = os.path.exists(path + "-wal"), os.path.exists(path + "-shm")
    if not wal:
        return _open(_uri(path, "mode=ro&immutable=1"))
    if shm:
        try:
            return _open(_uri(path, "mode=ro"))
        except sqlite3.Error:
            pass  # a folder that cannot be written: the copy below
    return _open(_uri(_copy(path), "mode=ro"))


@contextmanager
def snapshot(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction over the statements run inside: they all see the database as it was when the
    first of them read it."""
    con.execute("BEGIN")
    try:
        yield con
    finally:
        try:
            con.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def text(value: Any) -> str:
    """A column read as bytes, as text (an undecodable byte shown as U+FFFD: a name, never data)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else ""
