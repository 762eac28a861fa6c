"""Goose: its database ``~/.local/share/goose/sessions/sessions.db`` (``$GOOSE_PATH_ROOT/data/sessions``).

Where Goose keeps it (Goose is Apache-2.0; read 2026-12-05): the data folder is
``$GOOSE_PATH_ROOT/data`` when that variable holds an absolute path, else the platform's data folder
for the app ``goose`` (``etcetera``'s XDG strategy on Linux: ``~/.local/share/goose``)
(``crates/goose/src/config/paths.rs``, block/goose@0780e228ca96f8b7171d9a76f62b6d2c11ed901e); the
database is ``sessions/sessions.db`` there, with the tables ``sessions`` (one row per session: its
name, ``working_dir``, token counters, ``provider_name``, ``model_config_json``) and ``messages``
(``session_id``, ``role``, ``content_json``, ``created_timestamp``, ``metadata_json``)
(``crates/goose/src/session/session_manager.rs``@dbec1655c17720cb591291603f1337ed7856afbd). Goose
on macOS keeps it under ``~/Library/Application Support/Block/goose``: pass ``--goose-dir``.

One session of the database is one ``LogSession`` with ``entry`` = its id (``pruner.logs.found``):
its size is the bytes of its messages' content and metadata, its time the later of its
``updated_at`` and its latest message, so a run reads again only the sessions that changed. The
database is opened read-only (``mode=ro``), never written. The project is the session's
``working_dir``. Goose records its usage per session, not per request: see ``pruner.formats.goose``.

The JSON Lines files of Goose before its database (``sessions/*.jsonl``) are not read: Goose moved
them into the database when it created it. ccusage (``rust/crates/ccusage/src/adapter/goose``,
ryoppippi/ccusage@5816e640e8824986f33427203da164b01394a161) reads the same counters from the same
database, and also looks in the macOS folders.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timezone
from typing import Any, Iterator

from ...errors import FormatError
from ...model import Session
from ..found import FileState, LogSession, file_state
from .database import Unreadable, LAST_S, connect, snapshot, text
from .base import Agent

DB_NAME = "sessions.db"
#: What ``--list`` and the row say for a session whose working folder is not recorded.
NO_DIRECTORY = "(no working_dir recorded)"


def _ns(value: Any) -> int:
    """Epoch nanoseconds of a Goose ``TIMESTAMP`` (SQLite's ``YYYY-MM-DD HH:MM:SS``, UTC), else 0."""
    try:
        moment = datetime.fromisoformat(text(value).replace(" ", "T").replace("Z", "+00:00"))
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    seconds = int(moment.timestamp())
    return seconds * 1_000_000_000 if 0 <= seconds <= LAST_S else 0


def _sessions(path: str, state: FileState) -> list[LogSession]:
    con = connect(path)
    try:
        sizes: dict[str, tuple[int, int]] = {}
        # a created_timestamp that is no whole number of seconds up to year 9999 (text, 2^63-1) is a damaged
        # field: left out of the session's time (which only tells a run whether to read it again)
        for sid, size, latest in con.execute(
                "SELECT session_id, sum(length(CAST(content_json AS BLOB)) + length(CAST(coalesce(metadata_json, '') "
                "AS BLOB))), max(CASE WHEN typeof(created_timestamp) = 'integer' AND created_timestamp BETWEEN 0 "
                f"AND {LAST_S} THEN created_timestamp END) FROM messages GROUP BY session_id"):
            sizes[text(sid)] = (int(size or 0), latest * 1_000_000_000 if isinstance(latest, int) else 0)
        out = []
        for sid, working, updated in con.execute("SELECT id, working_dir, updated_at FROM sessions ORDER BY id"):
            size, latest = sizes.get(text(sid), (0, 0))
            main = FileState(path=path, size=size, mtime_ns=max(latest, _ns(updated)), device=state.device,
                             inode=state.inode)
            out.append(LogSession("goose", text(working) or NO_DIRECTORY, main, entry=text(sid)))
        return out
    finally:
        con.close()


def find(root: str) -> list[LogSession]:
    path = os.path.join(root, DB_NAME)
    state = file_state(path)
    if state is None:
        return []
    try:
        return _sessions(path, state)
    except (sqlite3.Error, ValueError, TypeError, OverflowError):  # listed as the file: reading says why
        return [LogSession("goose", NO_DIRECTORY, state)]


def rows(found: LogSession) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """The session's ``sessions`` row, then its ``messages`` rows in Goose's order (time, then id)."""
    con = connect(found.main.path)
    try:
        yield from _session_rows(con, found)
    finally:
        con.close()


def _session_rows(con: sqlite3.Connection, found: LogSession) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``rows`` from one read transaction: messages Goose writes meanwhile are seen all or not at all."""
    with snapshot(con):
        cur = con.execute("SELECT * FROM sessions WHERE id = ?", (found.entry,))
        names = [d[0] for d in cur.description]
        head = cur.fetchone()
        if head is None:
            raise FormatError(f"session {found.entry!r} is no longer in the database", file=found.main.path,
                              path=f"sessions row {found.entry}")
        yield "sessions", found.entry, dict(zip(names, head))
        cur = con.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY timestamp, id", (found.entry,))
        names = [d[0] for d in cur.description]
        for row in cur:
            columns = dict(zip(names, row))
            yield "messages", str(columns.get("id")), columns


def read_entry(found: LogSession, bill_only: bool) -> tuple[Session, str] | None:
    from ...formats._goose_rows import read_rows  # msgspec is loaded only when billing

    try:
        return read_rows(rows(found), file=found.main.path, bill_only=bill_only)
    except sqlite3.Error as exc:
        raise Unreadable(f"cannot read the Goose database ({exc})", file=found.main.path,
                         path=f"sessions row {found.entry}") from None


def load(found: LogSession) -> Session:
    """Only a database that could not be listed reaches here: its error, named."""
    try:
        _sessions(found.main.path, found.main)  # the listing again: its error is the row's
    except sqlite3.Error as exc:
        raise Unreadable(f"cannot read the Goose database ({exc})", file=found.main.path) from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise FormatError(f"cannot list the Goose database's sessions ({exc})", file=found.main.path) from None
    raise FormatError("the Goose database lists no sessions it could read", file=found.main.path)


AGENT = Agent(name="goose", title="Goose", flag="goose", variable="GOOSE_PATH_ROOT", inner="sessions",
              default=os.path.join(".local", "share", "goose"), layout="~/.local/share/goose/sessions/sessions.db",
              find=find, format="goose", load=load, read_entry=read_entry, order=60,
              variable_inner=os.path.join("data", "sessions"), records_cache=False)
