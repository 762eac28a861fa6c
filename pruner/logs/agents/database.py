"""An agent's SQLite database, opened as ``pruner logs`` opens every one: read-only, never written."""

from __future__ import annotations

import os
import sqlite3
from typing import Any
from urllib.parse import quote


def connect(path: str) -> sqlite3.Connection:
    """``path`` opened read-only (an SQLite URI with ``mode=ro``: the agent's database is never written,
    and a missing file is an error, not a new empty database), its text read as bytes."""
    con = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True)
    con.text_factory = bytes
    return con


def text(value: Any) -> str:
    """A column read as bytes, as text (an undecodable byte shown as U+FFFD: a name, never data)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else ""
