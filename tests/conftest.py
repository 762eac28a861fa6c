"""Shared test settings.

Hypothesis runs 500 examples per property when ``CI`` is set (as the issue asks)
and 100 otherwise, with no deadline: these machines are noisy and speed is
measured by the benchmarks, never asserted here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
REAL_DATA = ROOT.parent / "shared" / "data" / "real"
SAMPLES = ROOT / "sample_sessions"

# Fixtures shared by several test files (imported as ``tests.…``: the repository
# root is on sys.path because tests/ is a package).
pytest_plugins = ("tests.support.openai_server",)

settings.register_profile("ci", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def real_data() -> Path:
    """The folder of real recorded transcripts; skips the test when it is absent."""
    if not REAL_DATA.is_dir():
        pytest.skip(f"real transcripts not found at {REAL_DATA} (they live in ../shared/data/real)")
    return REAL_DATA


@pytest.fixture
def samples() -> Path:
    return SAMPLES
