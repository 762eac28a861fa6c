"""The README's library example runs and prints what the README says it prints."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _library_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Library", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_library_example_prints_what_the_readme_shows(monkeypatch):
    code = _library_example()
    expected = []
    for line in code.splitlines():
        if line.startswith("print(") and "#" in line:
            expected.append(line.split("#", 1)[1].strip())
        elif line.startswith("# "):
            expected.append(line[2:].strip())
    assert len(expected) >= 5
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert [" ".join(ln.split()) for ln in out.getvalue().splitlines()] == [" ".join(e.split()) for e in expected]
    assert os.path.exists(ROOT / "sample_sessions" / "native_demo.jsonl")
