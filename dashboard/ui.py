"""Small presentation helpers shared by the pages: inert text, errors without tracebacks.

A transcript is untrusted input, so anything that came from a file is shown
with ``st.text`` / ``st.code`` (never Markdown or HTML); when such text must go
into a Markdown-rendering element (a heading, an error), ``escape_markdown``
makes every character literal first.

>>> escape_markdown("**x** <img src=y>")
'\\\\*\\\\*x\\\\*\\\\* \\\\<img src\\\\=y\\\\>'
>>> [compact_number(n) for n in (619, 1_784, 22_751, 137_440, 2_345_678)]
['619', '1.8k', '23k', '137k', '2.3M']
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Callable

import streamlit as st

from pruner.errors import PrunerError

from .controls import label_of

log = logging.getLogger("pruner.dashboard")

GENERIC_ERROR = ("Something unexpected went wrong while building this view; try another file or other "
                 "settings. (Details are in the server log.)")
#: Said once under a load error when an earlier session is still shown.
STILL_LOADED = "The previous session is still loaded."

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~=:$&\"'])")


def escape_markdown(text: str) -> str:
    """Backslash-escape every Markdown/HTML-significant ASCII character so it shows literally."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def compact_number(n: float) -> str:
    """A count short enough for a metric at any width (137,440 -> "137k"); show the exact one on hover."""
    sign, n = ("-" if n < 0 else ""), abs(float(n))
    if n < 1_000:
        return f"{sign}{n:,.0f}"
    if n < 9_950:
        return f"{sign}{n / 1_000:.1f}k"
    if n < 999_500:
        return f"{sign}{n / 1_000:.0f}k"
    if n < 9_950_000:
        return f"{sign}{n / 1_000_000:.1f}M"
    return f"{sign}{n / 1_000_000:,.0f}M"


def plural(n: int, word: str, words: str | None = None) -> str:
    """A count with its noun, singular only for one: "1 turn", "2 turns", never "1 turns"."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def inert(text: str) -> None:
    """Show untrusted text literally (no Markdown, no HTML, nothing fetched)."""
    st.text(text)


def text_block(text: str, *, height: int | None = None) -> None:
    """Untrusted text shown literally in a bordered box that scrolls past ``height`` pixels.

    ``st.text`` rather than ``st.code``: the same inertness without loading the
    syntax highlighter into the browser, which costs a page with a long session
    most of a second before its charts are drawn.
    """
    with st.container(height=height or "content", border=True):
        st.text(text)


def show_error(exc: BaseException, *, what_to_do: str = "") -> None:
    """An ``st.error`` for a ``PrunerError``: its message (escaped) plus what to do next."""
    message = escape_markdown(for_dashboard(exc))
    if what_to_do:
        message += "\n\n" + what_to_do
    st.error(message, icon=":material/error:")


def error_text(exc: BaseException) -> str:
    """The text an error shows: the ``PrunerError`` message, or the generic one for anything else."""
    if isinstance(exc, PrunerError):
        return for_dashboard(exc)
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


#: The dashboard's words for the library settings an error names that are no settings-dataclass field
#: (those are named by their control's label); the CLI names its flags instead. The upload limit
#: (``max_bytes``) has its own hint (``load_hint``).
SETTING_WORDS = {
    "format": "choose it in the Format box",
    "dialogue": "choose one from the dialogue list",
    "skip_bad_lines": "or tick Skip unreadable lines under the uploader",
    "out": "enter another folder",
}


def for_dashboard(exc: BaseException) -> str:
    """A ``PrunerError``'s message with what to do in the dashboard about the setting it names
    (library messages name no flag: ``pruner.errors``).

    >>> from pruner.errors import ConfigurationError, FormatError
    >>> for_dashboard(FormatError("unknown format; supported: native", file="x.json", setting="format"))
    'x.json: unknown format; supported: native (choose it in the Format box)'
    >>> for_dashboard(ConfigurationError("reserve_tokens must be smaller", setting="reserve_tokens"))
    'reserve_tokens must be smaller (change “Reserve tokens”)'
    """
    setting = getattr(exc, "setting", None)
    label = label_of(setting)
    words = f"change “{label}”" if label else SETTING_WORDS.get(setting or "", "")
    return f"{exc} ({words})" if words else str(exc)


@dataclass(frozen=True)
class Problem:
    """A load error as the dashboard shows it: what is wrong, and what to do about it."""

    message: str
    hint: str

    def text(self, *, still_loaded: bool) -> str:
        """Markdown for ``st.error``: the message (escaped), the hint, and once whether a session stays."""
        parts = [escape_markdown(self.message), self.hint]
        if still_loaded:
            parts.append(STILL_LOADED)
        return "\n\n".join(p for p in parts if p)


def describe_load_error(exc: BaseException) -> Problem:
    """The dashboard's words for an error raised while opening a file, a sample, a workload or a link."""
    if not isinstance(exc, PrunerError):
        log.error("unexpected error while loading", exc_info=exc)
        return Problem(GENERIC_ERROR, "")
    message = for_dashboard(exc)
    return Problem(message, load_hint(exc, message))


def load_hint(exc: PrunerError, message: str) -> str:
    """What to do about a load error; "fix the file at the place named" only when a place is named."""
    if "format" in message and ("unknown" in message or "ambiguous" in message or "cannot read this as" in message):
        return "Choose the format in the **Format** box below the uploader, or upload another file."
    if "limit" in message:
        return f"The dashboard reads files up to {upload_limit_text()}; upload a smaller file."
    if "UTF-8" in message or "binary" in message or "empty" in message:
        return "Upload a text transcript saved as UTF-8 (JSON or JSON Lines)."
    if "no longer holds" in message:
        return ("Upload the file again (on the Start page, or in the explorer's sidebar under Source: Upload), "
                "or open a sample; no other session is shown in its place.")
    if "the link" in message:
        return "Check the link, or pick a session in the sidebar."
    named = getattr(exc, "line", None) is not None or getattr(exc, "path", None) or "message #" in message
    if named:
        return "Fix the file at the place named above, or pick another file."
    return "Pick another file, or another session in the sidebar."


def upload_limit_sentence() -> str:
    """Beside every file uploader: the limit in words and what to do with a larger file. The browser refuses a
    larger file before the app sees it, with a red icon only, so this must be said before the upload."""
    return (f"Files up to {upload_limit_text()}. For a larger one, use the command line: `pruner inspect FILE`, "
            "`pruner replay FILE`, or `pruner batch` on its folder, then open the folder it writes on the Corpus "
            "page.")


def upload_limit_text() -> str:
    """The upload limit as a person reads it ("50 MB")."""
    from .loading import max_upload_bytes  # loading never imports ui: no cycle

    limit = max_upload_bytes()
    return f"{limit // (1024 * 1024):,} MB" if limit >= 1024 * 1024 else f"{limit:,} bytes"
