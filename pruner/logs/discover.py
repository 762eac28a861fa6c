"""Where this machine's coding agents keep their session logs, and which files are one session.

Each agent has one folder, found the way the agent itself finds it: an option
of ours first, then the variable the agent honours, then its default under the
home folder. The agents, their folders and how their sessions are listed are
``pruner.logs.agents`` (one module each); ``pruner logs --list`` prints them.

A session is one main file plus, for Claude Code, the subagent files beside it
(``<project>/<session>/subagents/agent-*.jsonl``, which the Claude Code reader loads
with it): they belong to that session and are never listed as sessions of their
own. The project is the folder the agent filed the session under (Claude
Code's and Pi's encoded working directory, Gemini CLI's project folder); Codex
files by date, so its project is the ``cwd`` its first line records.

>>> agent_roots({"HOME": "/h", "CODEX_HOME": "/c"})["codex"]
('/c/sessions', '$CODEX_HOME')
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Mapping

from .agents import AGENTS as AGENT_REGISTRY
from .aliases import distinct
from .found import FileState, LogSession

__all__ = ["AGENTS", "FileState", "Location", "LogSession", "agent_roots", "discover", "first_timestamp",
           "last_timestamp"]

#: Every registered agent's name, in listing order (``pruner.logs.agents``).
AGENTS: tuple[str, ...] = tuple(AGENT_REGISTRY)

#: How much of a file's start (or end) is read for its first (or last) timestamp.
HEAD_BYTES = 64 * 1024
_TIMESTAMP = re.compile(r'"(?:timestamp|startTime)"\s*:\s*"([0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]{0,40})"')


@dataclass(frozen=True)
class Location:
    """One agent's folder and the sessions found in it."""

    agent: str
    folder: str
    how: str  # "--claude-dir", "$CLAUDE_CONFIG_DIR" or "default"
    sessions: tuple[LogSession, ...] = field(default=())

    @property
    def files(self) -> int:
        return sum(len(s.files) for s in self.sessions)

    @property
    def size(self) -> int:
        return sum(s.size for s in self.sessions)

    def date_range(self) -> tuple[str, str] | None:
        """First and last day (UTC) its sessions record (``session_days``), or None when it holds none."""
        days = [session_days(s) for s in self.sessions]
        if not days:
            return None
        return min(first for first, _ in days), max(last for _, last in days)


def _day(ns: int) -> str:
    try:
        return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).strftime("%Y-%m-%d")
    except (OverflowError, ValueError, OSError):  # a time past the calendar (a damaged record's): no day
        return "0000-00-00"


def agent_roots(env: Mapping[str, str], overrides: Mapping[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """agent -> (folder holding its sessions, how it was chosen)."""
    overrides = overrides or {}
    home = env.get("HOME") or os.path.expanduser("~")
    roots = {}
    for agent, spec in AGENT_REGISTRY.items():
        if overrides.get(agent):
            roots[agent] = (os.path.abspath(os.path.expanduser(overrides[agent])), f"--{spec.flag}-dir")
        elif env.get(spec.variable):
            roots[agent] = (os.path.join(os.path.expanduser(env[spec.variable]), spec.variable_inner or spec.inner),
                            f"${spec.variable}")
        else:
            base = os.path.join(home, spec.default) if spec.default else home
            roots[agent] = (os.path.join(base, spec.inner), "default")
    return roots


def first_timestamp(path: str) -> str | None:
    """The first ISO timestamp in a file's first ``HEAD_BYTES`` (its start), or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    m = _TIMESTAMP.search(head)
    return m.group(1) if m else None


def last_timestamp(path: str) -> str | None:
    """The last ISO timestamp in a file's last ``HEAD_BYTES`` (its end), or None."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - HEAD_BYTES))
            tail = fh.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    found = _TIMESTAMP.findall(tail)
    return found[-1] if found else None


def session_days(session: LogSession, *, first: bool = True) -> tuple[str, str]:
    """The session's first and last day (YYYY-MM-DD, UTC), the ones it records: its first day the first
    timestamp of its main file, its last the latest last timestamp of its files (a copied or touched
    file keeps the session's dates; its modification day stands in only when it records none).
    ``first=False`` leaves the first day unread (the last day in its place)."""
    # A session inside a database (``LogSession.entry``) has its records' time as its file's, and the
    # database's bytes are no session's: its days are that time's.
    recorded = [t for t in (last_timestamp(f.path) for f in session.files) if t] if not session.entry else []
    last = max(recorded)[:10] if recorded else _day(max(f.mtime_ns for f in session.files))
    if not first:
        return last, last
    start = ((first_timestamp(session.main.path) if not session.entry else None) or last)[:10]
    return start, last


def _in_range(session: LogSession, since: str | None, until: str | None) -> bool:
    """Whether the session's days (``session_days``) overlap ``since``..``until`` (inclusive YYYY-MM-DD
    days, UTC)."""
    first, last = session_days(session, first=bool(until))
    if since and last < since:
        return False
    return not (until and first > until)


def discover(env: Mapping[str, str] | None = None, *, overrides: Mapping[str, str] | None = None,
             agents: tuple[str, ...] = AGENTS, since: str | None = None, until: str | None = None,
             project: str | None = None, one_per_file: bool = True) -> list[Location]:
    """Every agent folder (found or not) and its sessions, filtered by day and project.

    ``project`` keeps the sessions whose project contains it (case-sensitive). ``one_per_file``:
    one session per real file (``pruner.logs.aliases``); False lists every path (a benchmark whose
    sessions are hard links of a few files, to save disk).
    """
    env = os.environ if env is None else env
    roots = agent_roots(env, overrides)
    listed = {agent: AGENT_REGISTRY[agent].find(roots[agent][0])
              if os.path.isdir(roots[agent][0]) or AGENT_REGISTRY[agent].finds_beside else [] for agent in agents}
    # One session per real file, whatever the number of paths to it, chosen before any filter so a
    # session keeps its key (and its project) whichever filters a run is given.
    every = [s for agent in agents for s in listed[agent]]
    kept = set(distinct(every) if one_per_file else every)
    found = []
    for agent in agents:
        folder, how = roots[agent]
        sessions = [s for s in listed[agent] if s in kept and (not project or project in s.project)
                    and _in_range(s, since, until)]
        found.append(Location(agent, folder, how, tuple(sessions)))
    return found
