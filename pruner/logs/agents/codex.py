"""Codex: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``$CODEX_HOME`` replaces ``~/.codex``).
Codex files by date, so a session's project is the ``cwd`` its first line records."""

from __future__ import annotations

import json
import os
import re

from ...model import Session
from ..found import LogSession, file_state
from ..names import clean
from .base import Agent

#: How much of a file's start is read for its working folder.
HEAD_BYTES = 64 * 1024
_SURROGATE = re.compile("[\ud800-\udfff]")


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


def find(root: str) -> list[LogSession]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.startswith("rollout-") and name.endswith(".jsonl"):
                state = file_state(os.path.join(dirpath, name))
                if state is not None:
                    out.append(LogSession("codex", first_cwd(state.path) or "(no cwd recorded)", state))
    return out


def read_usage(path: str) -> tuple[Session, str] | None:
    from ...formats.codex_usage import read_usage as read  # msgspec is loaded only when billing

    return read(path)


AGENT = Agent(name="codex", title="Codex", flag="codex", variable="CODEX_HOME", inner="sessions", default=".codex",
              layout="~/.codex/sessions/YYYY/MM/DD/*.jsonl", find=find, format="codex", read_usage=read_usage, order=20)
