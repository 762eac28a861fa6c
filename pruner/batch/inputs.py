"""Which files a batch reads: files, directories (recursively) and glob patterns.

A file named on the command line is always read, whatever its name, and so is
every file a glob pattern matches. Inside a directory only files named like
transcripts (``.json``, ``.jsonl``, ``.ndjson``, ``.traj``) are read, and hidden
files and folders are passed over, so a README or a licence next to the logs is
not reported as a broken transcript; the summary says how many were passed
over, and so are named pipes, devices and sockets (reading one could wait
forever). An input that names nothing, or names a pipe or a device, is an error:
a typo must not shrink a batch silently. The output folder's own files (its
manifest, its lock, its tables) are never inputs, even when an input names it.
Paths are made absolute (workers on other machines see the same
shared paths), each file is listed once, in sorted order.
"""

from __future__ import annotations

import glob
import os
import stat
from dataclasses import dataclass
from typing import Iterable

from ..errors import ConfigurationError

TRANSCRIPT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".traj")
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class InputFile:
    path: str  # absolute
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Inputs:
    files: tuple[InputFile, ...]
    passed_over: int  # files inside directories not named like transcripts, hidden, or not regular files


def _inside(path: str, folder: str | None) -> bool:
    return folder is not None and (path == folder or path.startswith(folder + os.sep))


def _kind(path: str) -> str | None:
    """What ``path`` is when it is neither a regular file nor a folder (None when it is one, or gone)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"


def _walk(folder: str, exclude: str | None, found: list[str]) -> int:
    if _inside(folder, exclude):  # the batch folder itself, or a folder inside it
        return 0
    passed_over = 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _inside(os.path.join(root, d), exclude))
        for name in sorted(names):
            path = os.path.join(root, name)
            if name.startswith(".") or not name.lower().endswith(TRANSCRIPT_SUFFIXES) or not os.path.isfile(path):
                passed_over += 1  # hidden, not named like a transcript, or a pipe / device / socket
            else:
                found.append(path)
    return passed_over


def expand_inputs(inputs: Iterable[str], *, exclude: str | None = None) -> Inputs:
    """The files ``inputs`` name; ``exclude`` (the output folder) is never read."""
    exclude = os.path.abspath(exclude) if exclude else None
    found: list[str] = []
    passed_over = 0
    for given in inputs:
        path = os.path.abspath(given)
        if os.path.isdir(path):
            passed_over += _walk(path, exclude, found)
        elif os.path.isfile(path):
            if exclude is not None and path.startswith(exclude + os.sep):
                raise ConfigurationError(f"{given}: this file belongs to the batch folder the results go to; a "
                                         "batch folder's own files are never inputs")
            found.append(path)
        elif _kind(path):
            raise ConfigurationError(f"{given}: this is {_kind(path)}, not a file; give transcript files or "
                                     "folders")
        elif _GLOB_CHARS & set(given):
            matches = sorted(glob.glob(given, recursive=True))
            if not matches:
                raise ConfigurationError(f"{given}: the pattern matches no file")
            for match in matches:
                match = os.path.abspath(match)
                if os.path.isdir(match):
                    passed_over += _walk(match, exclude, found)
                elif os.path.isfile(match) and not _inside(match, exclude):
                    found.append(match)
                elif not _inside(match, exclude):
                    passed_over += 1  # a pipe, a device or a socket the pattern matched
        else:
            raise ConfigurationError(f"{given}: no such file or directory")
    files: dict[str, InputFile] = {}
    seen_real: set[str] = set()
    for path in sorted(found):
        real = os.path.realpath(path)
        if path in files or real in seen_real:  # named twice, or the same file through a link
            continue
        try:
            st = os.stat(path)
        except OSError:  # gone since it was listed: counted, not read
            passed_over += 1
            continue
        seen_real.add(real)
        files[path] = InputFile(path=path, size=st.st_size, mtime_ns=st.st_mtime_ns)
    return Inputs(files=tuple(files.values()), passed_over=passed_over)
