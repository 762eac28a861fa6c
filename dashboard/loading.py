"""Where the dashboard's sessions come from: samples, uploads and generated workloads.

Every source ends in a ``LoadedSession``: the parsed session plus where it came
from and a key that identifies its content (a SHA-256 of the bytes and the
format, or the workload's parameters), which the caches downstream use.
Parsing is cached per process by that key (``st.cache_resource``: sessions are
immutable), so a second visitor or a reload never parses the same file again.
Bad input raises the library's ``FormatError``; nothing here shows anything.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from pruner import Session
from pruner.bench import workloads
from pruner.errors import FormatError
from pruner.formats import FORMATS, decode_bytes, detect_format, load_bytes

ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = ROOT / "sample_sessions"
DEFAULT_SAMPLE = "native_demo.jsonl"
#: Uploads larger than this are refused with a clear message (override with the env variable).
MAX_UPLOAD_ENV = "PRUNER_DASHBOARD_MAX_BYTES"
DEFAULT_MAX_UPLOAD_BYTES = 50 * 1024 * 1024
MAX_WORKLOAD_TURNS = 5_000


@dataclass(frozen=True)
class LoadedSession:
    """The session the pages show, and where it came from."""

    key: str  # content identity: file digest + format, or workload parameters
    label: str  # what the user picked: a file name or "tool_agent, 200 turns, seed 0"
    origin: str  # "sample" | "upload" | "workload"
    format: str  # the format it was read as
    detected: bool  # True when the format was detected, False when the user chose it
    session: Session


def max_upload_bytes() -> int:
    try:
        return int(os.environ.get(MAX_UPLOAD_ENV, DEFAULT_MAX_UPLOAD_BYTES))
    except ValueError:
        return DEFAULT_MAX_UPLOAD_BYTES


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@st.cache_resource(show_spinner=False, max_entries=16)
def _parse_bytes(data_digest: str, file: str, format: str | None, max_bytes: int,
                 _data: bytes) -> tuple[Session, str]:
    session = load_bytes(_data, file=file, format=format, max_bytes=max_bytes)
    if format is None:
        format = detect_format(decode_bytes(_data, file=file), file=file)
    return session, format


def load_file_bytes(data: bytes, *, file: str, origin: str, format: str | None = None,
                    max_bytes: int | None = None) -> LoadedSession:
    """Parse uploaded or sample bytes (format detected unless given); ``FormatError`` on bad input."""
    if format is not None and format not in FORMATS:
        raise FormatError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}", file=file)
    d = digest(data)
    session, used = _parse_bytes(d, file, format, max_bytes or max_upload_bytes(), data)
    return LoadedSession(key=f"{d}:{used}", label=file, origin=origin, format=used,
                         detected=format is None, session=session)


def list_samples() -> list[str]:
    """Loadable sample files: the top level of ``sample_sessions/``, sorted by name."""
    if not SAMPLES_DIR.is_dir():
        return []
    return sorted(p.name for p in SAMPLES_DIR.iterdir() if p.is_file() and not p.name.startswith("."))


def load_sample(name: str) -> LoadedSession:
    if name not in list_samples():
        raise FormatError("no such sample file; pick one from the list", file=name)
    data = (SAMPLES_DIR / name).read_bytes()
    return load_file_bytes(data, file=name, origin="sample", max_bytes=max(len(data), 1))


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
