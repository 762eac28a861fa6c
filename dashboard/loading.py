"""Where the dashboard's sessions come from: samples, uploads and generated workloads.

Every source ends in a ``LoadedFile`` (all the dialogues of one file: most
formats hold one, a tau-bench file two hundred) and then a ``LoadedSession``:
one parsed session plus where it came from and a key that identifies its
content (a SHA-256 of the bytes, the format and the dialogue, or the workload's
parameters), which the caches downstream use. Parsing is cached per process by
that key (``st.cache_resource``: sessions are immutable), so a second visitor
or a reload never parses the same file again.

Uploads are also kept in this server's memory (the last few, up to a byte
budget) under their digest, so a link or a reload can name an upload by its
digest and open it again while the server still holds it.

Bad input raises the library's ``FormatError``; nothing here shows anything.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from pruner import Session
from pruner.bench import workloads
from pruner.errors import FormatError
from pruner.formats import FORMATS, decode_bytes, detect_format, loads_all

ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = ROOT / "sample_sessions"
DEFAULT_SAMPLE = "native_demo.jsonl"
MAX_WORKLOAD_TURNS = 5_000
#: Uploads kept in memory for links and reloads: at most this many, and this many bytes.
KEPT_UPLOADS, KEPT_UPLOAD_BYTES = 16, 256 * 1024 * 1024


@dataclass(frozen=True)
class LoadedSession:
    """The session the pages show, and where it came from."""

    key: str  # content identity: file digest + format (+ dialogue), or workload parameters
    label: str  # what the user picked: a file name or "tool_agent, 200 turns, seed 0"
    origin: str  # "sample" | "upload" | "workload"
    format: str  # the format it was read as
    detected: bool  # True when the format was detected, False when the user chose it
    session: Session
    digest: str = ""  # SHA-256 of the file's bytes ("" for a generated workload)
    dialogue: int | None = None  # which dialogue of a file holding several
    dialogues: int = 1  # how many dialogues the file holds
    file: str = ""  # the file name (the label adds the dialogue)
    link: tuple[tuple[str, str], ...] = ()  # the URL parameters that reopen a session of another origin (a batch's)


@dataclass(frozen=True)
class LoadedFile:
    """Every dialogue of one file, parsed (most files hold one)."""

    name: str
    origin: str
    digest: str
    format: str
    detected: bool
    sessions: tuple[Session, ...]
    skip_bad_lines: bool = False

    def dialogue(self, index: int | None) -> LoadedSession:
        """Dialogue ``index`` (0-based) as the session to show; ``None`` for a file holding one."""
        count = len(self.sessions)
        if index is None:
            if count != 1:
                raise FormatError(f"this file holds {count:,} dialogues; pick one from the list", file=self.name)
            index = 0
        if not 0 <= index < count:
            raise FormatError(f"dialogue {index} does not exist; this file holds {count:,} "
                              f"(0 to {count - 1:,})", file=self.name)
        several = count > 1
        return LoadedSession(
            key=f"{self.digest}:{self.format}" + (":skip" if self.skip_bad_lines else "")
            + (f":{index}" if several else ""),
            label=f"{self.name} · dialogue {index}" if several else self.name, origin=self.origin,
            format=self.format, detected=self.detected, session=self.sessions[index], digest=self.digest,
            dialogue=index if several else None, dialogues=count, file=self.name)


def max_upload_bytes() -> int:
    """The largest upload the app reads: Streamlit's own ``server.maxUploadSize`` (MB), so the
    dropzone's stated limit and the app's are one number (set in dashboard/.streamlit/config.toml)."""
    return int(st.get_option("server.maxUploadSize")) * 1024 * 1024


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@st.cache_resource(show_spinner=False, max_entries=16)
def _parse_bytes(data_digest: str, file: str, format: str | None, max_bytes: int, skip_bad_lines: bool,
                 _data: bytes) -> tuple[tuple[Session, ...], str]:
    if len(_data) > max_bytes:
        raise FormatError(f"the file is {len(_data):,} bytes, over the dashboard's {max_bytes:,}-byte limit",
                          file=file)
    text = decode_bytes(_data, file=file)
    used = format or detect_format(text, file=file)
    return tuple(loads_all(text, file=file, format=used, skip_bad_lines=skip_bad_lines)), used


def load_file_bytes(data: bytes, *, file: str, origin: str, format: str | None = None,
                    max_bytes: int | None = None, skip_bad_lines: bool = False) -> LoadedFile:
    """Parse uploaded or sample bytes (format detected unless given); ``FormatError`` on bad input.

    ``skip_bad_lines``: in JSON Lines files, skip lines that cannot be read (the library counts them).
    """
    if format is not None and format not in FORMATS:
        raise FormatError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}", file=file)
    d = digest(data)
    sessions, used = _parse_bytes(d, file, format, max_bytes or max_upload_bytes(), skip_bad_lines, data)
    return LoadedFile(name=file, origin=origin, digest=d, format=used, detected=format is None, sessions=sessions,
                      skip_bad_lines=skip_bad_lines)


# ---------------------------------------------------------------- uploads kept for links and reloads

@st.cache_resource(show_spinner=False)
def _uploads() -> tuple[OrderedDict, threading.Lock]:
    return OrderedDict(), threading.Lock()


def remember_upload(name: str, data: bytes) -> str:
    """Keep an upload in this server's memory under its digest (oldest forgotten first); returns the digest."""
    d = digest(data)
    kept, lock = _uploads()
    with lock:
        kept[d] = (name, data)
        kept.move_to_end(d)
        while len(kept) > KEPT_UPLOADS or (len(kept) > 1 and sum(len(v[1]) for v in kept.values())
                                           > KEPT_UPLOAD_BYTES):
            kept.popitem(last=False)
    return d


def recall_upload(upload_digest: str) -> tuple[str, bytes] | None:
    """The (name, bytes) of an upload this server still holds, or ``None``."""
    kept, lock = _uploads()
    with lock:
        return kept.get(upload_digest)


def load_upload(upload_digest: str, *, format: str | None = None) -> LoadedFile:
    """An upload the server still holds, by digest; a ``FormatError`` saying so when it no longer does."""
    held = recall_upload(upload_digest)
    if held is None:
        raise FormatError("this link names an uploaded file the server no longer holds (it keeps the last "
                          f"{KEPT_UPLOADS} uploads in memory, and none after a restart); upload the file again",
                          file="upload")
    name, data = held
    return load_file_bytes(data, file=name, origin="upload", format=format)


# ---------------------------------------------------------------- samples and workloads

def list_samples() -> list[str]:
    """Loadable sample files: the top level of ``sample_sessions/``, sorted by name."""
    if not SAMPLES_DIR.is_dir():
        return []
    return sorted(p.name for p in SAMPLES_DIR.iterdir() if p.is_file() and not p.name.startswith("."))


def load_sample_file(name: str) -> LoadedFile:
    if name not in list_samples():
        raise FormatError("no such sample file; pick one from the list", file=name)
    data = (SAMPLES_DIR / name).read_bytes()
    return load_file_bytes(data, file=name, origin="sample", max_bytes=max(len(data), 1))


def load_sample(name: str, dialogue: int | None = None) -> LoadedSession:
    return load_sample_file(name).dialogue(dialogue)


@st.cache_resource(show_spinner=False, max_entries=8)
def _generate(workload: str, turns: int, seed: int) -> Session:
    return workloads.generate(workload, turns=turns, seed=seed)


def workload_key(workload: str, *, turns: int, seed: int) -> str:
    """The content identity of a generated workload (generation is deterministic)."""
    return f"workload:{workload}:{int(turns)}:{int(seed)}"


def load_workload(workload: str, *, turns: int, seed: int) -> LoadedSession:
    """A generated workload session (``pruner.bench.workloads.generate``)."""
    if not 1 <= turns <= MAX_WORKLOAD_TURNS or seed < 0:
        raise FormatError(f"choose 1 to {MAX_WORKLOAD_TURNS:,} turns and a seed of 0 or more", file="workload")
    if workload not in workloads.WORKLOADS:
        raise FormatError(f"unknown workload {workload!r}; choose one of {', '.join(workloads.WORKLOADS)}",
                          file="workload")
    session = _generate(workload, int(turns), int(seed))
    label = f"{workload}, {turns:,} turns, seed {seed}"
    return LoadedSession(key=workload_key(workload, turns=turns, seed=seed), label=label, origin="workload",
                         format="native", detected=False, session=session)
