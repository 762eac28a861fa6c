"""The documentation site builds with ``mkdocs build --strict``, offline, and its generated
reference holds what the code says.

``--strict`` turns every warning into a failure: a broken link or anchor, a page missing from
the nav or a nav entry without a page, an included file that is not there, a ``:::`` reference
mkdocstrings cannot resolve. The build runs with the outbound audit hook on ``PYTHONPATH``
(``tests/support/outbound``), so a theme or plugin that reaches for another host fails it.
On this 2-core machine the build takes about 3 s.
"""

from __future__ import annotations

import html
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pruner
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # CONTRIBUTING.md, "Running the tests": out of the fast lane

OUTBOUND_AUDIT = ROOT / "tests" / "support" / "outbound"
TIMEOUT_S = 300


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    log = out.parent / "outbound.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(OUTBOUND_AUDIT), str(ROOT),
                                                         os.environ.get("PYTHONPATH", "")]),
           "PRUNER_OUTBOUND_LOG": str(log), "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    outbound = log.read_text(encoding="utf-8") if log.exists() else ""
    assert not outbound.strip(), f"the build reached for another host:\n{outbound}"
    return out


def _text(page: Path) -> str:
    """A built page's visible text, whitespace collapsed."""
    body = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page.read_text(encoding="utf-8"), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def _first_paragraph(doc: str) -> str:
    """A docstring's first paragraph as the page shows it: ``code`` marks dropped, whitespace collapsed."""
    para = inspect.cleandoc(doc).split("\n\n", 1)[0]
    return " ".join(para.replace("``", "").replace("`", "").split())


def _doc(name: str) -> str:
    obj = getattr(pruner, name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return inspect.getdoc(obj) or ""
    import griffe  # mkdocstrings' own reader: a constant's docstring is the string after its assignment

    found = griffe.load("pruner", search_paths=[str(ROOT)])[name].docstring
    return found.value if found else ""


def test_the_site_builds_strict_and_offline(site):
    for page in ("index.html", "tutorials/first-transcript/index.html", "how-to/agent-loop/index.html",
                 "reference/cli/index.html", "explanation/passes/index.html", "changelog/index.html",
                 "assets/screenshots/explorer.png"):
        assert (site / page).is_file(), page


@pytest.mark.parametrize("name", sorted(pruner.__all__))
def test_every_public_name_is_in_the_api_reference_with_its_docstring(site, name):
    page = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert f'id="pruner.{name}"' in page, f"pruner.{name} has no entry in the API reference"
    doc = _doc(name)
    assert doc.strip(), f"pruner.{name} has no docstring to show"
    # compared without whitespace: the page puts tags (so spaces) around every code span
    text = "".join(_text(site / "reference" / "api" / "index.html").split())
    assert "".join(_first_paragraph(doc).split()) in text, f"pruner.{name}'s docstring is not on the page"


def test_the_cli_reference_page_shows_every_help_text(site):
    from pruner.cli.reference import reference

    text = _text(site / "reference" / "cli" / "index.html")
    for block in re.findall(r"```\n(.*?)```", reference(), re.S):
        assert " ".join(block.split()) in text


def test_a_broken_link_fails_the_build(tmp_path):
    """The strictness is real: the same configuration with one dead link does not build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# x\n\nSee [nowhere](missing.md).\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nstrict: true\ntheme:\n  name: material\n  font: false\n",
                                         encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode != 0 and "missing.md" in proc.stderr
