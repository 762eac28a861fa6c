"""The fast lane (``pytest -m "not slow and not e2e"``, CONTRIBUTING.md) leaves out only what is
marked, and CI leaves out nothing: every browser test is marked ``e2e``, neither CI's command nor
the project's pytest options deselect a marker, and every test the options leave out by path
(``--ignore``, ``--deselect``) is run by ``scripts/check``, which CI runs after the suite."""

from __future__ import annotations

import ast
import re
import tomllib

from tests.support.paths import ROOT

E2E = ROOT / "tests" / "e2e"


def _module_marks(path) -> set[str]:
    """The markers a test module's ``pytestmark`` applies to every test in it (``pytest.mark.NAME``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    marks: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            marks |= {n.attr for n in ast.walk(node.value)
                      if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"}
    return marks


def test_every_browser_test_module_is_marked_e2e():
    modules = sorted(E2E.glob("test_*.py"))
    assert modules, "no browser tests found: the check would pass on nothing"
    unmarked = [p.name for p in modules if "e2e" not in _module_marks(p)]
    assert not unmarked, f"tests/e2e modules without pytestmark = pytest.mark.e2e: {unmarked}"


def test_the_marks_are_read_from_the_module():
    """The reader above finds a mark in a list and misses a module without one."""
    assert "e2e" in _module_marks(E2E / "test_browser.py")
    assert _module_marks(ROOT / "tests" / "repo" / "test_fast_lane.py") == set()
    # pytestmark = [slow, usefixtures]
    assert "slow" in _module_marks(ROOT / "tests" / "unit" / "dashboard" / "test_batch_dashboard.py")


def test_ci_and_the_default_options_run_every_test():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # What follows "pytest" on CI's command line: its own options, where a -m or -k would deselect tests.
    options_given = [line.split("pytest", 1)[1] for line in ci.splitlines()
                     if "pytest" in line and not line.lstrip().startswith("#")]
    assert options_given and not any(re.search(r"(^|\s)-[mk]\b", o) for o in options_given), options_given
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert not re.search(r"(^|\s)-m\b", options.get("addopts", "")), options["addopts"]
    assert {m.split(":")[0] for m in options["markers"]} >= {"slow", "e2e"}


def _left_out(addopts: str) -> list[str]:
    """The tests pytest's options leave out by path: ``--ignore=PATH`` and ``--deselect=NODEID``."""
    return [m.group(2) for m in re.finditer(r"--(ignore|deselect)[= ](\S+)", addopts) if m.group(2) != "tests/data"]


def test_every_test_the_options_leave_out_is_run_by_the_repository_checks():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    left_out = _left_out(options["addopts"])
    assert left_out, "the options leave nothing out: then this check checks nothing"
    check = (ROOT / "scripts" / "check").read_text(encoding="utf-8")
    missing = [t for t in left_out if f'"{t}"' not in check]
    assert not missing, f"left out of the suite by pyproject's addopts but not run by scripts/check: {missing}"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "scripts/check" in ci.split(".venv/bin/python -m pytest", 1)[1], "CI runs scripts/check after the suite"


def test_the_left_out_reader_reads_both_spellings():
    assert _left_out("-ra --ignore=tests/data --ignore tests/a.py\n --deselect=tests/b.py::t") == \
        ["tests/a.py", "tests/b.py::t"]


def test_contributing_gives_the_fast_lane_command():
    assert 'pytest -m "not slow and not e2e"' in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
