"""The Corpus page's live panel logic (``dashboard.logic.corpus_live``): a newer table on disk is read again,
an unchanged one is not, a table replaced by a rename while it is read is read whole (the old one, and the
new one on the next look), and a table that cannot be read keeps what is shown and says why."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from dashboard.logic import corpus_live, corpus_money
from pruner.files import write_atomic
from pruner.logs import discover, run_logs
from pruner.logs.table import TABLE
from tests.support.paths import SAMPLES
from tests.support.raw_bill import session_dollars

LINES = (SAMPLES / "claude_code.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def _found(home: Path):
    return [s for loc in discover({"HOME": str(home)}) for s in loc.sessions]


@pytest.fixture
def folder(tmp_path) -> tuple[Path, Path, Path]:
    """(home, its growing session, the logs folder) with the session's first eight lines read."""
    home = tmp_path / "home"
    session = home / ".claude/projects/-work-demo/live.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text("".join(LINES[:8]), encoding="utf-8")
    out = tmp_path / "out"
    run_logs(_found(home), str(out), strategies=("as_recorded", "cache_aware"))
    return home, session, out


def _grow(home: Path, session: Path, out: Path) -> None:
    with session.open("a", encoding="utf-8") as fh:
        fh.write("".join(LINES[8:]))
    run_logs(_found(home), str(out), strategies=("as_recorded", "cache_aware"))


def test_an_unchanged_table_is_not_read_again_and_a_newer_one_is(folder):
    home, session, out = folder
    shown = corpus_money.read_logs(out)
    assert corpus_live.refresh(shown) == corpus_live.Refresh(None)
    first = corpus_live.live(shown)
    assert first is not None and first.billed == pytest.approx(session_dollars("claude_code", [session]), abs=1e-9)
    _grow(home, session, out)
    found = corpus_live.refresh(shown)
    assert found.corpus is not None and found.problem is None
    now = corpus_live.live(found.corpus)
    assert now is not None and now.billed == pytest.approx(session_dollars("claude_code", [session]), abs=1e-9)
    assert now.billed != pytest.approx(first.billed)
    assert corpus_live.refresh(found.corpus) == corpus_live.Refresh(None)


def test_a_table_replaced_by_a_rename_while_it_is_read_is_read_whole(folder, monkeypatch):
    """The writer's rename lands between the page's open and its read: the page reads the old table whole,
    with the old table's signature, so its next look sees the new one."""
    home, session, out = folder
    old_rows = pq.read_table(out / TABLE).to_pylist()
    real = corpus_money.pq.ParquetFile
    replaced = []

    def open_then_replace(fh, *a, **kw):
        if not replaced:  # (pyarrow.parquet is one module: the run below reads through this too)
            replaced.append(True)
            _grow(home, session, out)  # run_logs writes the table by write_atomic: a rename over it
        return real(fh, *a, **kw)

    monkeypatch.setattr(corpus_money.pq, "ParquetFile", open_then_replace)
    shown = corpus_money.read_logs(out)
    assert replaced and shown.sessions["billed"].tolist() == [r["billed"] for r in old_rows]
    assert shown.signature != corpus_live.signature(out)  # the old file's, so the next look reads again
    monkeypatch.setattr(corpus_money.pq, "ParquetFile", real)
    found = corpus_live.refresh(shown)
    assert found.corpus is not None
    assert found.corpus.sessions["billed"].tolist() == pytest.approx([session_dollars("claude_code", [session])])


def test_a_table_that_cannot_be_read_keeps_what_is_shown_and_says_so(folder):
    home, session, out = folder
    shown = corpus_money.read_logs(out)
    write_atomic(os.path.join(out, TABLE), b"not parquet")
    found = corpus_live.refresh(shown)
    assert found.corpus is None and found.problem and "cannot read the logs table" in found.problem
