"""Loading and caching for the dashboard: every call into the library goes through here.

* The token counter is a ``st.cache_resource`` (one per encoding, shared by all users).
* Parsed sessions and pruning results are cached per process, keyed by the
  session's content (SHA-256 of the file bytes plus the chosen format, or the
  workload parameters) and the settings, so changing a filter never re-runs the
  pruner. They are ``st.cache_resource`` rather than ``st.cache_data``: the
  values are immutable (frozen dataclasses; the frames are only ever read), and
  ``st.cache_data`` pickles on store and un-pickles on every hit, which for a
  12,000-message session costs over a second each time a browser tab opens.
  The last results are also kept in the user's session state.
* Figures built from those results are cached the same way (``shared``), so a
  reload or a second visitor gets the finished figure instead of rebuilding it.

Nothing here prunes or summarises by itself; it only calls ``pruner``.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import streamlit as st

from pruner import PruneConfig, PruneResult, Session, message_tokens, prune
from pruner.errors import FormatError, InvalidSessionError
from pruner.formats import FORMATS, decode_bytes, detect_format, load_bytes
from pruner.tokens import DEFAULT_ENCODING, get_counter

from . import tables

log = logging.getLogger("pruner.dashboard")

ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = ROOT / "sample_sessions"
BENCH_RESULTS = SAMPLES_DIR / "bench" / "results.json"
DEFAULT_SAMPLE = "native_demo.jsonl"
#: Uploads larger than this are refused with a clear message (override with the env variable).
MAX_UPLOAD_ENV = "PRUNER_DASHBOARD_MAX_BYTES"
DEFAULT_MAX_UPLOAD_BYTES = 50 * 1024 * 1024
#: The context chart prunes the session up to each of at most this many turns.
MAX_CONTEXT_SAMPLES = 60
#: Sessions up to this many messages get the pruned context per turn on page load;
#: longer ones compute it on request, with fewer sampled turns.
AUTO_CONTEXT_MESSAGES = 2_500
LARGE_CONTEXT_SAMPLES = 24

MAX_WORKLOAD_TURNS = 5_000

_CURRENT = "pruner_loaded"
_MEMO = "pruner_analysis_memo"


@dataclass(frozen=True)
class LoadedSession:
    """The session the pages show, and where it came from."""

    key: str  # content identity: file digest + format, or workload parameters
    label: str  # what the user picked: a file name or "tool_agent, 200 turns, seed 0"
    origin: str  # "sample" | "upload" | "workload"
    format: str  # the format it was read as
    detected: bool  # True when the format was detected, False when the user chose it
    session: Session


@dataclass(frozen=True)
class PruneSettings:
    """The settings form's values; ``config()`` turns them into the library's ``PruneConfig``."""

    expire: bool = True
    deduplicate: bool = True
    restore: bool = True
    near_duplicate_threshold: float = 0.8
    encoding: str = DEFAULT_ENCODING

    def config(self) -> PruneConfig:
        return PruneConfig(**asdict(self))

    def key(self) -> tuple:
        return tuple(asdict(self).items())


@dataclass(frozen=True)
class Analysis:
    """A pruning result with the per-message frame every view of it uses."""

    result: PruneResult
    frame: pd.DataFrame  # tables.messages_frame of the input session


# ---------------------------------------------------------------- cached library calls

@st.cache_resource(show_spinner=False)
def token_counter(encoding: str = DEFAULT_ENCODING):
    """The library's counter for ``encoding``, built once per process."""
    return get_counter(encoding)


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


def workloads_module():
    """``pruner.bench.workloads`` when it is installed, else ``None``."""
    return _optional("pruner.bench.workloads")


def bench_module():
    return _optional("pruner.bench.run")


def compaction_module():
    return _optional("pruner.compaction")


def _optional(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@st.cache_resource(show_spinner=False, max_entries=8)
def _generate(workload: str, turns: int, seed: int) -> Session:
    return workloads_module().generate(workload, turns=turns, seed=seed)


def workload_key(workload: str, *, turns: int, seed: int) -> str:
    """The content identity of a generated workload (generation is deterministic)."""
    return f"workload:{workload}:{int(turns)}:{int(seed)}"


def load_workload(workload: str, *, turns: int, seed: int) -> LoadedSession:
    """A generated workload session (``pruner.bench.workloads.generate``)."""
    module = workloads_module()
    if module is None:
        raise FormatError("generated workloads need pruner.bench.workloads, which is not installed yet",
                          file="workload")
    if not 1 <= turns <= MAX_WORKLOAD_TURNS or seed < 0:
        raise FormatError(f"choose 1 to {MAX_WORKLOAD_TURNS:,} turns and a seed of 0 or more", file="workload")
    if workload not in module.WORKLOADS:
        raise FormatError(f"unknown workload {workload!r}; choose one of {', '.join(module.WORKLOADS)}",
                          file="workload")
    session = _generate(workload, int(turns), int(seed))
    label = f"{workload}, {turns:,} turns, seed {seed}"
    return LoadedSession(key=workload_key(workload, turns=turns, seed=seed), label=label, origin="workload",
                         format="native", detected=False, session=session)


@st.cache_resource(show_spinner=False, max_entries=16)
def _analyse(session_key: str, settings: PruneSettings, _session: Session) -> Analysis:
    _analysed().add((session_key, settings))
    result = prune(_session, settings.config())
    counter = token_counter(settings.encoding)
    tokens = counter.count_many([m.content for m in _session.messages])
    tokens = [message_tokens(m, counter) if m.tool_calls else n for m, n in zip(_session.messages, tokens)]
    return Analysis(result=result, frame=tables.messages_frame(_session, result.decisions, tokens))


@st.cache_resource(show_spinner=False)
def _analysed() -> set:
    """(session key, settings) pairs pruned in this process (a hint: cache eviction is not tracked)."""
    return set()


def is_analysed(session_key: str, settings: PruneSettings) -> bool:
    """Whether ``analyse`` has (most likely) a cached result, i.e. will return without pruning."""
    return (session_key, settings) in _analysed()


def analyse(loaded: LoadedSession, settings: PruneSettings) -> Analysis:
    """Prune ``loaded`` with ``settings`` (cached by content + settings) and build its frame."""
    return memoised("analysis", (loaded.key, settings), lambda: _analyse(loaded.key, settings, loaded.session),
                    keep=6)


def sample_turns(last_turn: int, limit: int = MAX_CONTEXT_SAMPLES) -> list[int]:
    """Every turn when there are few, else ``limit`` evenly spaced ones including the first and last."""
    if last_turn + 1 <= limit:
        return list(range(last_turn + 1))
    return sorted({round(i * last_turn / (limit - 1)) for i in range(limit)})


def _after_by_role(result: PruneResult, positions: dict[str, int], tokens: tuple[int, ...]) -> dict[str, int]:
    kept = result.kept.messages
    after = tables.role_tokens([m.role for m in kept], [tokens[positions[m.id]] for m in kept])
    after["tool"] += result.stats.placeholder_tokens
    return after


def _incremental_pruner(config: PruneConfig):
    """``pruner.engine.incremental.IncrementalPruner`` when it exists and carries state for ``config``."""
    module = _optional("pruner.engine.incremental")
    if module is None:
        return None
    pruner = module.IncrementalPruner(config)
    # With a pass switched off it would prune everything again on every append: slower than sampling.
    return pruner if getattr(pruner, "_carry", True) else None


@st.cache_data(show_spinner=False, max_entries=32)
def _context_series(session_key: str, settings: PruneSettings, turns: tuple[int, ...], _session: Session,
                    _tokens: tuple[int, ...]) -> list[dict]:
    """The pruned context, by role, when the conversation stood at each of ``turns``.

    Each value is the library's own result for the conversation up to that turn:
    ``IncrementalPruner`` (equal to ``prune`` after every append) when available,
    else ``prune`` of each prefix.
    """
    config = settings.config()
    messages = _session.messages
    positions = {m.id: i for i, m in enumerate(messages)}
    wanted = set(turns)
    samples: list[dict] = []
    incremental = _incremental_pruner(config) if all(
        a.turn <= b.turn for a, b in zip(messages, messages[1:])) else None
    if incremental is not None:
        try:
            for turn, group in itertools.groupby(messages, key=lambda m: m.turn):
                incremental.append(list(group))
                if turn in wanted:
                    samples.append({"turn": turn,
                                    "after": _after_by_role(incremental.result(), positions, _tokens)})
            return samples
        except Exception:
            log.warning("incremental pruner failed; pruning each prefix instead", exc_info=True)
            samples = []
    for turn in turns:
        prefix = [m for m in messages if m.turn <= turn]
        if not prefix:
            continue
        try:
            result = prune(_session.with_messages(prefix), config)
        except InvalidSessionError:
            continue  # a prefix cut inside a call/result pair of a badly ordered import
        samples.append({"turn": turn, "after": _after_by_role(result, positions, _tokens)})
    return samples


def context_is_cheap(loaded: LoadedSession) -> bool:
    """Whether the pruned context per turn can be computed on page load without a noticeable wait."""
    return len(loaded.session.messages) <= AUTO_CONTEXT_MESSAGES


def context_samples(loaded: LoadedSession, settings: PruneSettings, analysis: Analysis, *,
                    limit: int = MAX_CONTEXT_SAMPLES) -> list[dict]:
    """The pruned context at each (sampled) turn: what the library keeps of the conversation as it stood then.

    The last turn is the whole session, whose result is already known, so it is
    taken from ``analysis`` instead of being pruned again.
    """
    turns = sample_turns(loaded.session.last_turn, limit)

    def build() -> list[dict]:
        tokens = tuple(int(t) for t in analysis.frame["tokens"])
        samples = _context_series(loaded.key, settings, tuple(turns[:-1]), loaded.session, tokens)
        frame = analysis.frame
        kept = frame[frame["status"].isin(["kept", "restored"])]
        last = tables.role_tokens(kept["role"].tolist(), kept["tokens"].tolist())
        last["tool"] += analysis.result.stats.placeholder_tokens
        return [*samples, {"turn": turns[-1], "after": last}]
    return memoised("context", (loaded.key, settings, limit), build)


# ---------------------------------------------------------------- the current session

def current() -> LoadedSession | None:
    return st.session_state.get(_CURRENT)


def set_current(loaded: LoadedSession) -> None:
    st.session_state[_CURRENT] = loaded


def ensure_session() -> LoadedSession | None:
    """The current session; on a fresh visit, the demo sample (or the first sample that loads)."""
    loaded = current()
    if loaded is not None:
        return loaded
    names = list_samples()
    ordered = ([DEFAULT_SAMPLE] if DEFAULT_SAMPLE in names else []) + [n for n in names if n != DEFAULT_SAMPLE]
    for name in ordered:
        try:
            loaded = load_sample(name)
        except (FormatError, InvalidSessionError, OSError):
            continue
        set_current(loaded)
        return loaded
    return None


def settings() -> PruneSettings:
    return st.session_state.get("pruner_settings") or PruneSettings()


def set_settings(value: PruneSettings) -> None:
    st.session_state["pruner_settings"] = value


@st.cache_resource(show_spinner=False, max_entries=32)
def _shared(name: str, key: Any, _build: Callable[[], Any]) -> Any:
    return _build()


def shared(name: str, key: Any, build: Callable[[], Any]) -> Any:
    """A value built once per process for ``(name, key)`` and shared by every visitor (read-only!).

    For figures and frames that depend only on the session's content and the
    settings (``key`` must say everything ``build`` depends on): a reload, a
    new tab or a second user gets them without rebuilding.
    """
    return _shared(name, key, build)


def memoised(name: str, key: Any, build: Callable[[], Any], *, keep: int = 8) -> Any:
    """A per-user memo (at most ``keep`` values per ``name``) for values too costly to rebuild on every rerun."""
    memo = st.session_state.setdefault(_MEMO, {}).setdefault(("memo", name), {})
    if key not in memo:
        if len(memo) >= keep:
            memo.clear()
        memo[key] = build()
    return memo[key]
