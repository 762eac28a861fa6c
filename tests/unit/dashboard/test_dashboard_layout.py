"""The dashboard's layout: one page file and one logic module per page, no dead fallbacks, no restated defaults."""

from __future__ import annotations

import ast
import importlib

import pytest

from pruner import PruneConfig
from tests.support.paths import ROOT

DASHBOARD = ROOT / "dashboard"


def _pages() -> tuple:
    """``PAGES`` from dashboard/app.py, read without running the app."""
    tree = ast.parse((DASHBOARD / "app.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(getattr(t, "id", None) == "PAGES" for t in targets):
                return ast.literal_eval(node.value)
    raise AssertionError("dashboard/app.py defines no PAGES")


@pytest.mark.parametrize("name", [p[0] for p in _pages()])
def test_every_page_has_a_page_file_and_an_importable_logic_module(name):
    assert (DASHBOARD / "app_pages" / f"{name}.py").is_file()
    module = importlib.import_module(f"dashboard.logic.{name}")
    assert module.__doc__, "a logic module says what it owns"
    page = (DASHBOARD / "app_pages" / f"{name}.py").read_text(encoding="utf-8")
    assert f"from dashboard.logic import {name} as logic" in page


def test_every_page_file_is_registered():
    registered = {p[0] for p in _pages()}
    assert {p.stem for p in (DASHBOARD / "app_pages").glob("*.py")} == registered


def _dashboard_sources():
    return [(p, p.read_text(encoding="utf-8")) for p in sorted(DASHBOARD.rglob("*.py"))]


def test_no_fallback_for_a_library_module_that_is_not_installed():
    """Every pruner module is installed with the package: a fallback would only hide a real ImportError."""
    for path, text in _dashboard_sources():
        for pattern in ("find_spec", "importlib.import_module", "not installed", "except ImportError"):
            assert pattern not in text, f"{path.relative_to(ROOT)} contains {pattern!r}"


def test_pruning_defaults_come_from_the_library():
    """The settings are PruneConfig itself: no module restates a PruneConfig field's value as a literal."""
    fields = set(PruneConfig.__dataclass_fields__)
    for path, text in _dashboard_sources():
        for node in ast.walk(ast.parse(text)):
            restated = []
            callee = getattr(getattr(node, "func", None), "id", None) or getattr(getattr(node, "func", None),
                                                                                 "attr", None)
            if isinstance(node, ast.Call) and callee in ("PruneConfig", "replace"):
                restated += [k.arg for k in node.keywords if k.arg in fields and isinstance(k.value, ast.Constant)]
            if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) in fields \
                    and isinstance(node.value, ast.Constant):
                restated.append(node.target.id)
            # the guide's steps switch passes on and off, which is their point; anything else is a default
            restated = [f for f in restated if f not in ("expire", "deduplicate", "restore")]
            assert not restated, f"{path.relative_to(ROOT)} restates PruneConfig.{restated[0]}"
    assert PruneConfig().near_duplicate_threshold  # the library owns the default
