"""The dashboard's two caches: values shared by every visitor, and values kept per visitor.

* ``shared`` holds read-only values built once per process (figures, frames):
  a ``st.cache_resource``, so a reload, a new tab or a second visitor gets the
  finished value without rebuilding or un-pickling it (``st.cache_data`` would
  un-pickle on every hit).
* ``memoised`` keeps a few values per visitor in their session state: results
  that are cheap to keep but costly to rebuild on every rerun.

Neither knows what it caches; the caller's key must say everything the value
depends on.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

_MEMO = "pruner_memo"


@st.cache_resource(show_spinner=False, max_entries=48)
def _shared(name: str, key: Any, _build: Callable[[], Any]) -> Any:
    return _build()


#: The (name, key) pairs built in this process (newest last), so a page can say "computing…" before a slow build.
_BUILT: dict = {}
_BUILT_LIMIT = 512


def shared(name: str, key: Any, build: Callable[[], Any]) -> Any:
    """A value built once per process for ``(name, key)`` and shared by every visitor (read-only!)."""
    def built() -> Any:
        value = build()
        _BUILT[(name, key)] = True
        while len(_BUILT) > _BUILT_LIMIT:
            _BUILT.pop(next(iter(_BUILT)))
        return value
    return _shared(name, key, built)


def has(name: str, key: Any) -> bool:
    """Whether ``shared(name, key, …)`` was built in this process (it may have been evicted since)."""
    return (name, key) in _BUILT


def memoised(name: str, key: Any, build: Callable[[], Any], *, keep: int = 8) -> Any:
    """A per-visitor memo (at most ``keep`` values per ``name``) for values too costly to rebuild per rerun."""
    memo = st.session_state.setdefault(_MEMO, {}).setdefault(name, {})
    if key not in memo:
        if len(memo) >= keep:
            memo.clear()
        memo[key] = build()
    return memo[key]
