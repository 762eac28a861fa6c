"""Which files a batch reads: files, directories (recursively) and glob patterns.

A file named on the command line is always read, whatever its name, and so is
every file a glob pattern matches. Inside a directory only files named like
transcripts (``.json``, ``.jsonl``, ``.ndjson``, ``.traj``) are read, and hidden
files and folders are passed over, so a README or a licence next to the logs is
not reported as a broken transcript; the summary says how many were passed
over. An input that names nothing is an error: a typo must not shrink a batch
silently. Paths are made absolute (workers on other machines see the same
shared paths), each file is listed once, in sorted order.
"""

from __future__ import annotations

import glob
import os
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
    passed_over: int  # files inside directories not named like transcripts (or hidden)


def _inside(path: str, folder: str | None) -> bool:
    return folder is not None and (path == folder or path.startswith(folder + os.sep))


def _walk(folder: str, exclude: str | None, found: list[str]) -> int:
    passed_over = 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _inside(os.path.join(root, d), exclude))
        for name in sorted(names):
            path = os.path.join(root, name)
            if name.startswith(".") or not name.lower().endswith(TRANSCRIPT_SUFFIXES):
                passed_over += 1
            elif os.path.isfile(path):
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
            found.append(path)
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
        else:
            raise ConfigurationError(f"{given}: no such file or directory")
    files: dict[str, InputFile] = {}
    seen_real: set[str] = set()
    for path in sorted(found):
        real = os.path.realpath(path)
        if path in files or real in seen_real:  # named twice, or the same file through a link
            continue
        seen_real.add(real)
        st = os.stat(path)
        files[path] = InputFile(path=path, size=st.st_size, mtime_ns=st.st_mtime_ns)
    return Inputs(files=tuple(files.values()), passed_over=passed_over)
