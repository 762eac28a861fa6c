"""The subagent files Claude Code keeps beside a session: ``X.jsonl`` and ``X/subagents/agent-*.jsonl``.

Newer Claude Code writes each subagent's conversation to its own file in a
folder named after the session, instead of as sidechain lines in the session
file. Loading the session from its path reads those files too, so its bill
and replay hold every chain, as they do for a file with sidechain lines.
Each becomes one of ``Session.subagents``, ``metadata["chain"]`` its
``agentId`` and ``metadata["parent_call"]`` the main chain's Task call whose
result names that agent; a file whose agent is already among the session's
subagents is not read twice. A damaged subagent file is the error it is
(it names its own path), as for any other file.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Callable

from ..model import Session
from ._claude_chains import agent_results

#: Where a session's subagent files are, relative to ``X.jsonl``: ``X/subagents/agent-<id>.jsonl``.
FOLDER = "subagents"
PATTERN = "agent-*.jsonl"


def subagent_paths(path: str | os.PathLike[str]) -> list[Path]:
    """The subagent files beside the session file ``path``, sorted by name (none: ``[]``)."""
    session_file = Path(path)
    folder = session_file.with_suffix("") / FOLDER
    if session_file.suffix != ".jsonl" or not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(PATTERN) if p.is_file())


def with_subagent_files(session: Session, path: str | os.PathLike[str], load: Callable[[Path], Session]) -> Session:
    """``session`` with the subagent files beside ``path`` among its subagents (``load`` reads one)."""
    if session.source_format != "claude_code":
        return session
    paths = subagent_paths(path)
    if not paths:
        return session
    known = {str(s.metadata.get("agent_id") or s.metadata.get("chain")) for s in session.subagents}
    by_agent = agent_results(session.messages)
    added = []
    for p in paths:
        sub = load(p)
        agent = str((sub.metadata.get("subagent_file") or {}).get("agent_id") or p.stem.removeprefix("agent-"))
        if agent in known:
            continue
        known.add(agent)
        meta = {**sub.metadata, "chain": agent, "agent_id": agent, "file": str(p)}
        if agent in by_agent:
            meta["parent_call"] = by_agent[agent]
        added.append(replace(sub, metadata=meta, subagents=()))
    return replace(session, subagents=session.subagents + tuple(added)) if added else session
