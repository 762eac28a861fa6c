"""The Corpus page's live panel on a logs folder: is the table on disk newer than the one shown, and the
session being written now (``pruner.logs.live``: the same figures ``pruner logs --watch`` prints).

The table is read from disk, where ``pruner logs`` (and each cycle of ``--watch``) replaces it by one
atomic rename (``pruner.files.write_atomic``). The page reads it through one open file
(``corpus_money.read_logs``), and the signature it compares is taken from that same open file, so a
table replaced while it is read is either the old one whole or the new one whole, never a mix: a
replacement after the open is seen on the next tick, by its new signature. A table that cannot be read
at that moment (a writer that is not atomic, a disk error) keeps the figures shown, and says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pruner.errors import ConfigurationError
from pruner.logs.live import LiveSession, live_session
from pruner.logs.table import TABLE

from . import corpus_money

#: Seconds between two looks at the table (the page's fragment runs this often; a look is one ``stat``).
LIVE_SECONDS = 2.0


def signature(folder: str | os.PathLike[str]) -> corpus_money.Signature | None:
    """The table's identity on disk now (inode, size, modification time); None when there is none."""
    try:
        return corpus_money.signature_of(os.stat(Path(folder) / TABLE))
    except OSError:
        return None


@dataclass(frozen=True)
class Refresh:
    """What a look at the folder found: a newer table read (``corpus``), or why it was not (``problem``)."""

    corpus: corpus_money.LogsCorpus | None  # None: the one shown is still the newest (or could not be read)
    problem: str | None = None


def refresh(shown: corpus_money.LogsCorpus) -> Refresh:
    """The folder's table again when it changed since ``shown`` was read; else nothing to do."""
    now = signature(shown.folder)
    if now is None or now == shown.signature:
        return Refresh(None)
    try:
        return Refresh(corpus_money.read_logs(Path(shown.folder)))
    except ConfigurationError as exc:
        return Refresh(None, f"{exc} The figures shown are from the "
                             "table as it was read before; the page tries again.")


def live(corpus: corpus_money.LogsCorpus) -> LiveSession | None:
    """The session being written now, over every row of the table (whatever the filters below keep)."""
    return live_session(corpus_money.folder_rows(corpus.sessions), corpus.strategies)


def modified_text(live: LiveSession) -> str:
    """When its files were last written, as the run saw them (UTC)."""
    if live.modified_ns < 0:
        return "-"
    return datetime.fromtimestamp(live.modified_ns / 1e9, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
