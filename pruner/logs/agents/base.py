"""What an agent module declares: where the agent keeps its sessions and how to list and read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ...model import Session
from ..found import LogSession

#: A bill-only reader: the session's skeleton (model, usage, times; no text) and the file's SHA-256, or
#: None when the file needs the full reader (``pruner.formats.claude_code_usage`` is the model).
UsageReader = Callable[[str], Optional[tuple[Session, str]]]


@dataclass(frozen=True)
class Agent:
    """One coding agent whose logs ``pruner logs`` reads.

    Its folder is found as the agent finds it: ``--<flag>-dir`` first, then ``$<variable>`` joined with
    ``variable_inner`` (``inner`` when empty), then ``~/<default>/<inner>``. ``find(folder)`` lists its
    sessions there (a session is one main file and the subagent files the agent writes beside it, or one
    session inside a database, ``read_entry``). ``read_usage``, when the agent
    has one, reads a single-file session for the bill only; every other reading is the full importer
    of ``format`` (``pruner.formats``)."""

    name: str  # the table's ``agent`` column and ``--agent``'s choice
    title: str  # how a person names it: "Claude Code"
    flag: str  # --<flag>-dir
    variable: str  # the environment variable the agent honours for its own folder
    inner: str  # the folder under that variable's folder holding the sessions
    default: str  # the variable's default folder under HOME ("" is HOME itself)
    layout: str  # where a session file lives, for people: "~/.claude/projects/<project>/*.jsonl"
    find: Callable[[str], list[LogSession]]
    format: str  # the registered transcript format its files are read with
    read_usage: UsageReader | None = None
    #: The full importer of one listed session, when its main file is not one transcript file that
    #: ``pruner.formats.load_session`` reads (a folder of JSON files, a database row); None: that.
    load: Callable[[LogSession], Session] | None = None
    #: The reader of one listed session inside a file of many (``LogSession.entry``, a database row):
    #: ``(session, SHA-256 of its records)``; with ``bill_only`` it may return the bill's skeleton (as
    #: ``read_usage``) or None when unsure, and the full reading follows.
    read_entry: Callable[[LogSession, bool], Optional[tuple[Session, str]]] | None = None
    order: int = 100  # where it is listed (registration order)
    #: False: the agent's logs record no cache reads or writes (Goose), so its rows' cache token cells are
    #: null (unknown), never 0.
    records_cache: bool = True
    #: The folder under ``$<variable>`` holding the sessions when it is not ``inner`` (Goose: its
    #: ``$GOOSE_PATH_ROOT/data/sessions`` against ``~/.local/share/goose/sessions``); "" is ``inner``.
    variable_inner: str = ""
    #: True: ``find`` also looks beside its folder (Qwen Code's older layout in ``tmp`` beside ``projects``),
    #: so it is called even where the folder itself is missing.
    finds_beside: bool = False
