"""What a folder listing finds: a file's state, one session's files, and the walking helpers the
agent modules (``pruner.logs.agents``) share to find them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .names import printable


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
    "" when it was found in this machine's own home folder.

    ``entry`` names a session that is one of many inside its main file (an agent's database holding
    every session: OpenCode's ``opencode.db``); "" for a session that is its file. Such a session's
    ``main`` is the database with the session's own size (the bytes of its records) and time (its
    latest record's), so a run sees which sessions of the database changed without reading it."""

    agent: str
    project: str
    main: FileState
    subagents: tuple[FileState, ...] = ()
    person: str = ""
    entry: str = ""

    @property
    def files(self) -> tuple[FileState, ...]:
        return (self.main, *self.subagents)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def key(self) -> str:
        """The session's identity across runs: its agent and main file (a name that is not UTF-8 with
        its undecodable bytes escaped, ``pruner.logs.names``), and its ``entry`` after ``#``."""
        key = f"{self.agent}:{printable(self.main.path)}"
        return f"{key}#{printable(self.entry)}" if self.entry else key


def file_state(path: str) -> FileState | None:
    """The state of a regular file (following a link), or None when it is not one or cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    return FileState(path=path, size=st.st_size, mtime_ns=st.st_mtime_ns, device=st.st_dev, inode=st.st_ino)


def files_in(folder: str, suffix: str) -> list[str]:
    """The entries of ``folder`` whose names end in ``suffix`` (hidden ones left out), in name order."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n.endswith(suffix) and not n.startswith(".")]


def subfolders(folder: str) -> list[str]:
    """The folders in ``folder`` (hidden ones left out), in name order."""
    try:
        return sorted(os.path.join(folder, n) for n in os.listdir(folder)
                      if not n.startswith(".") and os.path.isdir(os.path.join(folder, n)))
    except OSError:
        return []
