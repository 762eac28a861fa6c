"""Where this machine's coding agents keep their session logs, and which files are one session.

Each agent has one folder, found the way the agent itself finds it: an option
of ours first, then the variable the agent honours, then its default under the
home folder.

=============  =========================================  ==========================================
agent          default folder                             variable (what it replaces)
=============  =========================================  ==========================================
claude_code    ``~/.claude/projects/<project>/*.jsonl``   ``CLAUDE_CONFIG_DIR`` (``~/.claude``)
codex          ``~/.codex/sessions/YYYY/MM/DD/*.jsonl``   ``CODEX_HOME`` (``~/.codex``)
pi             ``~/.pi/agent/sessions/<project>/*.jsonl`` ``PI_CODING_AGENT_DIR`` (``~/.pi/agent``)
gemini_cli     ``~/.gemini/tmp/<project>/chats/*.json``   ``GEMINI_CLI_HOME`` (``~``: it holds ``.gemini``)
=============  =========================================  ==========================================

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

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Mapping

from .aliases import distinct
from .names import clean, printable

AGENTS = ("claude_code", "codex", "pi", "gemini_cli")

#: agent -> (variable it honours, the folder under it that holds the sessions, default base under HOME)
_LOCATIONS = {
    "claude_code": ("CLAUDE_CONFIG_DIR", "projects", ".claude"),
    "codex": ("CODEX_HOME", "sessions", ".codex"),
    "pi": ("PI_CODING_AGENT_DIR", "sessions", os.path.join(".pi", "agent")),
    "gemini_cli": ("GEMINI_CLI_HOME", os.path.join(".gemini", "tmp"), ""),
}
#: How much of a file's start is read for its first timestamp and working folder.
HEAD_BYTES = 64 * 1024
_SURROGATE = re.compile("[\ud800-\udfff]")
_TIMESTAMP = re.compile(r'"(?:timestamp|startTime)"\s*:\s*"([0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]{0,40})"')


@dataclass(frozen=True)
class FileState:
    """One file as the folder listing saw it (the digest is computed only when needed).

    ``device`` and ``inode`` say which file it is, whatever the path to it (``pruner.logs.aliases``);
    they are not stored: an agent that rewrites a file by a rename gives it a new inode."""

    path: str
    size: int
    mtime_ns: int
    device: int = field(default=0, compare=False)
    inode: int = field(default=0, compare=False)


@dataclass(frozen=True)
class LogSession:
    """One session's files: the main file first, then its subagent files (path order).

    ``person``: the sub-folder of a team's shared folder it was found under (``pruner.logs.homes``),
    "" when it was found in this machine's own home folder."""

    agent: str
    project: str
    main: FileState
    subagents: tuple[FileState, ...] = ()
    person: str = ""

    @property
    def files(self) -> tuple[FileState, ...]:
        return (self.main, *self.subagents)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def key(self) -> str:
        """The session's identity across runs: its agent and main file (a name that is not UTF-8 with
        its undecodable bytes escaped, ``pruner.logs.names``)."""
        return f"{self.agent}:{printable(self.main.path)}"


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
        """First and last modification day (UTC) of its files, or None when it holds none."""
        times = [f.mtime_ns for s in self.sessions for f in s.files]
        if not times:
            return None
        return _day(min(times)), _day(max(times))


def _day(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).strftime("%Y-%m-%d")


def agent_roots(env: Mapping[str, str], overrides: Mapping[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """agent -> (folder holding its sessions, how it was chosen)."""
    overrides = overrides or {}
    home = env.get("HOME") or os.path.expanduser("~")
    roots = {}
    for agent, (variable, inner, default) in _LOCATIONS.items():
        if overrides.get(agent):
            roots[agent] = (os.path.abspath(os.path.expanduser(overrides[agent])), f"--{agent.replace('_', '-')}-dir")
        elif env.get(variable):
            roots[agent] = (os.path.join(os.path.expanduser(env[variable]), inner), f"${variable}")
        else:
            roots[agent] = (os.path.join(home, default, inner) if default else os.path.join(home, inner), "default")
    return roots


def _state(path: str) -> FileState | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    return FileState(path=path, size=st.st_size, mtime_ns=st.st_mtime_ns, device=st.st_dev, inode=st.st_ino)


def _files(folder: str, suffix: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n.endswith(suffix) and not n.startswith(".")]


def _subfolders(folder: str) -> list[str]:
    try:
        return sorted(os.path.join(folder, n) for n in os.listdir(folder)
                      if not n.startswith(".") and os.path.isdir(os.path.join(folder, n)))
    except OSError:
        return []


def _claude(root: str) -> list[LogSession]:
    out = []
    for project_dir in _subfolders(root):
        project = os.path.basename(project_dir)
        for path in _files(project_dir, ".jsonl"):
            main = _state(path)
            if main is None:
                continue
            beside = os.path.join(path[: -len(".jsonl")], "subagents")  # what the Claude Code reader loads with it
            subs = tuple(s for s in (_state(p) for p in _files(beside, ".jsonl"))
                         if s is not None and os.path.basename(s.path).startswith("agent-"))
            out.append(LogSession("claude_code", project, main, subs))
    return out


def first_cwd(path: str) -> str:
    """The working folder a Codex rollout's first line records ("" when it records none)."""
    try:
        with open(path, "rb") as fh:
            line = fh.readline(HEAD_BYTES)
        head = json.loads(line)
    except (OSError, ValueError, RecursionError):
        return ""
    payload = head.get("payload") if isinstance(head, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) else head.get("cwd") if isinstance(head, dict) else None
    if not isinstance(cwd, str):
        return ""
    # A lone surrogate escape ("\ud800", half of a character a writer cut) is no text: U+FFFD, as the
    # reader itself replaces it in the session (``pruner.formats.repairing``).
    return cwd if clean(cwd) else _SURROGATE.sub("\ufffd", cwd)


def _codex(root: str) -> list[LogSession]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.startswith("rollout-") and name.endswith(".jsonl"):
                state = _state(os.path.join(dirpath, name))
                if state is not None:
                    out.append(LogSession("codex", first_cwd(state.path) or "(no cwd recorded)", state))
    return out


def _pi(root: str) -> list[LogSession]:
    out = []
    for project_dir in _subfolders(root):
        for path in _files(project_dir, ".jsonl"):
            state = _state(path)
            if state is not None:
                out.append(LogSession("pi", os.path.basename(project_dir), state))
    return out


def _gemini(root: str) -> list[LogSession]:
    out = []
    for project_dir in _subfolders(root):
        for path in _files(os.path.join(project_dir, "chats"), ".json"):
            state = _state(path)
            if state is not None:
                out.append(LogSession("gemini_cli", os.path.basename(project_dir), state))
    return out


_FINDERS = {"claude_code": _claude, "codex": _codex, "pi": _pi, "gemini_cli": _gemini}


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


def _in_range(session: LogSession, since: str | None, until: str | None) -> bool:
    """Whether the session's days overlap ``since``..``until`` (inclusive YYYY-MM-DD days, UTC).

    Its days are the ones it records: its first day the first timestamp of its main file, its last the
    latest last timestamp of its files (a copied or touched file keeps the session's dates; its
    modification day stands in only when it records none)."""
    recorded = [t for t in (last_timestamp(f.path) for f in session.files) if t]
    last = max(recorded)[:10] if recorded else _day(max(f.mtime_ns for f in session.files))
    if since and last < since:
        return False
    if until:
        first = (first_timestamp(session.main.path) or last)[:10]
        if first > until:
            return False
    return True


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
    listed = {agent: _FINDERS[agent](roots[agent][0]) if os.path.isdir(roots[agent][0]) else [] for agent in agents}
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
