"""The house keeps its layers: no import circle between modules, and no arrow that climbs.

``LAYERS`` is the table in CONTRIBUTING.md ("Layers"), bottom first: a module imports only from its
own unit or a lower layer, and the units of one layer (``formats`` and ``compaction``; the CLI and
the dashboard) do not import each other. What counts as an arrow (every import, function-local and
``TYPE_CHECKING`` ones too) is said in ``tests/support/imports.py``.
"""

from __future__ import annotations


import re

import pytest
from tests.support.imports import Arrow, against_layers, arrows, circles
from tests.support.paths import ROOT

PACKAGES = ("pruner", "dashboard")

#: Bottom first: layer name -> its units; a unit is a few files or folders (a folder ends in ``/``, and
#: the longest entry that holds a module places it) whose modules may import each other, and the units
#: of one layer are independent. The rules stand between the analysis they read (the session's index,
#: PruneConfig) and the engine whose passes run them.
LAYERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "foundation": (("pruner/errors.py", "pruner/money.py", "pruner/setting_fields.py", "pruner/registry.py",
                    "pruner/files.py", "pruner/jsonio.py", "pruner/tokens.py", "pruner/model.py", "pruner/terms.py"),),
    "analysis": (("pruner/analysis/",),),
    "rules": (("pruner/rules/",),),
    "engine": (("pruner/engine/",),),
    "formats, compaction": (("pruner/formats/",), ("pruner/compaction/",)),
    "replay": (("pruner/replay/",),),
    "library": (("pruner/__init__.py",),),
    "bench": (("pruner/bench/",),),
    "batch": (("pruner/batch/",),),
    "logs": (("pruner/logs/",),),
    "cli, dashboard": (("pruner/cli/", "pruner/__main__.py"), ("dashboard/",)),
    "readme": (("pruner/readme/",),),
}


@pytest.fixture(scope="module")
def graph() -> list[Arrow]:
    return arrows(ROOT, PACKAGES)


def test_the_graph_sees_the_project(graph):
    """A check over an empty or partial graph passes vacuously: it reads every package and knows its
    known arrows (one top-level, one function-local, one under TYPE_CHECKING)."""
    seen = {(a.source, a.target) for a in graph}
    assert ("pruner/engine/prune.py", "pruner/rules/__init__.py") in seen
    assert ("pruner/replay/engine.py", "pruner/replay/recall.py") in seen  # function-local
    assert ("pruner/rules/__init__.py", "pruner/analysis/config.py") in seen  # under TYPE_CHECKING
    assert len({a.source for a in graph}) > 150


def test_no_module_is_in_an_import_circle(graph):
    found = circles(graph)
    assert not found, "import circles (each chain closes on its first file):\n" + "\n".join(
        "  " + "  ->  ".join(str(a) for a in chain) for chain in found)


def test_no_arrow_climbs_against_the_layers(graph):
    problems = against_layers(graph, LAYERS)
    assert not problems, "arrows against the layers (CONTRIBUTING.md, Layers):\n" + "\n".join(
        "  " + p for p in problems)


def test_contributing_shows_the_layers_of_this_test():
    """The table a contributor reads is the one enforced: every layer, in order, with every entry."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and line[2:3].isdigit()]
    assert [row.split("|")[2].strip() for row in rows] == list(reversed(LAYERS)), "layer names, top first"
    for row, units in zip(rows, reversed(LAYERS.values())):
        shown = [sorted(re.findall(r"`([^`]+)`", unit)) for unit in row.split("|")[3].split(";")]
        assert shown == [sorted(unit) for unit in units], row


# The checks themselves, on tiny graphs: each must fail on what it exists to find.

TINY_LAYERS = {"low": (("a/",),), "middle": (("b/",), ("c/",)), "high": (("d.py",),)}


def _graph(*pairs: str) -> list[Arrow]:
    return [Arrow(*pair.split(" -> "), line=n + 1) for n, pair in enumerate(pairs)]


def test_a_circle_is_found_and_printed_as_its_chain():
    found = circles(_graph("a/x.py -> a/y.py", "a/y.py -> a/z.py", "a/z.py -> a/x.py", "a/z.py -> b/w.py"))
    assert [[str(a) for a in chain] for chain in found] == [
        ["a/x.py:1 -> a/y.py", "a/y.py:2 -> a/z.py", "a/z.py:3 -> a/x.py"]]
    assert circles(_graph("a/x.py -> a/y.py", "a/y.py -> a/z.py")) == []


def test_an_arrow_climbing_or_sideways_is_named_and_one_down_is_not():
    problems = against_layers(_graph("a/x.py -> b/y.py", "b/y.py -> c/z.py", "d.py -> a/x.py", "b/y.py -> b/w.py"),
                              TINY_LAYERS)
    assert problems == [
        "climbs: a/x.py:1 -> b/y.py (from layer 1, low, up to layer 2, middle)",
        "sideways: b/y.py:2 -> c/z.py (b/ and c/ are independent units of layer 2, middle)"]


def test_a_module_on_no_layer_is_a_problem():
    assert against_layers(_graph("e/new.py -> a/x.py"), TINY_LAYERS) == [
        "e/new.py is on no layer: place it in LAYERS (tests/repo/test_layers.py) and in CONTRIBUTING.md"]


def test_function_local_and_type_checking_imports_are_arrows(tmp_path):
    """The arrows that hide: an import inside a function, one under ``if TYPE_CHECKING:``, a relative
    ``from . import module`` (an arrow to that module, not to the package)."""
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .high import H\n")
    (pkg / "high.py").write_text("def f():\n    from p import low\n    return low\n")
    (pkg / "side.py").write_text("import p.low\nfrom . import high\n")
    assert [str(a) for a in arrows(tmp_path, ["p"])] == [
        "p/high.py:2 -> p/low.py", "p/low.py:3 -> p/high.py", "p/side.py:1 -> p/low.py", "p/side.py:2 -> p/high.py"]
    assert [[str(a) for a in chain] for chain in circles(arrows(tmp_path, ["p"]))] == [
        ["p/high.py:2 -> p/low.py", "p/low.py:3 -> p/high.py"]]
