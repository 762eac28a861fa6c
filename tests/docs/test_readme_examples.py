"""Every example in the README, CONTRIBUTING.md and the documentation site (``docs/``) runs as a user runs
it, and prints exactly what the page shows.

The rules, checked for every fenced block outside the generated parts (the CLI
reference, the figure tables and the generated sections, which have their own tests):

* a ``python`` block is written to a file and run with ``python FILE`` in a fresh
  interpreter from the repository root, as a reader who saves it runs it (so a script
  whose worker processes import the main module, as Dask's do, must guard its entry
  point); what it prints must equal the ``text`` block that directly follows it (only
  blank lines between), and a block that prints nothing has no such block;
* a ``console`` block holds ``$ command`` lines, each followed by what it prints
  (stdout and stderr, as a terminal shows them); each command runs in ``bash`` from
  the repository root with this interpreter's ``bin`` first on ``PATH``;
* any other block must be marked, on the line right above its opening fence, with
  ``<!-- not executed: REASON -->`` saying why it cannot run in a test.

Examples never reach the network: ``OPENAI_BASE_URL`` points at the local
OpenAI-compatible test server (``tests/support/openai_server.py``) while they run.

To rewrite the shown output from what the examples print today:
``PRUNER_UPDATE_README=1 .venv/bin/python -m pytest tests/docs/test_readme_examples.py`` (every page)
(then read the diff: a changed output is a changed claim).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from pruner.readme import pages
from tests.support.openai_server import FakeOpenAIServer
from tests.support.paths import ROOT

PAGES = [p.relative_to(ROOT).as_posix() for p in pages(ROOT)] + ["CONTRIBUTING.md"]
NOT_EXECUTED = re.compile(r"^<!-- not executed: (?P<reason>\S.{8,}?) -->$")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
# Generated regions: their content is checked by test_cli_reference.py and test_readme_figures.py.
GENERATED = (re.compile(r"^<!-- cli-reference:start"), re.compile(r"^<!-- cli-reference:end"))
TABLE_START = re.compile(r"^<!-- (table|generated):[\w.-]+")
TABLE_END = re.compile(r"^<!-- /(table|generated):[\w.-]+ -->$")
# A guard against a hung command, not a speed check: on the shared 2-core machine, with the suite's three
# workers and other suites running (load 20 to 30, 2026-12-07), the README's `pruner replay` of the
# 388-request sample took over 120 s, which failed two pages with a timeout.
TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    lang: str
    first: int  # index of the first content line (0-based, in the README's lines)
    end: int  # index of the closing fence
    lines: tuple[str, ...]
    marker: str | None  # the line right above the opening fence

    @property
    def line(self) -> int:  # the opening fence's line number, 1-based, for messages
        return self.first


def blocks(lines: list[str], page: str = "README.md") -> list[Block]:
    """Every fenced block outside the generated regions, in order."""
    found, i, generated = [], 0, False
    while i < len(lines):
        line = lines[i]
        if GENERATED[0].match(line) or TABLE_START.match(line):
            generated = True
        elif GENERATED[1].match(line) or TABLE_END.match(line):
            generated = False
        m = FENCE.match(line)
        if m and line.startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```"), None)
            assert end is not None, f"{page}:{i + 1}: a code block is never closed"
            if not generated:
                found.append(Block(m["lang"], i + 1, end, tuple(lines[i + 1:end]), lines[i - 1] if i else None))
            i = end + 1
            continue
        i += 1
    return found


def _follows(a: Block, b: Block, lines: list[str]) -> bool:
    """``b`` opens right after ``a`` closes, with only blank lines between."""
    return all(not lines[k].strip() for k in range(a.end + 1, b.first - 1))


@dataclass(frozen=True)
class Example:
    kind: str  # "python" or "console"
    block: Block
    output: Block | None  # python: the text block showing its output


def examples(lines: list[str], page: str = "README.md") -> tuple[list[Example], list[str]]:
    """The executable examples, and one problem per block that is neither run nor marked."""
    found, problems = [], []
    bs = blocks(lines, page)
    claimed: set[int] = set()
    for k, b in enumerate(bs):
        if b.first in claimed:
            continue
        if b.marker is not None and NOT_EXECUTED.match(b.marker):
            continue
        if b.lang == "python":
            nxt = bs[k + 1] if k + 1 < len(bs) else None
            out = nxt if nxt is not None and nxt.lang == "text" and _follows(b, nxt, lines) else None
            if out is not None:
                claimed.add(out.first)
            found.append(Example("python", b, out))
        elif b.lang == "console":
            if not b.lines or not b.lines[0].startswith("$ "):
                problems.append(f"{page}:{b.line}: a console block must start with a '$ command' line")
            found.append(Example("console", b, None))
        else:
            problems.append(f"{page}:{b.line}: a ```{b.lang} block is neither run nor marked; make it "
                            "```python (with its output in a ```text block right after) or ```console "
                            "('$ command' then its output), or put '<!-- not executed: REASON -->' on the "
                            "line above it")
    return found, problems


def _clean(text: str) -> list[str]:
    out = [ln.rstrip() for ln in text.splitlines()]
    while out and not out[-1]:
        out.pop()
    return out


@pytest.fixture(scope="module")
def example_env(tmp_path_factory):
    with FakeOpenAIServer("ok") as server:
        bin_dir = str(Path(sys.executable).parent)
        if not (Path(bin_dir) / "pruner").exists():  # a checkout run without `pip install -e .`
            shim = tmp_path_factory.mktemp("bin") / "pruner"
            shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pruner "$@"\n', encoding="utf-8")
            shim.chmod(0o755)
            bin_dir = f"{shim.parent}{os.pathsep}{bin_dir}"
        env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
               "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-readme-example-not-a-real-key",
               "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"}
        env.pop("PRUNER_UPDATE_README", None)
        yield env


def run_python(ex: Example, env: dict, page: str = "README.md") -> list[str]:
    """Run the block as a file, ``python FILE`` from the repository root, in a fresh interpreter."""
    with tempfile.TemporaryDirectory(prefix="pruner-example-") as folder:
        script = Path(folder) / "example.py"
        script.write_text("\n".join(ex.block.lines) + "\n", encoding="utf-8")
        proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, (f"{page}:{ex.block.line}: the Python example failed as a file "
                                  f"(exit {proc.returncode}):\n{proc.stderr}")
    return _clean(proc.stdout)


def run_console(ex: Example, env: dict) -> list[tuple[str, list[str], list[str]]]:
    """``(command, shown output, actual output)`` for each ``$`` line of the block."""
    steps: list[tuple[str, list[str]]] = []
    for line in ex.block.lines:
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    out = []
    for command, shown in steps:
        proc = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S)
        out.append((command, _clean("\n".join(shown)), _clean(proc.stdout)))
    return out


def _lines(page: str) -> list[str]:
    return (ROOT / page).read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("page", PAGES)
def test_every_block_is_run_or_marked_as_not_executed(page):
    _, problems = examples(_lines(page), page)
    assert not problems, "\n".join(problems)


def test_the_pages_hold_examples_of_every_kind():
    found = [ex for page in PAGES for ex in examples(_lines(page), page)[0]]
    kinds = [ex.kind for ex in found]
    assert kinds.count("python") >= 4 and kinds.count("console") >= 5, kinds


def test_each_example_lives_in_one_place():
    """An example shown twice would have to be kept true twice: each Python block and each
    console command appears on one page, once."""
    seen: dict[str, str] = {}
    repeats = []
    for page in PAGES:
        for ex in examples(_lines(page), page)[0]:
            codes = ["\n".join(ex.block.lines)] if ex.kind == "python" else [
                ln for ln in ex.block.lines if ln.startswith("$ ")]
            for code in codes:
                if code in seen:
                    repeats.append(f"{page}:{ex.block.line} repeats {code.splitlines()[0]!r} from {seen[code]}")
                seen.setdefault(code, f"{page}:{ex.block.line}")
    assert not repeats, "\n".join(repeats)


@pytest.mark.parametrize("page", [p for p in PAGES if examples(_lines(p), p)[0]])
@pytest.mark.slow
def test_examples_print_what_the_page_shows(page, example_env):
    lines = _lines(page)
    found, problems = examples(lines, page)
    assert not problems, "\n".join(problems)
    replacements: list[tuple[int, int, list[str]]] = []  # (first, end, new content lines)
    mismatches = []
    for ex in found:
        if ex.kind == "python":
            actual = run_python(ex, example_env, page)
            shown = _clean("\n".join(ex.output.lines)) if ex.output else []
            if actual != shown:
                mismatches.append(f"{page}:{ex.block.line}: the Python example prints\n" + "\n".join(actual)
                                  + "\nbut the page shows\n" + "\n".join(shown))
                if ex.output:
                    replacements.append((ex.output.first, ex.output.end, actual))
                else:
                    replacements.append((ex.block.end + 1, ex.block.end + 1, ["", "```text", *actual, "```"]))
        else:
            new = []
            for command, shown, actual in run_console(ex, example_env):
                new += [f"$ {command}", *actual]
                if actual != shown:
                    mismatches.append(f"{page}:{ex.block.line}: `{command}` prints\n" + "\n".join(actual)
                                      + "\nbut the page shows\n" + "\n".join(shown))
            replacements.append((ex.block.first, ex.block.end, new))
    if mismatches and os.environ.get("PRUNER_UPDATE_README"):
        for first, end, new in sorted(replacements, reverse=True):
            lines[first:end] = new
        path = ROOT / page
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.replace(tmp, path)
        pytest.skip(f"{page}: rewrote the output of {len(mismatches)} example(s); review the diff")
    assert not mismatches, ("\n\n".join(mismatches) + "\n\n(to take the new output: "
                            "PRUNER_UPDATE_README=1 pytest tests/docs/test_readme_examples.py)")


# ----- the runner itself -----------------------------------------------------------------

SAMPLE = """\
intro
```python
print(1 + 1)
```

```text
2
```
<!-- not executed: it starts a server that never exits -->
```bash
serve forever
```
```console
$ echo hi
hi
```
```
unmarked
```
<!-- table:x -->
```
generated, not checked here
```
<!-- /table:x -->
"""


def test_runner_pairs_python_with_its_output_and_flags_unmarked_blocks():
    found, problems = examples(SAMPLE.splitlines())
    assert [(e.kind, e.block.lines, e.output.lines if e.output else None) for e in found] == [
        ("python", ("print(1 + 1)",), ("2",)), ("console", ("$ echo hi", "hi"), None)]
    assert len(problems) == 1 and "README.md:17:" in problems[0] and "neither run nor marked" in problems[0]


def test_runner_reports_a_wrong_output(example_env):
    found, _ = examples("```python\nprint('actual')\n```\n\n```text\nshown\n```".splitlines())
    assert run_python(found[0], example_env) == ["actual"] != list(found[0].output.lines)
    found, _ = examples("```console\n$ echo actual\nshown\n```".splitlines())
    assert run_console(found[0], example_env) == [("echo actual", ["shown"], ["actual"])]


def test_a_reason_is_required_to_skip_a_block():
    found, problems = examples("<!-- not executed: -->\n```bash\nrm -rf /\n```".splitlines())
    assert not found and len(problems) == 1


def test_a_python_block_runs_as_a_file_named_main(example_env):
    found, _ = examples("```python\nimport sys\nprint(__name__, sys.argv[0].endswith('.py'))\n```".splitlines())
    assert run_python(found[0], example_env) == ["__main__ True"]


SPAWN_WITHOUT_GUARD = """```python
import multiprocessing

process = multiprocessing.get_context("spawn").Process(target=print)
process.start()
process.join()
assert process.exitcode == 0, f"the child process failed (exit {process.exitcode})"
print("exit", process.exitcode)
```"""


def test_regression_batch_example_without_its_guard_fails_as_a_file(example_env):
    """Issue 25: the batch example, saved as a script, crashed (``Nanny failed to start``) because
    Dask's spawned workers import the main module and it had no ``__main__`` guard; run with
    ``python -c`` the old runner never saw it. The same mistake with a bare spawned process:"""
    found, _ = examples(SPAWN_WITHOUT_GUARD.splitlines())
    with pytest.raises(AssertionError, match="failed as a file"):
        run_python(found[0], example_env)
    proc = subprocess.run([sys.executable, "-c", "\n".join(found[0].block.lines)], cwd=ROOT, env=example_env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0 and proc.stdout.strip() == "exit 0"  # what the old runner saw
