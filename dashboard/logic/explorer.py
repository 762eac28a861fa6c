"""The session explorer's logic: loading a session, opening a link, choosing the message to inspect.

Callbacks here change the visitor's session state only; the page
(``app_pages/explorer.py``) draws whatever that state says.
"""

from __future__ import annotations

import re
from typing import Callable

import streamlit as st

from .. import analysis, loading, session_state, ui
from ..loading import LoadedSession

ss = st.session_state


def try_load(load: Callable[[], LoadedSession]) -> bool:
    """Load a session; on a bad file keep the previous one and remember the error to show."""
    try:
        loaded = load()
        # a session the pruner rejects must not replace the current one
        analysis.analyse(loaded, session_state.settings())
    except Exception as exc:
        ss["load_error"] = ui.error_text(exc)
        return False
    session_state.set_current(loaded)
    ss["load_error"] = None
    return True


def load_from_link() -> None:
    """Open the session a link names, once per visit: ``?sample=NAME`` or ``?workload=NAME&turns=N&seed=S``."""
    if ss.get("link_applied"):
        return
    ss["link_applied"] = True
    params = st.query_params
    if "sample" in params:
        if try_load(lambda: loading.load_sample(params["sample"])):
            ss["sample_choice"] = params["sample"]
    elif "workload" in params:
        try:
            turns, seed = int(params.get("turns", 200)), int(params.get("seed", 0))
        except ValueError:
            ss["load_error"] = "the link's turns and seed must be whole numbers"
            return
        try_load(lambda: loading.load_workload(params["workload"], turns=turns, seed=seed))


def link_needs_pruning() -> bool:
    """Whether this first run of a visit opens a linked workload that is not pruned yet."""
    params = st.query_params
    if ss.get("link_applied") or "workload" not in params:
        return False
    try:
        key = loading.workload_key(params["workload"], turns=int(params.get("turns", 200)),
                                   seed=int(params.get("seed", 0)))
    except ValueError:
        return False
    return not analysis.is_analysed(key, session_state.settings())


def first_to_inspect(frame) -> int:
    """The message a new session opens on: its first removal that points somewhere, else its first change."""
    changed = frame[frame["status"] != "kept"]
    linked = changed[changed["related_position"] >= 0]
    first = linked if len(linked) else changed
    return int(first["position"].iloc[0]) if len(first) else 0


def position_of_id(frame, wanted: str) -> int | None:
    """The position of the message with id ``wanted`` (surrounding spaces ignored), or ``None``."""
    wanted = wanted.strip()
    hits = frame.index[frame["id"] == wanted].tolist() if wanted else []
    return int(frame.loc[hits[0], "position"]) if hits else None


def file_stem(label: str) -> str:
    """A safe download file name stem from a session label."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", label.rsplit("/", 1)[-1]).strip("._") or "session"
    return stem.rsplit(".", 1)[0] if "." in stem else stem
