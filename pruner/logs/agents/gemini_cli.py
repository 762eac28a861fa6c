"""Gemini CLI: ``~/.gemini/tmp/<project>/chats/*.json`` (``$GEMINI_CLI_HOME`` replaces ``~``: it holds
``.gemini``); the project is Gemini CLI's project folder."""

from __future__ import annotations

import os

from ...model import Session
from ..found import LogSession, file_state, files_in, subfolders
from .base import Agent


def find(root: str) -> list[LogSession]:
    out = []
    for project_dir in subfolders(root):
        for path in files_in(os.path.join(project_dir, "chats"), ".json"):
            state = file_state(path)
            if state is not None:
                out.append(LogSession("gemini_cli", os.path.basename(project_dir), state))
    return out


def read_usage(path: str) -> tuple[Session, str] | None:
    from ...formats.gemini_cli_usage import read_usage as read  # msgspec is loaded only when billing

    return read(path)


AGENT = Agent(name="gemini_cli", title="Gemini CLI", flag="gemini", variable="GEMINI_CLI_HOME",
              inner=os.path.join(".gemini", "tmp"), default="", layout="~/.gemini/tmp/<project>/chats/*.json",
              find=find, format="gemini_cli", read_usage=read_usage, order=40)
