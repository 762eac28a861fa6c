"""Amp: ``~/.local/share/amp/threads/T-<uuid>.json`` (``$AMP_DATA_DIR`` replaces ``~/.local/share/amp``).
Amp files threads by id, so a session's project is the workspace its ``env.initial.trees`` records.

Amp is closed source; the folder and the variable are those ccusage reads (ryoppippi/ccusage,
``rust/crates/ccusage/src/adapter/amp/paths.rs`` and ``README.md`` at commit
5816e640e8824986f33427203da164b01394a161: ``${AMP_DATA_DIR:-~/.local/share/amp}/threads/``; ccusage
also takes a comma-separated list there, pruner one folder). Amp itself follows ``$XDG_DATA_HOME``
for that folder (jonathan-kellerai/cross_agent_session_resumer ``src/providers/amp.rs``); pass
``--amp-dir`` when it is moved that way."""

from __future__ import annotations

import os
import re
from urllib.parse import unquote

from ...model import Session
from ..found import LogSession, file_state, files_in
from .base import Agent

#: How much of a thread's start (and then its end) is read for its workspace.
HEAD_BYTES = 64 * 1024
_UNKNOWN = "(no workspace recorded)"
#: Where a workspace list opens, and a tree's folder in the text after it (up to the list's first ``]``).
#: Two patterns, not one with a lazy span between them: that one scanned to the end of the text from every
#: ``"trees":[{`` (quadratic: 4 threads of 128 KB cost 14.6 CPU s on every run); here each opening is
#: looked at over at most ``_WINDOW`` characters, and at most ``_TRIES`` openings are, so the search is linear.
_TREES = re.compile(r'"trees"\s{0,64}:\s{0,64}\[\s{0,64}\{')
_URI = re.compile(r'"uri"\s{0,64}:\s{0,64}"file://([^"]{0,4096})"')
_WINDOW, _TRIES = 16 * 1024, 16


def _workspace_in(text: str) -> str | None:
    """The first tree's ``file://`` folder after a ``"trees": [{`` in ``text`` (percent-decoded), or None."""
    for n, opening in enumerate(_TREES.finditer(text)):
        if n == _TRIES:
            break
        window = text[opening.end():opening.end() + _WINDOW]
        close = window.find("]")
        m = _URI.search(window if close < 0 else window[:close])
        if m:
            return unquote(m.group(1))
    return None


def first_workspace(path: str) -> str:
    """The workspace folder a thread records (``env.initial.trees``), found in its first or last
    ``HEAD_BYTES`` ("" when neither holds it: the thread is still read, its project is then unknown)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - HEAD_BYTES))
            tail = fh.read(HEAD_BYTES)
    except OSError:
        return ""
    for part in (head, tail):
        found = _workspace_in(part.decode("utf-8", "replace"))
        if found is not None:
            return found
    return ""


def find(root: str) -> list[LogSession]:
    out = []
    for path in files_in(root, ".json"):
        if not os.path.basename(path).startswith("T-"):
            continue
        state = file_state(path)
        if state is not None:
            out.append(LogSession("amp", first_workspace(path) or _UNKNOWN, state))
    return out


def load(found: LogSession) -> Session:
    """The full reader, told the format (detection would find it too; this skips the guess)."""
    from ...formats import load_session

    return load_session(found.main.path, format="amp")


def read_usage(path: str) -> tuple[Session, str] | None:
    from ...formats._amp_usage import read_usage as read  # msgspec is loaded only when billing

    return read(path)


AGENT = Agent(name="amp", title="Amp", flag="amp", variable="AMP_DATA_DIR", inner="threads",
              default=os.path.join(".local", "share", "amp"), layout="~/.local/share/amp/threads/T-*.json",
              find=find, format="amp", read_usage=read_usage, load=load, order=70)
