"""Goose's database written as Goose writes it, for the fixtures and the generated tests.

The tables are those Goose creates (``create_schema`` in ``crates/goose/src/session/session_manager.rs``,
Goose, Apache-2.0; block/goose@dbec1655c17720cb591291603f1337ed7856afbd): ``schema_version``,
``sessions`` and ``messages`` (``content_json`` the message's content list, ``metadata_json`` its
visibility, ``created_timestamp`` epoch seconds).

A session here is ``{"id", "name", "working_dir", "updated_at", "provider", "model", "tokens":
{column: value}, "messages": [{"role", "created", "content": [...] or damaged text}]}``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version (version) VALUES (9);
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
  user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
  accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
  schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT,
  tenant_id TEXT, user_id TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT,
  session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL, content_json TEXT NOT NULL,
  created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER,
  metadata_json TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);
CREATE INDEX idx_messages_timestamp ON messages(timestamp);
CREATE INDEX idx_sessions_updated ON sessions(updated_at DESC);
"""


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def write_db(path: Path, sessions: list[dict[str, Any]]) -> Path:
    """A ``sessions.db`` holding ``sessions`` (a ``content`` given as text is stored as it is: damage)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    try:
        con.executescript(SCHEMA)
        for s in sessions:
            tokens = s.get("tokens", {})
            config = s.get("model_config",
                           {"model_name": s["model"], "context_limit": 200000} if s.get("model") else None)
            con.execute("INSERT INTO sessions (id, name, working_dir, created_at, updated_at, extension_data, "
                        "total_tokens, input_tokens, output_tokens, accumulated_total_tokens, "
                        "accumulated_input_tokens, accumulated_output_tokens, provider_name, model_config_json) "
                        "VALUES (?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?, ?, ?)",
                        (s["id"], s["name"], s["working_dir"], s["updated_at"], s["updated_at"],
                         tokens.get("total_tokens"), tokens.get("input_tokens"), tokens.get("output_tokens"),
                         tokens.get("accumulated_total_tokens"), tokens.get("accumulated_input_tokens"),
                         tokens.get("accumulated_output_tokens"), s.get("provider"),
                         None if config is None else _json(config)))
            for k, m in enumerate(s["messages"]):
                stamp = f"2026-01-02 00:{k // 60:02d}:{k % 60:02d}"
                con.execute("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, "
                            "timestamp, metadata_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (m.get("id"), s["id"], m["role"], _json(m["content"]), m["created"], stamp,
                             _json({"userVisible": True, "agentVisible": True})))
        con.commit()
    finally:
        con.close()
    return path
