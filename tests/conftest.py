"""Shared test settings and fixtures.

The paths every test file uses (``ROOT``, ``SAMPLES``, ``REAL_DATA``) are defined once, in
``tests/support/paths.py``: import them from there in a module that needs them at import time (a
``parametrize`` list), or take the fixtures below.

Hypothesis runs 500 examples per property when ``CI`` is set (the same examples on every
run: derandomized), 5,000 random ones under ``PRUNER_NIGHTLY=1``, and 100 otherwise, with no
deadline: these machines are noisy and speed is measured by the benchmarks, never asserted here.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.paths import REAL_DATA, ROOT, SAMPLES
from tests.support.profile import profile

# Fixtures shared by several test files (imported as ``tests.…``: the repository
# root is on sys.path because tests/ is a package).
# The dashboard's server for the browser tests: one per xdist worker (tests/support/dashboard_server.py).
pytest_plugins = ("tests.support.openai_server", "tests.support.dashboard_server")

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
# CI draws the same examples on every run (derandomize: seeded from each test's own source), so a run
# passes or fails on the code, never on the draw: a landing is not a lottery. Finding new examples is
# the nightly profile's job (PRUNER_NIGHTLY=1: random seeds, 5,000 examples), run by hand or on a
# schedule; a failure it finds becomes a regression example (as round 4's defect 15 did).
settings.register_profile("ci", max_examples=500, deadline=None, derandomize=True, database=None,
                          suppress_health_check=_QUIET)
settings.register_profile("nightly", max_examples=5_000, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(profile())


@pytest.fixture
def real_data() -> Path:
    """The folder of real recorded transcripts; skips the test when it is absent."""
    if not REAL_DATA.is_dir():
        pytest.skip(f"real transcripts not found at {REAL_DATA} (they live in ../shared/data/real)")
    return REAL_DATA


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def root() -> Path:
    """The repository root."""
    return ROOT


@pytest.fixture
def fresh_streamlit_caches():
    """Empty Streamlit caches before and after the test, so no test sees another's cached values
    (the dashboard's loaders and analyses are cached). Use it per module with
    ``pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")``."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


# Every library error the suite makes is recorded; the run fails if one named a flag (issue 24).
def pytest_configure(config) -> None:
    from tests.support import error_messages
    error_messages.start()


def pytest_runtest_setup(item) -> None:
    from tests.support import error_messages
    error_messages.current_test[0] = item.nodeid


# The run is split over pytest-xdist workers (pyproject's addopts: ``-n 3 --dist loadfile``), scheduled by
# FileOrTest below: a test goes to whichever worker is free, except that the tests of a module with a
# module- or class-scoped fixture (a built site, a batch folder, the browser tests' browser) stay together on
# one worker, so the fixture is made once, as in a run on one process. (pytest-xdist's own ``loadgroup``
# cannot group here: with pytest 9 it no longer changes a test's node id, which is how it groups; SAME_WORKER
# below does its job.)
_SHARED_SCOPE = re.compile(r"""scope\s*=\s*["'](module|class|package)["']""")


#: Modules that use a module-scoped fixture defined in another module (the check below finds them).
IMPORT_SHARED_FIXTURES = {
    "tests/docs/test_newcomer_path.py",  # test_readme_examples' example_env
}


#: Modules that must not run at the same time as each other share a worker (and so run one after the other).
SAME_WORKER = {
    # both run the README's third example, which empties and fills /tmp/my-logs and /tmp/pruner-logs
    "tests/docs/test_newcomer_path.py": "readme-examples",
    "tests/docs/test_readme_examples.py": "readme-examples",
}


@functools.cache
def kept_together(path: str) -> bool:
    """Whether the tests of the file at ``path`` (relative to the root) run on one worker: a browser test
    module (they import each other's module-scoped fixtures), a doctest module, or a test module that
    defines a fixture of module, class or package scope."""
    if path.startswith("tests/e2e/") or not path.startswith("tests/") or path in IMPORT_SHARED_FIXTURES:
        return True
    try:
        return bool(_SHARED_SCOPE.search((ROOT / path).read_text(encoding="utf-8")))
    except OSError:
        return True


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileOrTest(LoadFileScheduling):
        """``loadfile`` for the modules :func:`kept_together` names, ``load`` (one test at a time) for the rest."""

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return SAME_WORKER.get(path) or (path if kept_together(path) else nodeid)

    return FileOrTest(config, log)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    """A test spread one at a time that uses a module-scoped fixture (one imported from another module, say)
    would make that fixture once per worker: the run stops and says where instead."""
    wrong = set()
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if not kept_together(path) and any(d.scope in ("module", "class", "package") for c in defs for d in c):
            wrong.add(path)
    if wrong:
        raise pytest.UsageError(f"{sorted(wrong)} use a module- or class-scoped fixture defined elsewhere: add "
                                "them to IMPORT_SHARED_FIXTURES in tests/conftest.py, so each runs on one worker")


#: What the workers' error-message checks found (filled on the xdist controller as each worker ends).
_WORKER_FLAG_LINES: list[str] = []


@pytest.hookimpl(optionalhook=True)  # an xdist hook: the controller collects each worker's findings
def pytest_testnodedown(node, error) -> None:
    lines = getattr(node, "workeroutput", {}).get("pruner_error_flags", [])
    _WORKER_FLAG_LINES.extend(lines)


def pytest_sessionfinish(session, exitstatus) -> None:
    from tests.support import error_messages
    found = error_messages.naming_a_flag()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller reports what every worker found
        workeroutput["pruner_error_flags"] = found
        return
    found = sorted(set(found) | set(_WORKER_FLAG_LINES))
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        say = reporter.write_line if reporter is not None else print
        say(f"FAILED: {len(found)} library error message(s) name a command-line flag (name the setting "
            "instead; the CLI adds its flag):")
        for line in found:
            say(f"  {line}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
