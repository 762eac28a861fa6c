"""Pi: ``~/.pi/agent/sessions/<project>/*.jsonl`` (``$PI_CODING_AGENT_DIR`` replaces ``~/.pi/agent``);
the project is the folder Pi filed the session under (its encoded working directory)."""

from __future__ import annotations

import os

from ...model import Session
from ..found import LogSession, file_state, files_in, subfolders
from .base import Agent


def find(root: str) -> list[LogSession]:
    out = []
    for project_dir in subfolders(root):
        for path in files_in(project_dir, ".jsonl"):
            state = file_state(path)
            if state is not None:
                out.append(LogSession("pi", os.path.basename(project_dir), state))
    return out


def read_usage(path: str) -> tuple[Session, str] | None:
    from ...formats.pi_usage import read_usage as read  # msgspec is loaded only when billing

    return read(path)


AGENT = Agent(name="pi", title="Pi", flag="pi", variable="PI_CODING_AGENT_DIR", inner="sessions",
              default=os.path.join(".pi", "agent"), layout="~/.pi/agent/sessions/<project>/*.jsonl", find=find,
              format="pi", read_usage=read_usage, order=30)
