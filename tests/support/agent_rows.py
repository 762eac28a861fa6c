"""One session's row of ``pruner logs`` both ways: the agent's bill-only reader and its full reader.

The differential property of every agent with a bill-only reader (``Agent.read_usage``) is
``fast_row(...) == full_row(...)`` whenever the bill-only reader reads the file at all (it returns None
to leave a file it is unsure of to the full reader, which is always allowed)."""

from __future__ import annotations

import os
from pathlib import Path

from pruner.formats import load_session
from pruner.logs.agents import AGENTS
from pruner.logs.discover import FileState, LogSession
from pruner.logs.money import money_columns, usage_columns
from pruner.logs.row import damaged_lines, recorded_cwd, session_facts


def found(agent: str, path: Path | str) -> LogSession:
    st_ = os.stat(path)
    return LogSession(agent=agent, project="p", main=FileState(str(path), st_.st_size, st_.st_mtime_ns))


def full_row(agent: str, path: Path | str) -> dict:
    """The row's content columns as the agent's full reader makes them (its error when it refuses)."""
    load = AGENTS[agent].load
    try:
        s = load(found(agent, path)) if load is not None else load_session(path)
    except Exception as exc:
        return {"error": str(exc) if hasattr(exc, "file") else f"{path}: {type(exc).__name__}: {exc}"}
    return {"format": s.source_format, "name": s.name, "cwd": recorded_cwd(s), "damaged_lines": damaged_lines(s),
            **session_facts(s), **money_columns(s)}


def fast_row(agent: str, path: Path | str) -> dict | None:
    """The same columns from the bill-only reader, or None when it leaves the file to the full reader."""
    read = AGENTS[agent].read_usage
    assert read is not None, agent
    got = read(str(path))
    if got is None:
        return None
    s, _ = got
    money, facts = usage_columns(s)
    return {"format": s.source_format, "name": s.name, "cwd": recorded_cwd(s), "damaged_lines": damaged_lines(s),
            **facts, **money}
