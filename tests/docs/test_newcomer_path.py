"""A newcomer's path, written down and checked: from a fresh clone, the README's two set-up
commands, then its three examples (a transcript inspected and pruned; a session replayed and its
bill read; a folder of agent logs read for the Corpus page), each run as the README shows it and
printing what the README shows; then the links that lead on into the documentation.
"""

from __future__ import annotations

import re

import pytest
from tests.docs.test_readme_examples import examples, example_env, run_console, run_python  # noqa: F401
from tests.support.paths import ROOT

README = ROOT / "README.md"
MAX_LINES = 250


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_is_a_page():
    assert len(_readme().splitlines()) <= MAX_LINES


def test_ci_runs_the_readmes_test_command_exactly():
    setup = _section(_readme(), "Set-up: two commands")
    commands = re.findall(r"```bash\n(.*?)\n```", setup, re.S)
    assert len(commands) == 2, "the set-up is two commands: the dashboard's and the test suite's"
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert commands[1] in ci, ".ci/run must run the README's test command, exactly"
    # then the repository checks, and nothing after them
    assert ci[-1] == ".venv/bin/python scripts/check" and ci.index(commands[1]) == len(ci) - 2, ci


def test_the_readmes_dashboard_command_installs_its_extra_and_is_what_the_browser_test_starts():
    """A merge put back the set-up line of before the core install lost Streamlit (``pip install -e .``
    then ``streamlit run``): on a fresh clone that command fails, Streamlit being an extra now. The
    README's first command installs ``[dashboard]`` and starts the app the way tests/e2e/test_browser.py
    starts it.

    Round 4, defect 16."""
    setup = _section(_readme(), "Set-up: two commands")
    first = re.findall(r"```bash\n(.*?)\n```", setup, re.S)[0]
    install, start = first.split(" && ")[1:]
    assert "'.[dashboard]'" in install or "'.[test]'" in install, install
    # the browser tests' server (tests/e2e/test_browser.py's `server`) is started there
    browser = (ROOT / "tests" / "support" / "dashboard_server.py").read_text(encoding="utf-8")
    started = re.search(r"README_COMMAND = \[str\(Path\(sys.executable\).with_name\(\"(\w+)\"\)\)((?:, \"[^\"]+\")*)\]",
                        browser)
    assert started is not None
    argv = [started.group(1)] + re.findall(r'"([^"]+)"', started.group(2))
    assert start.split() == [f".venv/bin/{argv[0]}", *argv[1:]], (start, argv)


@pytest.mark.slow
def test_the_three_examples_run_and_print_what_the_readme_shows(example_env):  # noqa: F811
    section = _section(_readme(), "Three examples")
    parts = re.split(r"^### ", section, flags=re.M)[1:]
    assert len(parts) == 3, [p.splitlines()[0] for p in parts]
    wanted = [("pruner prune", "from pruner import"), ("pruner replay",), ("pruner logs", "corpus?corpus=")]
    for part, needles in zip(parts, wanted):
        title = part.splitlines()[0]
        for needle in needles:
            assert needle in part, f"example {title!r} no longer shows {needle!r}"
        found, problems = examples(part.splitlines(), f"README.md ({title})")
        assert found and not problems, (title, problems)
        for ex in found:
            if ex.kind == "python":
                shown = [ln.rstrip() for ln in ex.output.lines] if ex.output else []
                assert run_python(ex, example_env) == shown, title
            else:
                for command, shown, actual in run_console(ex, example_env):
                    assert actual == shown, f"{title}: `{command}` prints\n" + "\n".join(actual)
    out = re.search(r"--out (\S+)", parts[2]).group(1)
    assert f"corpus?corpus={out}>" in parts[2], "the Corpus link must open the folder the batch wrote"


def test_every_link_in_the_readme_leads_somewhere():
    links = re.findall(r"\]\(([^)\s]+)\)", _readme())
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert len(local) >= 10
    for link in local:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), f"README.md links to {link}, which is not in the repository"
        if anchor:
            slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-")
                     for h in re.findall(r"^#+ (.+)$", target.read_text(encoding="utf-8"), re.M)}
            assert anchor in slugs, f"README.md links to {link}: no such heading"


def test_the_readme_says_the_dashboard_opens_on_the_start_page_and_cites_only_what_a_clone_has():
    """Issue 33: the README said the dashboard "opens on a sample session that is already pruned" (it opens on
    the Start page), and the README and the Benchmarks page cited internal issue numbers and the shared real
    logs a user of the repository does not have. A merge put the old sentences back once; this holds them.
    The Start page's samples are read from the page's own list; every repository path the README names,
    in its text or its commands, must exist in the checkout.

    Round 4, defect 33."""
    import dataclasses

    from dashboard.logic import benchmarks, start

    text = _readme()
    setup = _section(text, "Set-up: two commands")
    said = re.search(r"\*\*Run the dashboard\.\*\* (.+?):\n", setup, re.S).group(1)
    assert "already pruned" not in said and said.startswith("It opens on the Start page")
    count = {1: "one", 2: "two", 3: "three", 4: "four"}[len(start.SAMPLES)]
    assert f"one of {count} samples" in said
    page = (ROOT / "dashboard" / "app_pages" / "start.py").read_text(encoding="utf-8")
    assert "`pruner logs` or `pruner batch`" in said and "`pruner logs` or `pruner batch`" in page
    assert "Session explorer" in said
    tutorial = (ROOT / "docs" / "tutorials" / "first-transcript.md").read_text(encoding="utf-8").replace("\n", " ")
    assert "it opens on the Start page" in tutorial and f'"{start.SAMPLES[0][0]}"' in tutorial  # the same claim

    cited = set(re.findall(r"(?<![\w/.~])((?:\.\./)?(?:sample_sessions|docs|tests|dashboard|pruner|scripts|\.ci)"
                           r"/[\w./-]*\w)", text))
    assert len(cited) >= 10
    missing = sorted(p for p in cited if not (ROOT / p).exists())
    assert missing == [], f"README.md names paths a clone does not have: {missing}"
    assert "../shared" not in text and "shared real" not in text
    assert re.findall(r"\bissues? \d+", text, re.I) == []
    reference = " ".join(str(v) for v in dataclasses.asdict(benchmarks.REFERENCE).values())
    assert re.findall(r"\bissues? \d+|\.\./shared", reference, re.I) == []  # the Benchmarks page's source lines
