"""OpenCode's storage written as OpenCode writes it, for the fixtures and the generated tests.

The tables are those of ``packages/opencode/src/session/session.sql.ts`` and
``packages/opencode/src/project/project.sql.ts`` (OpenCode, MIT;
anomalyco/opencode@063e8306d9895af9bdd175306cfa4fa3291fd83a),
as drizzle creates them (``migration/*/migration.sql``): ``data`` is the message or part JSON without
its ids, which are columns. The older layout is one JSON file per session, message and part under
``storage/`` (``storage/json-migration.ts``), each with its ids.

A session here is ``{"id", "title", "directory", "parent": id or None, "messages": [{"id", "time",
"data": {...}, "parts": [{"id", "data": {...}}]}]}``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text, icon_url text,
  icon_color text, time_created integer NOT NULL, time_updated integer NOT NULL, time_initialized integer,
  sandboxes text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL REFERENCES project(id) ON DELETE cascade,
  workspace_id text, parent_id text, slug text NOT NULL, directory text NOT NULL, path text, title text NOT NULL,
  version text NOT NULL, share_url text, summary_additions integer, summary_deletions integer,
  summary_files integer, summary_diffs text, cost real DEFAULT 0 NOT NULL,
  tokens_input integer DEFAULT 0 NOT NULL, tokens_output integer DEFAULT 0 NOT NULL,
  tokens_reasoning integer DEFAULT 0 NOT NULL, tokens_cache_read integer DEFAULT 0 NOT NULL,
  tokens_cache_write integer DEFAULT 0 NOT NULL, revert text, permission text, goal text, agent text, model text,
  time_created integer NOT NULL, time_updated integer NOT NULL, time_compacting integer, time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL REFERENCES session(id) ON DELETE cascade,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL REFERENCES message(id) ON DELETE cascade,
  session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX session_project_idx ON session (project_id);
CREATE INDEX session_parent_idx ON session (parent_id);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
"""


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def write_db(path: Path, sessions: list[dict[str, Any]], *, project: str = "prj_1") -> Path:
    """An ``opencode.db`` holding ``sessions`` (a ``data`` given as text is stored as it is: damage)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    try:
        con.executescript(SCHEMA)
        con.execute("INSERT INTO project VALUES (?, ?, 'git', NULL, NULL, NULL, 1767312000000, 1767312000000, NULL, "
                    "'[]')", (project, "/work/app"))
        for s in sessions:
            times = [m["time"] for m in s["messages"]] or [1767312000000]
            con.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, "
                        "time_created, time_updated) VALUES (?, ?, ?, ?, ?, ?, '1.2.0', ?, ?)",
                        (s["id"], project, s.get("parent"), s["id"][-6:], s["directory"], s["title"], min(times),
                         max(times)))
            for m in s["messages"]:
                con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                            (m["id"], s["id"], m["time"], m["time"], _json(m["data"])))
                for p in m["parts"]:
                    con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                                (p["id"], m["id"], s["id"], m["time"], m["time"], _json(p["data"])))
        con.commit()
    finally:
        con.close()
    return path


def write_files(root: Path, sessions: list[dict[str, Any]], *, project: str = "prj_1") -> None:
    """The older layout under ``root/storage`` (each file with its ids, as OpenCode wrote them)."""
    storage = root / "storage"
    for s in sessions:
        info = {"id": s["id"], "projectID": project, "directory": s["directory"], "title": s["title"],
                "version": "0.15.0", "time": {"created": s["messages"][0]["time"] if s["messages"] else 0}}
        if s.get("parent"):
            info["parentID"] = s["parent"]
        (storage / "session" / project).mkdir(parents=True, exist_ok=True)
        (storage / "session" / project / f"{s['id']}.json").write_text(_json(info), encoding="utf-8")
        for m in s["messages"]:
            folder = storage / "message" / s["id"]
            folder.mkdir(parents=True, exist_ok=True)
            data = m["data"] if isinstance(m["data"], str) else {"id": m["id"], "sessionID": s["id"], **m["data"]}
            (folder / f"{m['id']}.json").write_text(_json(data), encoding="utf-8")
            for p in m["parts"]:
                pfolder = storage / "part" / m["id"]
                pfolder.mkdir(parents=True, exist_ok=True)
                pdata = p["data"] if isinstance(p["data"], str) else {
                    "id": p["id"], "sessionID": s["id"], "messageID": m["id"], **p["data"]}
                (pfolder / f"{p['id']}.json").write_text(_json(pdata), encoding="utf-8")
