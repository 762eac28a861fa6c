"""The documentation's figure tables are what the committed result files give, never typed by
hand, and its generated sections (prices, cache rules, the API page) are what the code gives.

Each table sits between ``<!-- table:NAME -->`` markers, on the README or a page under
``docs/``, and is rendered by the table registered as NAME in ``pruner/readme/tables/`` from
the result file it names; the file records the command, machine, load and date of the run
that wrote it. Regenerate every page with ``python -m pruner.readme``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner.errors import PrunerError
from pruner.readme import pages, regenerate, section_regions, splice_sections, splice_tables, table_regions
from pruner.readme.sections import SECTIONS
from pruner.readme.__main__ import main as readme_main
from pruner.readme.tables import TABLES, FigureTable, load_results, render_table
from tests.support.paths import ROOT

PAGES = pages(ROOT)
BENCHMARKS = ROOT / "docs" / "explanation" / "benchmarks.md"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_figure_tables_and_sections_match_what_generates_them(page):
    text = page.read_text(encoding="utf-8")
    assert splice_tables(text, ROOT) == text, "run: python -m pruner.readme"
    assert splice_sections(text, ROOT) == text, "run: python -m pruner.readme"


def test_every_registered_table_and_section_appears_in_the_documentation_once():
    texts = [p.read_text(encoding="utf-8") for p in PAGES]
    tables = [name for text in texts for name, _ in table_regions(text)]
    sections = [name for text in texts for name, _ in section_regions(text)]
    assert sorted(tables) == sorted(TABLES), "each registered table must be placed in the documentation exactly once"
    assert sorted(sections) == sorted(SECTIONS), "each section must be placed in the documentation exactly once"


def test_the_prices_section_lists_every_model_of_the_shipped_file_with_its_source():
    data = json.loads((ROOT / "pruner" / "replay" / "prices.json").read_text(encoding="utf-8"))
    text = SECTIONS["prices"](ROOT)
    providers = {f"| {m['provider']} |" for m in data["models"]}
    rows = [line for line in text.splitlines() if line.startswith(tuple(providers))]
    assert len(rows) == len(data["models"])
    for row, model in zip(rows, data["models"]):
        assert f"`{model['model']}`" in row and model["source"] in row
        assert f"${model['input']:g} " in row and f"${model['output']:g} " in row


def test_the_api_section_names_every_public_name_once():
    import pruner

    text = SECTIONS["api"](ROOT)
    named = [line[len("::: pruner."):] for line in text.splitlines() if line.startswith("::: pruner.")]
    assert sorted(named) == sorted(pruner.__all__)


def test_a_table_registered_for_a_page_is_on_that_page():
    """``register_table(..., document=PAGE)`` says where a table belongs (docs/calibration.md's
    calibration table); the README default only means "anywhere in the documentation"."""
    for name, table in TABLES.items():
        if table.document != "README.md":
            names = [n for n, _ in table_regions((ROOT / table.document).read_text(encoding="utf-8"))]
            assert name in names, f"table {name!r} is registered for {table.document} but is not there"


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_result_file_says_where_and_when_it_was_measured(name):
    table = TABLES[name]
    env = load_results(table, ROOT)["meta"]["environment"]
    # a command, or the browser test that records the dashboard's speed
    assert env["command"].startswith(("pruner ", "python -m pruner.",
                                      "PRUNER_UPDATE_SPEED=1 python -m pytest tests/e2e/"))
    assert env["date"][:2] == "20"
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
    with pytest.raises(PrunerError, match="unknown generated section 'nope'"):
        splice_sections("<!-- generated:nope -->\n<!-- /generated:nope -->\n", ROOT)


def test_the_generator_command_leaves_an_up_to_date_page_alone(tmp_path, capsys):
    copy = tmp_path / "benchmarks.md"
    copy.write_text(BENCHMARKS.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "sample_sessions").symlink_to(ROOT / "sample_sessions")
    assert readme_main([str(copy)]) == 0
    assert "already up to date" in capsys.readouterr().out
    assert regenerate(copy.read_text(encoding="utf-8"), tmp_path) == BENCHMARKS.read_text(encoding="utf-8")


def test_the_generator_command_rewrites_a_stale_page(tmp_path, capsys):
    copy = tmp_path / "prices.md"
    copy.write_text("# p\n\n<!-- generated:prices -->\nstale\n<!-- /generated:prices -->\n", encoding="utf-8")
    assert readme_main([str(copy)]) == 0
    assert "generated parts updated" in capsys.readouterr().out
    text = copy.read_text(encoding="utf-8")
    assert "stale" not in text and "claude-sonnet-4-5-20250929" in text
