"""Shared test settings and fixtures.

The paths every test file uses (``ROOT``, ``SAMPLES``, ``REAL_DATA``) are defined once, in
``tests/support/paths.py``: import them from there in a module that needs them at import time (a
``parametrize`` list), or take the fixtures below.

Hypothesis runs 500 examples per property when ``CI`` is set (the same examples on every
run: derandomized), 5,000 random ones under ``PRUNER_NIGHTLY=1``, and 100 otherwise, with no
deadline: these machines are noisy and speed is measured by the benchmarks, never asserted here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.paths import REAL_DATA, ROOT, SAMPLES
from tests.support.profile import profile

# Fixtures shared by several test files (imported as ``tests.…``: the repository
# root is on sys.path because tests/ is a package).
pytest_plugins = ("tests.support.openai_server",)

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
# CI draws the same examples on every run (derandomize: seeded from each test's own source), so a run
# passes or fails on the code, never on the draw: a landing is not a lottery. Finding new examples is
# the nightly profile's job (PRUNER_NIGHTLY=1: random seeds, 5,000 examples), run by hand or on a
# schedule; a failure it finds becomes a test_defect_* example here (as test_defect_r4_15 did).
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


def pytest_sessionfinish(session, exitstatus) -> None:
    from tests.support import error_messages
    found = error_messages.naming_a_flag()
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        say = reporter.write_line if reporter is not None else print
        say(f"FAILED: {len(found)} library error message(s) name a command-line flag (name the setting "
            "instead; the CLI adds its flag):")
        for line in found:
            say(f"  {line}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
