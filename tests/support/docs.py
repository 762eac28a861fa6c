"""The documentation a person reads, for tests that check a figure it states.

A test that pins a sentence of the documentation ("the tau-bench file therefore has 32 repeated
calls") reads it from here rather than from one file, so moving a paragraph between the README
and a page under ``docs/`` does not break the check, and removing it does.
"""

from __future__ import annotations

from tests.support.paths import ROOT



def documentation_text() -> str:
    """README.md and every page under docs/, in path order, joined by blank lines."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return "\n\n".join(p.read_text(encoding="utf-8") for p in pages)
