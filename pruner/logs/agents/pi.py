"""Pi: ``~/.pi/agent/sessions/<project>/*.jsonl`` (``$PI_CODING_AGENT_DIR`` replaces ``~/.pi/agent``);
the project is the folder Pi filed the session under (its encoded working directory)."""

from __future__ import annotations

import os

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


AGENT = Agent(name="pi", title="Pi", flag="pi", variable="PI_CODING_AGENT_DIR", inner="sessions",
              default=os.path.join(".pi", "agent"), layout="~/.pi/agent/sessions/<project>/*.jsonl", find=find,
              format="pi", order=30)
