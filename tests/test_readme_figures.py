"""The README's figure tables are what the committed result files give, never typed by hand.

Each table sits between ``<!-- table:NAME -->`` markers and is rendered by the table
registered as NAME in ``pruner/readme/tables/`` from the result file it names; the
file records the command, machine, load and date of the run that wrote it.
Regenerate with ``python -m pruner.readme README.md``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner.errors import PrunerError
from pruner.readme import regenerate, splice_tables, table_regions
from pruner.readme.__main__ import main as readme_main
from pruner.readme.tables import TABLES, FigureTable, load_results, render_table

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_readme_figure_tables_match_the_result_files():
    text = README.read_text(encoding="utf-8")
    assert splice_tables(text, ROOT) == text, "run: python -m pruner.readme README.md"


def test_every_registered_table_appears_in_its_document_once():
    documents = sorted({t.document for t in TABLES.values()})
    for document in documents:
        names = [name for name, _ in table_regions((ROOT / document).read_text(encoding="utf-8"))]
        assert sorted(names) == sorted(n for n, t in TABLES.items() if t.document == document), \
            f"each table registered for {document} must be placed there exactly once"


def test_the_other_documents_tables_match_their_result_files():
    """docs/calibration.md's table (issue 19: file, requests, billed, modelled, cache-only, error)."""
    for document in sorted({t.document for t in TABLES.values()} - {"README.md"}):
        text = (ROOT / document).read_text(encoding="utf-8")
        assert splice_tables(text, ROOT) == text, f"run: python -m pruner.readme {document}"


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_result_file_says_where_and_when_it_was_measured(name):
    table = TABLES[name]
    env = load_results(table, ROOT)["meta"]["environment"]
    assert env["command"].startswith(("pruner ", "python -m pruner.")) and env["date"][:2] == "20"
    assert env["machine"]["cpus"] >= 1 and env["machine"]["system"]
    assert "load_before" in env and "load_after" in env
    rendered = render_table(table, ROOT)
    assert env["date"] in rendered and f"`{table.source}`" in rendered


def _fake_table(tmp_path: Path, data) -> FigureTable:
    (tmp_path / "r.json").write_text(json.dumps(data), encoding="utf-8")
    return FigureTable("t", "r.json", "pruner fake", lambda d: f"| n |\n|---|\n| {d['n']} |")


def test_a_result_file_without_its_environment_is_refused(tmp_path):
    table = _fake_table(tmp_path, {"meta": {}, "n": 1})
    with pytest.raises(PrunerError, match=r"r.json: field 'meta.environment' is missing.*run `pruner fake`"):
        load_results(table, tmp_path)
    with pytest.raises(PrunerError, match=r"absent.json: not found; run `pruner fake`"):
        load_results(FigureTable("t", "absent.json", "pruner fake", str), tmp_path)


def test_a_changed_result_file_changes_the_table(tmp_path, monkeypatch):
    env = {"command": "pruner fake", "date": "2025-01-02 03:04 UTC", "machine": {"system": "Linux", "cpus": 2},
           "load_before": [1.0], "load_after": [2.0]}
    table = _fake_table(tmp_path, {"meta": {"environment": env}, "n": 7})
    monkeypatch.setitem(TABLES, "t", table)
    stale = "intro\n<!-- table:t -->\n| n |\n|---|\n| 6 |\n<!-- /table:t -->\nend\n"
    fresh = splice_tables(stale, tmp_path)
    assert "| 7 |" in fresh and "| 6 |" not in fresh and fresh.endswith("<!-- /table:t -->\nend\n")
    assert "2025-01-02 03:04 UTC" in fresh and "load 1.0 at the start, 2.0 at the end" in fresh
    assert splice_tables(fresh, tmp_path) == fresh  # regenerating twice changes nothing


def test_unknown_table_names_are_an_error():
    with pytest.raises(PrunerError, match="unknown figure table 'nope'"):
        splice_tables("<!-- table:nope -->\n<!-- /table:nope -->\n", ROOT)


def test_the_generator_command_leaves_an_up_to_date_readme_alone(tmp_path, capsys):
    copy = tmp_path / "README.md"
    copy.write_text(README.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "sample_sessions").symlink_to(ROOT / "sample_sessions")
    assert readme_main([str(copy)]) == 0
    assert "already up to date" in capsys.readouterr().out
    assert regenerate(copy.read_text(encoding="utf-8"), tmp_path) == README.read_text(encoding="utf-8")
