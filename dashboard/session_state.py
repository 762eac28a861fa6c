"""What one visitor has open: the loaded session and the pruning settings, in their session state.

The settings are the library's own ``PruneConfig`` (the form changes some of
its fields with ``dataclasses.replace``), so the dashboard never restates a
default the library owns.
"""

from __future__ import annotations

import streamlit as st

from pruner import PruneConfig
from pruner.errors import FormatError, InvalidSessionError

from .loading import DEFAULT_SAMPLE, LoadedSession, list_samples, load_sample

LOADED = "pruner_loaded"  # the session_state key holding the LoadedSession
_SETTINGS = "pruner_settings"


def current() -> LoadedSession | None:
    return st.session_state.get(LOADED)


def set_current(loaded: LoadedSession) -> None:
    st.session_state[LOADED] = loaded


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


def settings() -> PruneConfig:
    return st.session_state.get(_SETTINGS) or PruneConfig()


def set_settings(value: PruneConfig) -> None:
    st.session_state[_SETTINGS] = value
