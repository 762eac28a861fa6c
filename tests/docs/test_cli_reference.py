"""The documentation's command-line reference (docs/reference/cli.md) is what ``--help`` prints today."""

from __future__ import annotations

from pruner.cli.reference import END, PAGE, START, reference, splice
from tests.support.paths import ROOT



def test_the_reference_page_matches_help():
    text = (ROOT / PAGE).read_text(encoding="utf-8")
    assert START in text and END in text
    assert splice(text) == text, "run: python -m pruner.readme"


def test_the_reference_is_in_one_place():
    holders = [p.relative_to(ROOT).as_posix() for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
               if START in p.read_text(encoding="utf-8")]
    assert holders == [PAGE]


def test_reference_lists_every_subcommand():
    from pruner.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    ref = reference()
    for name in sub.choices:
        assert f"$ pruner {name} --help" in ref
