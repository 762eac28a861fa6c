"""Claude Code: ``~/.claude/projects/<project>/<session>.jsonl`` (``$CLAUDE_CONFIG_DIR`` replaces
``~/.claude``), with the subagent files it writes beside a session
(``<project>/<session>/subagents/agent-*.jsonl``), which the Claude Code reader loads with it: they
belong to that session and are never listed as sessions of their own. The project is the folder
Claude Code filed the session under (its encoded working directory)."""

from __future__ import annotations

import os

from ...model import Session
from ..found import LogSession, file_state, files_in, subfolders
from .base import Agent


def find(root: str) -> list[LogSession]:
    out = []
    for project_dir in subfolders(root):
        project = os.path.basename(project_dir)
        for path in files_in(project_dir, ".jsonl"):
            main = file_state(path)
            if main is None:
                continue
            beside = os.path.join(path[: -len(".jsonl")], "subagents")  # what the Claude Code reader loads with it
            subs = tuple(s for s in (file_state(p) for p in files_in(beside, ".jsonl"))
                         if s is not None and os.path.basename(s.path).startswith("agent-"))
            out.append(LogSession("claude_code", project, main, subs))
    return out


def read_usage(path: str) -> tuple[Session, str] | None:
    from ...formats.claude_code_usage import read_usage as read  # msgspec is loaded only when billing

    return read(path)


AGENT = Agent(name="claude_code", title="Claude Code", flag="claude", variable="CLAUDE_CONFIG_DIR",
              inner="projects", default=".claude", layout="~/.claude/projects/<project>/*.jsonl", find=find,
              format="claude_code", read_usage=read_usage, order=10)
