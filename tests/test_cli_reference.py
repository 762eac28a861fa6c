"""The README's command-line reference is what ``--help`` prints today."""

from __future__ import annotations

from pathlib import Path

from pruner.cli.reference import END, START, reference, splice

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_reference_matches_help():
    text = README.read_text(encoding="utf-8")
    assert START in text and END in text
    assert splice(text) == text, "run: python -m pruner.cli.reference README.md"


def test_reference_lists_every_subcommand():
    from pruner.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    ref = reference()
    for name in sub.choices:
        assert f"$ pruner {name} --help" in ref
