"""The paths every test file uses, defined once (``tests/conftest.py`` gives them as fixtures too).

``REAL_DATA`` is ``../shared/data/real`` beside the repository (read-only real transcripts; tests that
need it skip when it is absent, through the ``real_data`` fixture or ``REAL_DATA.is_dir()``).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
SAMPLES = ROOT / "sample_sessions"
REAL_DATA = ROOT.parent / "shared" / "data" / "real"
