"""One session per real file, whatever the number of paths to it.

People link ``~/.claude`` or a project folder into several places, hard-link a session file, or
mount a folder twice; the folder listing then reaches one session file by several paths, and a
row per path bills the session once per path. A file is the same file when it has the same
device and inode (what ``os.path.samefile`` compares), not when its resolved path is the same:
the resolved path tells a symbolic link from its target, but two hard links or a bind mount
resolve to different paths and are still one file. The inode is used only within one listing
(an agent that rewrites a file by a rename gives it a new one), never stored.

Of the paths to one file, the session keeps one, the same whichever of them a run lists: the
path that is its own resolved path (the file's real place, when it is listed), else the first
in the agents' order and then path order. Its key, project and subagent files are that path's.
"""

from __future__ import annotations

import os
from typing import Iterable, Protocol, TypeVar


class _MainFile(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def device(self) -> int: ...

    @property
    def inode(self) -> int: ...


class _Session(Protocol):
    """What ``distinct`` reads of a ``pruner.logs.discover.LogSession`` (named by shape: discover
    imports this module to list each session once)."""

    @property
    def main(self) -> _MainFile: ...

    @property
    def entry(self) -> str: ...


S = TypeVar("S", bound=_Session)


def _preferred(session: _Session, order: int) -> tuple[bool, int]:
    path = session.main.path
    return os.path.realpath(path) != path, order


def distinct(sessions: Iterable[S]) -> list[S]:
    """``sessions`` with one per main file (device and inode), in their order (see the module)."""
    listed = list(sessions)
    groups: dict[tuple[int, int, str], list[int]] = {}
    for n, s in enumerate(listed):  # the sessions inside one database are one per entry
        groups.setdefault((s.main.device, s.main.inode, s.entry) if s.main.inode else (-1, n, ""), []).append(n)
    keep = set()
    for members in groups.values():
        keep.add(members[0] if len(members) == 1 else min(members, key=lambda n: _preferred(listed[n], n)))
    return [s for n, s in enumerate(listed) if n in keep]


def same_file(path: str, identities: set[tuple[int, int]]) -> bool:
    """Whether ``path`` is now one of the files ``identities`` (device, inode) name."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return (st.st_dev, st.st_ino) in identities
