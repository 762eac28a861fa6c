"""Build pruner's wheel as a release would, for the tests that read or install it.

From a copy of what the wheel is made of, so the checkout gets no ``build/`` or egg-info and no
stale file there can slip into the wheel; with no build isolation, so it needs no network (the
``setuptools`` and ``wheel`` of the test environment build it, in-process, through the PEP 517 hook).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

#: What pyproject.toml's packages and package-dir read (README.md is the long description).
SOURCES = ("pyproject.toml", "README.md", "pruner", "dashboard", "sample_sessions")


def build_wheel(work: Path) -> Path:
    """Build the wheel under ``work`` (a fresh folder) and return its path."""
    src, out = work / "src", work / "dist"
    src.mkdir(parents=True)
    out.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    done = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta; "
                           "print(build_meta.build_wheel(sys.argv[1]))", str(out)],
                          cwd=src, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return out / done.stdout.strip().splitlines()[-1]
