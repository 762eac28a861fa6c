"""Small presentation helpers shared by the pages: inert text, errors without tracebacks.

A transcript is untrusted input, so anything that came from a file is shown
with ``st.text`` / ``st.code`` (never Markdown or HTML); when such text must go
into a Markdown-rendering element (a heading, an error), ``escape_markdown``
makes every character literal first.

>>> escape_markdown("**x** <img src=y>")
'\\\\*\\\\*x\\\\*\\\\* \\\\<img src\\\\=y\\\\>'
"""

from __future__ import annotations

import logging
import re
from typing import Callable

import streamlit as st

from pruner.errors import PrunerError

log = logging.getLogger("pruner.dashboard")

GENERIC_ERROR = ("Something unexpected went wrong while building this view. The previous session "
                 "is still loaded; try another file or settings. (Details are in the server log.)")

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~=:$&\"'])")


def escape_markdown(text: str) -> str:
    """Backslash-escape every Markdown/HTML-significant ASCII character so it shows literally."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def inert(text: str) -> None:
    """Show untrusted text literally (no Markdown, no HTML, nothing fetched)."""
    st.text(text)


def show_error(exc: BaseException, *, what_to_do: str = "") -> None:
    """An ``st.error`` for a ``PrunerError``: its message (escaped) plus what to do next."""
    message = escape_markdown(str(exc))
    if what_to_do:
        message += "\n\n" + what_to_do
    st.error(message, icon=":material/error:")


def error_text(exc: BaseException) -> str:
    """The text an error shows: the ``PrunerError`` message, or the generic one for anything else."""
    if isinstance(exc, PrunerError):
        return str(exc)
    log.error("unexpected error in the dashboard", exc_info=exc)
    return GENERIC_ERROR


def guarded(render: Callable[[], None]) -> None:
    """Run a page; a ``PrunerError`` becomes ``st.error``, anything else a generic error (no traceback).

    Streamlit's own control-flow exceptions (rerun, stop) derive from
    ``BaseException`` and pass through untouched.
    """
    try:
        render()
    except PrunerError as exc:
        show_error(exc)
    except Exception as exc:
        log.error("unexpected error in the dashboard", exc_info=exc)
        st.error(GENERIC_ERROR, icon=":material/error:")


def format_hint(message: str) -> str:
    """What to do about a load error, in the dashboard's words rather than the CLI's."""
    if "format" in message and ("unknown" in message or "ambiguous" in message):
        return "Choose the format in the **Format** box below the uploader, or upload another file."
    if "limit" in message:
        return "Upload a smaller file, or start the dashboard with a larger PRUNER_DASHBOARD_MAX_BYTES."
    if "UTF-8" in message or "binary" in message or "empty" in message:
        return "Upload a text transcript saved as UTF-8 (JSON or JSON Lines)."
    return "Fix the file at the place named above, or pick another file. The previous session is still loaded."
