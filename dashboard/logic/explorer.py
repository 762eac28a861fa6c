"""The session explorer's logic: opening sessions, picking a dialogue, choosing the message to inspect.

Callbacks here change the visitor's session state only; the page
(``app_pages/explorer.py``) draws whatever that state says.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from pruner import PruneConfig, PruneResult, Session, prune
from pruner.errors import PrunerError
from pruner.formats.claude_code import METADATA_TYPES
from pruner.formats.export import dumps
from pruner.analysis.index import MIN_DUPLICATE_CHARS, MIN_DUPLICATE_RESULT_CHARS

from .. import analysis, cache, components, links, loading, session_state, tables
from ..loading import LoadedFile, LoadedSession

log = logging.getLogger("pruner.dashboard")
ss = st.session_state
#: The explorer's own URL parameters: the message being inspected, the timeline's zoom.
PAGE_KEYS = ("msg", "zoom")
#: The inspected message, kept outside the number box's widget state (Streamlit forgets that on another page).
SELECTED = "inspected_message"
TIMELINE_KEY = "timeline_chart"


def check(loaded: LoadedSession) -> None:
    """Prune ``loaded`` before it is shown: a session the pruner rejects never replaces the current one."""
    analysis.analyse(loaded, session_state.settings())


def open_sample(name: str) -> bool:
    return session_state.attempt(lambda: session_state.open_file(loading.load_sample_file(name), None, check=check))


def open_upload(name: str, data: bytes, *, format: str | None, skip_bad_lines: bool = False) -> bool:
    """Read an upload (kept in the server's memory for reloads and links) and show it."""
    def action() -> None:
        loading.remember_upload(name, data)
        file = loading.load_file_bytes(data, file=name, origin="upload", format=format, skip_bad_lines=skip_bad_lines)
        session_state.open_file(file, None, check=check)
    return session_state.attempt(action)


def open_workload(name: str, *, turns: int, seed: int) -> bool:
    def action() -> None:
        loaded = loading.load_workload(name, turns=turns, seed=seed)
        check(loaded)
        session_state.set_current(loaded)
        ss[session_state.FILE], ss[session_state.ERROR] = None, None
    return session_state.attempt(action)


def choose_dialogue(index: int) -> bool:
    file = session_state.dialogue_file()
    if file is None:
        return False
    return session_state.attempt(lambda: session_state.open_file(file, int(index), check=check))


def link_needs_pruning() -> bool:
    """Whether this first run of a visit opens a linked workload that is not pruned yet."""
    params = st.query_params
    if session_state.link_was_read() or "workload" not in params:
        return False
    try:
        key = loading.workload_key(params["workload"], turns=int(params.get("turns", 200)),
                                   seed=int(params.get("seed", 0)))
    except ValueError:
        return False
    return not analysis.is_analysed(key, session_state.settings())


# ------------------------------------------------------------------ the dialogue picker

def dialogue_rows(file: LoadedFile, config: PruneConfig) -> pd.DataFrame:
    """One row per dialogue of ``file``: its size and what pruning removes (built once per process)."""
    def build() -> pd.DataFrame:
        rows = []
        for i, s in enumerate(file.sessions):
            stats = prune(s, config).stats
            rows.append({"dialogue": i, "name": s.name, "messages": stats.messages_before,
                         "turns": s.last_turn, "tokens": stats.tokens_before, "tokens after": stats.tokens_after,
                         "reduction %": round(100 * stats.reduction, 1)})
        return pd.DataFrame(rows, columns=["dialogue", "name", "messages", "turns", "tokens", "tokens after",
                                           "reduction %"])
    return cache.shared("dialogue_rows", (file.digest, file.format, file.skip_bad_lines, config), build)


# ------------------------------------------------------------------ choosing the message to inspect

def first_to_inspect(frame: pd.DataFrame) -> int:
    """The message a new session opens on: its first removal that points somewhere, else its first change."""
    # on the columns alone: filtering the whole frame copies every column (0.1-0.25 s at 12,000 rows),
    # and this runs before the timeline is sent
    changed = (frame["status"] != "kept").to_numpy(dtype=bool)
    linked = changed & (frame["related_position"] >= 0).to_numpy(dtype=bool)
    first = linked if linked.any() else changed
    return int(frame["position"].to_numpy()[first.argmax()]) if first.any() else 0


def position_of_id(frame: pd.DataFrame, wanted: str) -> int | None:
    """The position of the message with id ``wanted`` (surrounding spaces ignored), or ``None``."""
    wanted = wanted.strip()
    hits = frame.index[frame["id"] == wanted].tolist() if wanted else []
    return int(frame.loc[hits[0], "position"]) if hits else None


def select(position: int | None) -> None:
    """Inspect the message at ``position`` (``None``: none selected)."""
    ss[SELECTED] = None if position is None else int(position)
    ss["inspect_pos"] = ss[SELECTED]
    ss["find_id_error"] = None
    ss["find_id"] = ""  # the jump box never keeps an id the inspector no longer shows


def step(delta: int, count: int) -> None:
    """Inspect the message ``delta`` positions on (kept within the session)."""
    if count:
        current = ss.get(SELECTED)
        select(0 if current is None else min(max(int(current) + delta, 0), count - 1))


def find_id(frame: pd.DataFrame, wanted: str) -> None:
    """Inspect the message with id ``wanted``; remember a note when there is none."""
    position = position_of_id(frame, wanted)
    if position is not None:
        select(position)
    elif wanted.strip():
        ss["find_id_error"] = f"No message has the id {wanted.strip()!r} in this session."


def on_number() -> None:
    """The number box was changed by hand."""
    value = ss.get("inspect_pos")
    select(None if value is None else int(value))


def _url_names(loaded: LoadedSession) -> bool:
    """Whether the URL names ``loaded`` (then its msg and zoom are this session's, not the previous one's)."""
    params = st.query_params.to_dict()
    wanted = links.source_params(loaded)
    return bool(wanted) and all(params.get(k) == v for k, v in wanted.items())


def inspected(loaded: LoadedSession, frame: pd.DataFrame) -> int | None:
    """The position to inspect (``None``: nothing selected yet). Kept while the session stays open (on any
    page); for a newly opened one, the URL's ``msg`` when the URL names it, else nothing for an upload
    (a new file starts with nothing selected) and the first change for a sample or a workload."""
    if ss.get("inspect_for") != loaded.key:
        ss["inspect_for"] = loaded.key
        from_url = _url_names(loaded)
        linked = st.query_params.get("msg") if from_url else None
        position = int(linked) if linked and linked.isdigit() and int(linked) < len(frame) else None
        if position is None and loaded.origin != "upload":
            position = first_to_inspect(frame)
        select(position)
        zoom = links.zoom_from(st.query_params.get("zoom")) if from_url else None
        components.set_zoom(TIMELINE_KEY, zoom)
    position = ss.get(SELECTED)
    if position is None or not len(frame):
        ss["inspect_pos"] = None
        return None
    position = min(max(int(position), 0), len(frame) - 1)
    ss["inspect_pos"] = position  # the number box shows the kept selection
    return position


def apply_link(loaded: LoadedSession, frame: pd.DataFrame, link: dict[str, str] | None) -> None:
    """A link from another page (the Replay page's "open #N in the explorer") to the session already open:
    inspect its message and zoom. (A newly opened session reads them in ``inspected``.)"""
    if not link or ss.get("inspect_for") != loaded.key or not _url_names(loaded):
        return
    msg = link.get("msg", "")
    if msg.isdigit() and int(msg) < len(frame):
        select(int(msg))
    if "zoom" in link:
        components.set_zoom(TIMELINE_KEY, links.zoom_from(link["zoom"]))


def view_params(position: int | None) -> dict[str, str | None]:
    """The explorer's own URL parameters for what it shows now."""
    zoom = components.zoom_range(TIMELINE_KEY)
    return {"msg": None if position is None else str(position), "zoom": links.zoom_text(zoom)}


# ------------------------------------------------------------------ explanations

def why_nothing_pruned(session: Session, result: PruneResult) -> str | None:
    """Why a session loses nothing, in terms of what the rules look for (``None`` when something is removed)."""
    if not session.messages or any(result.stats.by_status.get(s, 0) for s in ("expired", "duplicate")):
        return None
    restored = result.stats.by_status.get("restored", 0)
    if restored:
        return (f"Nothing is removed: the passes removed {restored:,} message{'s' if restored != 1 else ''}, and "
                "pass 3 brought every one back because a kept message depends on it.")
    roles = Counter(m.role for m in session.messages)
    results, docs = roles.get("tool", 0), roles.get("retrieved_doc", 0)
    keys = Counter(c.key for m in session.messages for c in m.tool_calls)
    repeated = sum(n - 1 for n in keys.values() if n > 1)
    ttl = sum(m.expires_after_turn is not None for m in session.messages)
    facts = [f"{results:,} tool result{'s' if results != 1 else ''}", f"{docs:,} retrieved document"
             f"{'s' if docs != 1 else ''}", f"{repeated:,} repeated call{'s' if repeated != 1 else ''} (same tool "
             "and arguments)", f"{ttl:,} message{'s' if ttl != 1 else ''} with a time-to-live"]
    return ("Nothing here is prunable: the rules remove tool results and documents that something newer "
            "replaced or that repeat an earlier one, and this session has " + ", ".join(facts) + ". "
            "No result is superseded, no file read is followed by a change to that file, and no document or "
            f"tool result repeats another (results under {MIN_DUPLICATE_RESULT_CHARS} characters and documents "
            f"under {MIN_DUPLICATE_CHARS} never count as copies).")


def file_stem(label: str) -> str:
    """A safe download file name stem from a session label."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", label.rsplit("/", 1)[-1]).strip("._") or "session"
    return stem.rsplit(".", 1)[0] if "." in stem else stem


# ------------------------------------------------------------------ downloads and notices

@dataclass(frozen=True)
class Export:
    """One download: its bytes, or why it cannot be written (shown instead of a button that does nothing)."""

    label: str
    key: str
    suffix: str
    mime: str
    data: bytes | None
    error: str | None


_EXPORTS = (("Pruned session (native JSONL)", "dl_native", ".pruned.jsonl", "application/jsonl", "native"),
            ("Pruned messages (OpenAI JSON)", "dl_openai", ".openai.json", "application/json", "openai"),
            ("Decisions (CSV)", "dl_csv", ".decisions.csv", "text/csv", None))


def exports(loaded: LoadedSession, config: PruneConfig, analysed) -> tuple[Export, ...]:
    """The downloads, written once per session and settings. They are built before the page offers them,
    so a session that cannot be exported says why instead of a download that silently does nothing."""
    def build() -> tuple[Export, ...]:
        out = []
        for label, key, suffix, mime, to in _EXPORTS:
            try:
                text = dumps(analysed.result, to=to) if to else \
                    tables.decisions_frame(analysed.frame).to_csv(index=False)
                data, error = text.encode("utf-8"), None
            except UnicodeEncodeError as exc:
                data, error = None, (f"the session holds text that is not valid Unicode (a lone surrogate at "
                                     f"character {exc.start:,} of the export); fix the file and open it again")
            except PrunerError as exc:
                data, error = None, str(exc)
            except Exception as exc:  # an exporter bug must still not fail silently
                log.error("export %s failed", key, exc_info=exc)
                data, error = None, f"the export failed ({type(exc).__name__}); details are in the server log"
            out.append(Export(label, key, suffix, mime, data, error))
        return tuple(out)
    return cache.shared("exports", (loaded.key, config), build)


def repairs_notice(session: Session) -> str | None:
    """What the reader skipped or repaired to open this file (agent logs with damaged or repeated lines).

    The library records each repair in ``metadata["repairs"]`` as ``{"kind", "count", "message", "lines"}``,
    with a sentence for a person; older readers recorded only ``skipped_bad_lines`` and the entry types
    they skipped.
    """
    meta = session.metadata if hasattr(session.metadata, "get") else {}
    repairs = meta.get("repairs")
    if isinstance(repairs, list) and repairs:
        parts = [str(r["message"]) for r in repairs if hasattr(r, "get") and r.get("message")]
    else:
        parts = []
        skipped = meta.get("skipped_bad_lines") or 0
        if skipped:
            parts.append(f"skipped {skipped:,} unreadable line{'s' if skipped != 1 else ''}")
        for kind, n in _skipped_entries(meta).items():
            if kind not in METADATA_TYPES:  # Claude Code's own bookkeeping lines are no repair: counted below
                parts.append(f"skipped {n:,} entr{'ies' if n != 1 else 'y'} of unknown type {kind!r}")
    if not parts:
        return None
    # the library's sentences are verb phrases ("skipped …") and whole clauses ("2 lines are timed …"): a list
    # after a colon reads right with both, where "the reader 2 lines are timed …" did not
    return "Repairs made to open this file: " + "; ".join(parts) + "."


def _skipped_entries(meta) -> dict[str, int]:
    source = meta.get("source") if hasattr(meta.get("source"), "get") else {}
    entries: Any = source.get("skipped_entries") if hasattr(source, "get") else None  # any JSON value
    return dict(sorted(entries.items())) if hasattr(entries, "items") else {}


def bookkeeping_note(session: Session) -> str | None:
    """The lines the agent writes that are not messages (Claude Code's hook and system lines, session
    titles, file snapshots), counted: they are a normal file's, so the page says how many, without a
    warning ("skipped 116 entries of unknown type 'system'" read as damage on every Claude Code file)."""
    meta = session.metadata if hasattr(session.metadata, "get") else {}
    known = {k: n for k, n in _skipped_entries(meta).items() if k in METADATA_TYPES}
    if not known:
        return None
    return ("Besides its messages the file holds " + ", ".join(f"{n:,} {k!r}" for k, n in known.items())
            + f" line{'s' if sum(known.values()) != 1 else ''} (the agent's hook, system and bookkeeping lines, "
            "not conversation messages).")
