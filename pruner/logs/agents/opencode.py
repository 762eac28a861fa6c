"""OpenCode: its database ``~/.local/share/opencode/opencode.db`` (``$XDG_DATA_HOME/opencode``), and
the JSON files of the releases before it (``storage/session/<project>/<session>.json``,
``storage/message/<session>/*.json``, ``storage/part/<message>/*.json``).

Where OpenCode keeps them (OpenCode is MIT-licensed; read 2026-12-05): its data folder is
``Global.Path.data``, ``$XDG_DATA_HOME/opencode`` (xdg-basedir; ``~/.local/share`` when the variable
is unset), and the database is ``opencode.db`` there, or ``opencode-<channel>.db`` for a build of
another release channel (``packages/opencode/src/storage/db.ts``, ``getChannelPath``,
anomalyco/opencode@032cb74b095f4ff07de9fb93f5d36973623e5fa5). Its tables are ``session``,
``message`` (``id``, ``session_id``, ``time_created``, ``time_updated``, ``data``: the message as
JSON without its ids) and ``part`` (``id``, ``message_id``, ``session_id``, times, ``data``)
(``packages/opencode/src/session/session.sql.ts``@063e8306d9895af9bdd175306cfa4fa3291fd83a); the
messages of a session are read in ``(time_created, id)`` order and each message's parts in id order,
as OpenCode reads them (``message-v2.ts``, ``hydrate``). The JSON files are what
``storage/json-migration.ts`` moves into the database; a session found in both is read from the
database only.

One session of the database is one ``LogSession`` with ``entry`` = its id (``pruner.logs.found``):
its size is the bytes of its message and part records, its time the latest ``time_updated`` of
them, so a run reads again only the sessions that changed. The database is opened read-only
(``mode=ro``), never written. A subagent's session (``parent_id``) is a session of its own. The
project is the session's working folder (``directory``).

ccusage (``rust/crates/ccusage/src/adapter/opencode``, ryoppippi/ccusage@5816e640e8824986f33427203da164b01394a161)
reads the same database and files under its own variable ``OPENCODE_DATA_DIR`` (OpenCode itself
does not read it), bills each message's ``tokens`` (for a multi-step turn only the last step's: see
``pruner.formats.opencode``) and takes a positive recorded ``cost`` over its price table; here every
step is billed at the shipped prices and OpenCode's own cost is kept beside (``billed_recorded_cost``).
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any, Iterator

from ...errors import FormatError
from ...model import Session
from ..found import FileState, LogSession, file_state, files_in, subfolders
from .database import Unreadable, LAST_MS, connect, snapshot, text as _text
from .base import Agent

#: What ``--list`` and the row say for a session whose working folder is not recorded.
NO_DIRECTORY = "(no directory recorded)"


def databases(root: str) -> list[str]:
    """``opencode.db`` and the other channels' ``opencode-<channel>.db`` in OpenCode's data folder."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [os.path.join(root, n) for n in names
            if n == "opencode.db" or (n.startswith("opencode-") and n.endswith(".db"))]


#: The latest ``time_updated`` of a session's records that is a time: a whole number of milliseconds from
#: 1970 to the end of year 9999. A value of another type (text) or out of that range is a damaged field: it
#: is left out of the session's time (which only tells a run whether to read the session again).
_LATEST = f"max(CASE WHEN typeof(time_updated) = 'integer' AND time_updated BETWEEN 0 AND {LAST_MS} " \
          "THEN time_updated END)"


def _ms(value: Any) -> int:
    """Milliseconds of a listed time (``_LATEST``'s rule), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= LAST_MS else 0


def _db_sessions(path: str, state: FileState) -> list[LogSession]:
    out = []
    con = connect(path)
    try:
        sizes: dict[str, tuple[int, int]] = {}
        for table in ("message", "part"):
            for sid, size, updated in con.execute(
                    f"SELECT session_id, sum(length(CAST(data AS BLOB))), {_LATEST} FROM {table} "
                    "GROUP BY session_id"):
                old = sizes.get(_text(sid), (0, 0))
                sizes[_text(sid)] = (old[0] + int(size or 0), max(old[1], _ms(updated)))
        for sid, directory, updated in con.execute("SELECT id, directory, time_updated FROM session ORDER BY id"):
            size, latest = sizes.get(_text(sid), (0, 0))
            latest = max(latest, _ms(updated))
            main = FileState(path=path, size=size, mtime_ns=latest * 1_000_000, device=state.device,
                             inode=state.inode)
            out.append(LogSession("opencode", _text(directory) or NO_DIRECTORY, main, entry=_text(sid)))
    finally:
        con.close()
    return out


def _legacy(root: str, known: set[str]) -> list[LogSession]:
    """The sessions of the JSON files (``storage/``) that no database holds."""
    storage = os.path.join(root, "storage")
    out = []
    for project_dir in subfolders(os.path.join(storage, "session")):
        for path in files_in(project_dir, ".json"):
            sid = os.path.basename(path)[: -len(".json")]
            main = file_state(path)
            if main is None or sid in known:
                continue
            messages = [s for s in (file_state(p) for p in files_in(os.path.join(storage, "message", sid), ".json"))
                        if s is not None]
            parts = [s for m in messages for s in (file_state(p) for p in files_in(
                os.path.join(storage, "part", os.path.basename(m.path)[: -len(".json")]), ".json")) if s is not None]
            try:
                with open(path, "rb") as fh:
                    info = json.loads(fh.read(1 << 20))
                directory = info.get("directory") if isinstance(info, dict) else None
            except (OSError, ValueError, RecursionError):
                directory = None
            out.append(LogSession("opencode", directory if isinstance(directory, str) and directory else NO_DIRECTORY,
                                  main, tuple(messages + parts)))
    return out


def find(root: str) -> list[LogSession]:
    out: list[LogSession] = []
    for path in databases(root):
        state = file_state(path)
        if state is None:
            continue
        try:
            out.extend(_db_sessions(path, state))
        except (sqlite3.Error, ValueError, TypeError, OverflowError):  # listed as the file: reading says why
            out.append(LogSession("opencode", NO_DIRECTORY, state))
    return out + _legacy(root, {s.entry for s in out})


def rows(found: LogSession) -> Iterator[tuple[str, str, str, bytes]]:
    """(table, message id of a part, id, data) of one database session: its session row's fields as
    JSON, then its messages in OpenCode's order, then their parts in message and id order."""
    con = connect(found.main.path)
    try:
        yield from _session_rows(con, found)
    finally:
        con.close()


def _session_rows(con: sqlite3.Connection, found: LogSession) -> Iterator[tuple[str, str, str, bytes]]:
    """``rows`` from one read transaction: a step OpenCode writes meanwhile (a message and its parts) is
    seen whole or not at all, never a part without its message."""
    with snapshot(con):
        con.row_factory = sqlite3.Row
        head = con.execute("SELECT id, title, directory, parent_id, project_id, version FROM session WHERE id = ?",
                           (found.entry,)).fetchone()
        if head is None:
            raise FormatError(f"session {found.entry!r} is no longer in the database", file=found.main.path,
                              path=f"session {found.entry}")
        info = {k: _text(head[c]) for k, c in (("id", "id"), ("title", "title"), ("directory", "directory"),
                                                ("parentID", "parent_id"), ("projectID", "project_id"),
                                                ("version", "version")) if head[c] is not None}
        yield "session", "", found.entry, json.dumps(info, ensure_ascii=False, sort_keys=True).encode("utf-8")
        for mid, data in con.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
                                     (found.entry,)):
            yield "message", "", _text(mid), data if isinstance(data, bytes) else str(data).encode("utf-8")
        for mid, pid, data in con.execute("SELECT message_id, id, data FROM part WHERE session_id = ? "
                                          "ORDER BY message_id, id", (found.entry,)):
            yield "part", _text(mid), _text(pid), data if isinstance(data, bytes) else str(data).encode("utf-8")


def read_entry(found: LogSession, bill_only: bool) -> tuple[Session, str] | None:
    from ...formats._opencode_rows import read_rows  # msgspec is loaded only when billing

    try:
        return read_rows(rows(found), file=found.main.path, bill_only=bill_only)
    except sqlite3.Error as exc:
        raise Unreadable(f"cannot read the OpenCode database ({exc})", file=found.main.path,
                         path=f"session {found.entry}") from None


def _legacy_rows(found: LogSession) -> Iterator[tuple[str, str, str, bytes]]:
    """The JSON files of one session before the database, as ``rows`` gives a database session's."""
    def read(path: str) -> bytes:
        with open(path, "rb") as fh:
            return fh.read()

    def stem(path: str) -> str:
        return os.path.basename(path)[: -len(".json")]

    yield "session", "", stem(found.main.path), read(found.main.path)
    n = sum(1 for f in found.subagents if os.path.basename(os.path.dirname(os.path.dirname(f.path))) == "message")
    for f in found.subagents[:n]:
        yield "message", "", stem(f.path), read(f.path)
    for f in found.subagents[n:]:
        yield "part", os.path.basename(os.path.dirname(f.path)), stem(f.path), read(f.path)


def load(found: LogSession) -> Session:
    """A session of the JSON files (``storage/``); a database that could not be listed is named here."""
    if not found.main.path.endswith(".json"):
        try:
            _db_sessions(found.main.path, found.main)  # the listing again: its error is the row's
        except sqlite3.Error as exc:
            raise Unreadable(f"cannot read the OpenCode database ({exc})", file=found.main.path) from None
        except (ValueError, TypeError, OverflowError) as exc:
            raise FormatError(f"cannot list the OpenCode database's sessions ({exc})", file=found.main.path) from None
        raise FormatError("the OpenCode database lists no sessions it could read", file=found.main.path)
    from ...formats._opencode_rows import read_rows

    read = read_rows(_legacy_rows(found), file=found.main.path, bill_only=False)
    assert read is not None  # the full reading always gives a session (or raises)
    return read[0]


AGENT = Agent(name="opencode", title="OpenCode", flag="opencode", variable="XDG_DATA_HOME", inner="opencode",
              default=os.path.join(".local", "share"), layout="~/.local/share/opencode/opencode.db",
              find=find, format="opencode", load=load, read_entry=read_entry, order=50)
