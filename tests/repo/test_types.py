"""The typed contract holds: mypy (configured in pyproject.toml's ``[tool.mypy]``) finds nothing in
``pruner/`` and ``dashboard/``, the configuration's relaxations name modules that exist and spare none in
``pruner/replay/`` or ``pruner/formats/``, and the wheel ships ``py.typed`` (PEP 561) so a project that
imports pruner type-checks against these annotations.

mypy itself and the wheel's check are repository steps: ``scripts/check mypy packaging`` runs them (and
``.ci/run`` after the suite); pyproject's addopts leaves the wheel's test out of the suite."""

from __future__ import annotations

import fnmatch
import tomllib
import zipfile
from pathlib import Path

from tests.support.wheel import build_wheel

ROOT = Path(__file__).resolve().parents[2]


def _mypy_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_mypy_is_run_on_what_the_configuration_names():
    """mypy itself runs in ``scripts/check``'s ``mypy`` step (``.ci/run`` runs it after the suite), on the
    folders a bare ``mypy`` checks."""
    assert _mypy_config()["files"] == ["pruner", "dashboard"]
    check = (ROOT / "scripts" / "check").read_text(encoding="utf-8")
    assert '"mypy", "--config-file", "pyproject.toml", "pruner", "dashboard"' in check


#: The strict settings an override switches off to accept an unannotated module ("NOT YET STRICT").
RELAXATIONS = ("disallow_untyped_defs", "disallow_incomplete_defs", "disallow_untyped_calls",
               "disallow_any_generics", "warn_return_any", "check_untyped_defs")


def test_no_module_of_replay_or_formats_is_exempt_from_strict_typing():
    config = _mypy_config()
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for p in (ROOT / "pruner").rglob("*.py")}
    guarded = {m for m in modules if m.startswith(("pruner.replay", "pruner.formats"))}
    assert "pruner.replay.engine" in guarded and "pruner.formats.claude_code" in guarded
    for override in config["overrides"]:
        relaxed = [k for k in RELAXATIONS if override.get(k) is False] + \
            (["ignore_errors"] if override.get("ignore_errors") else [])
        if not relaxed:
            continue
        spared = {m for p in _as_list(override["module"]) for m in guarded if fnmatch.fnmatchcase(m, p)}
        assert not spared, f"{sorted(spared)} relaxed by {relaxed}"


def test_dashboard_overrides_check_every_body():
    # the dashboard may leave helpers unannotated, but mypy checks each body: nothing is ignored
    for override in _mypy_config()["overrides"]:
        if any(str(m).startswith("dashboard") for m in _as_list(override["module"])):
            assert not override.get("ignore_errors") and override.get("check_untyped_defs", True), override


def test_the_config_is_strict_on_pruner_where_it_does_not_say_otherwise():
    config = _mypy_config()
    assert config["strict"] is True and config["check_untyped_defs"] is True
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for p in (ROOT / "pruner").rglob("*.py")}
    relaxed = [o for o in config["overrides"] if any(str(m).startswith("pruner") for m in _as_list(o["module"]))]
    for override in relaxed:
        # each relaxation names modules that exist (a stale entry would hide a new module's errors)
        for pattern in _as_list(override["module"]):
            assert any(fnmatch.fnmatchcase(m, pattern) for m in modules), f"no module matches {pattern!r}"
        # and it only relaxes the annotation rules, never turns checking of bodies off
        assert not override.get("ignore_errors") and override.get("check_untyped_defs", True), override
    strict = modules - {m for o in relaxed for p in _as_list(o["module"]) for m in modules if fnmatch.fnmatchcase(m, p)}
    # the extension points' contracts are strict
    for contract in ("pruner.registry", "pruner.engine.trackers", "pruner.replay.cache", "pruner.replay.strategy",
                     "pruner.rules", "pruner.formats"):
        assert contract in strict, contract


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def test_the_wheel_ships_py_typed(tmp_path):
    wheel = build_wheel(tmp_path)  # from a copy, with no build isolation: offline
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert "pruner/py.typed" in names, sorted(n for n in names if not n.endswith(".py"))
    assert "pruner/replay/prices.json" in names  # the other package data, so the check reads the real wheel
