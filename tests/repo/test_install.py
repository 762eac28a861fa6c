"""Install what you use (issue 34): the core install is the library and the light commands; each heavy
command names its extra; the wheel ships the dashboard, which `pruner dashboard` runs outside a checkout.

The slow tests build the wheel (offline, as tests/repo/test_types.py does), install it into fresh virtual
environments (no system site-packages) and use it from a folder that is not the checkout. Installing
takes the packages from the configured index (pip's cache, when the index is remote, keeps reruns fast).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from pruner.cli import build_parser, main
from pruner.cli.dashboard import app_path, streamlit_command
from tests.support.paths import ROOT, SAMPLES
from tests.support.wheel import build_wheel

#: The import names of what only an extra installs: the core must import none of them.
HEAVY = ("pandas", "pyarrow", "plotly", "streamlit", "dask", "distributed", "openai")
#: Their distributions, which a core install must not bring (pip list names).
HEAVY_DISTRIBUTIONS = ("pandas", "pyarrow", "plotly", "streamlit", "dask", "distributed", "openai")
MAINTAINER = ("bench-speed", "bench-batch", "bench-logs", "bench-limits")
SAMPLE = SAMPLES / "codex_rollout.jsonl"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


# -- the core imports nothing heavy --------------------------------------------------------------------------

def test_importing_pruner_and_building_the_cli_loads_no_extra():
    # A fresh interpreter: this test process has long imported them all.
    code = ("import sys, pruner, pruner.logs, pruner.cli; pruner.cli.build_parser(); "
            "import pruner.replay, pruner.formats, pruner.compaction; "
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]", done.stdout


def test_pruner_replay_runs_with_every_extra_missing(capsys, monkeypatch):
    """In this process the heavy modules are importable; set to None they are not (find_spec says so too)."""
    for name in HEAVY:
        monkeypatch.setitem(sys.modules, name, None)
    assert main(["replay", str(SAMPLE), "--strategies", "full"]) == 0
    out = capsys.readouterr().out
    assert "pruner's cache model puts" in out and "\nfull " in out  # the verdict's figures and the strategy's row


# -- a missing extra is one line and exit status 2 -----------------------------------------------------------

def _missing_extra_line(argv: list[str], hide: tuple[str, ...], monkeypatch, capsys) -> tuple[int, str, str]:
    for name in hide:
        monkeypatch.setitem(sys.modules, name, None)
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_pruner_batch_without_the_batch_extra_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    code, out, err = _missing_extra_line(["batch", str(SAMPLE), "--out", str(tmp_path / "out")], ("dask",),
                                         monkeypatch, capsys)
    assert (code, out, err) == (2, "", "pruner batch needs the batch extra: pip install 'pruner[batch]'\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, hide, command, extra", [
    (["logs", "--agent", "pi", "--pi-dir", "{tmp}", "--out", "{tmp}/out"], ("pyarrow",), "pruner logs", "logs"),
    (["dashboard", "--headless"], ("streamlit",), "pruner dashboard", "dashboard"),
    (["dashboard"], ("plotly",), "pruner dashboard", "dashboard"),
    (["compact", str(SAMPLE), "--summarizer", "openai"], ("openai",), "pruner compact --summarizer openai",
     "openai"),
    (["bench-batch", "--sessions", "1"], ("distributed",), "pruner bench-batch", "batch"),
    (["bench-logs"], ("pyarrow",), "pruner bench-logs", "logs"),
])
def test_each_heavy_command_names_its_extra(argv, hide, command, extra, tmp_path, monkeypatch, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, _, err = _missing_extra_line(argv, hide, monkeypatch, capsys)
    assert code == 2
    assert err.splitlines() == [f"{command} needs the {extra} extra: pip install 'pruner[{extra}]'"]


def test_pruner_logs_finds_and_lists_without_the_logs_extra(tmp_path, monkeypatch, capsys):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "s.jsonl").write_bytes(SAMPLE.read_bytes())
    code, out, err = _missing_extra_line(["logs", "--agent", "codex", "--codex-dir", str(tmp_path), "--list"],
                                         ("pyarrow",), monkeypatch, capsys)
    assert code == 0, err
    assert out.splitlines()[0].split()[:2] == ["agent", "sessions"]


def test_the_library_summariser_without_openai_is_a_summarizer_error(monkeypatch):
    from pruner import CompactionSettings, OpenAISummarizer, SummarizerError, compact, load_session

    monkeypatch.setitem(sys.modules, "openai", None)
    summarizer = OpenAISummarizer(base_url="http://127.0.0.1:9", model="m", api_key="k", max_retries=0)
    with pytest.raises(SummarizerError, match=r"pip install 'pruner\[openai\]'"):
        compact(load_session(SAMPLES / "native_demo.jsonl"), CompactionSettings(keep_recent_tokens=50), summarizer,
                force=True, on_error="raise")


# -- the user's --help lists the user's commands ------------------------------------------------------------

def test_maintainer_commands_are_not_listed_but_still_run(capsys):
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    for name in MAINTAINER:
        assert name not in listed
        assert main([name, "--help"]) == 0
        assert f"usage: pruner {name}" in capsys.readouterr().out
    for name in ("replay", "batch", "logs", "dashboard"):
        assert f"    {name}" in listed


def test_the_dashboard_command_passes_the_server_options_through():
    args = build_parser().parse_args(["dashboard", "--port", "8600", "--address", "0.0.0.0", "--headless",
                                      "--", "--theme.base", "dark"])
    command = streamlit_command(args, Path("/x/app.py"))
    assert command[:5] == [sys.executable, "-m", "streamlit", "run", "/x/app.py"]
    pairs = dict(zip(command[5::2], command[6::2]))
    assert pairs == {"--browser.gatherUsageStats": "false", "--server.port": "8600",
                     "--server.address": "0.0.0.0", "--server.headless": "true", "--theme.base": "dark"}


def test_in_a_checkout_the_dashboard_is_the_checkouts_own():
    assert app_path() == ROOT / "dashboard" / "app.py"


# -- every package and data file ships ------------------------------------------------------------------------

def _code_folders(top: Path) -> set[str]:
    """Folders under ``top`` (itself included) holding Python files, as dotted paths relative to ``top``."""
    found = set()
    for py in top.rglob("*.py"):
        parts = py.parent.relative_to(top).parts
        if "__pycache__" not in parts:
            found.add(".".join(parts))
    return found


def test_every_package_is_listed_for_the_wheel():
    tool = _pyproject()["tool"]["setuptools"]
    packages, dirs = set(tool["packages"]), tool["package-dir"]
    assert dirs == {"pruner._app.dashboard": "dashboard", "pruner._app.sample_sessions": "sample_sessions"}
    want = {("pruner." + f).rstrip(".") for f in _code_folders(ROOT / "pruner")}
    want -= {p for p in want if p == "pruner.readme" or p.startswith("pruner.readme.")}  # checkout-only
    want |= {("pruner._app.dashboard." + f).rstrip(".") for f in _code_folders(ROOT / "dashboard")}
    samples = {d for d in [SAMPLES, *SAMPLES.rglob("*")] if d.is_dir()}
    want |= {".".join(("pruner._app.sample_sessions", *d.relative_to(SAMPLES).parts)) for d in samples}
    assert packages == want, (sorted(want - packages), sorted(packages - want))


def test_the_test_extra_installs_every_other_extra_and_each_command_extra_is_declared():
    from pruner.cli.extras import EXTRAS

    extras = _pyproject()["project"]["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    itself = [req for req in extras["test"] if req.startswith("pruner[")]
    assert len(itself) == 1, extras["test"]
    # so CI's `pip install -e '.[test]'` installs everything every other extra does
    assert set(itself[0].removeprefix("pruner[").removesuffix("]").split(",")) == set(extras) - {"test"}
    for extra, modules in EXTRAS.items():
        # each module a command checks for is one the extra installs (import name = distribution name here)
        declared = {req.split(">")[0].split("=")[0].split("[")[0].strip() for req in extras[extra]}
        assert set(modules) <= declared, (extra, modules, declared)


#: Run by a fresh interpreter (HOME set by the caller): every distribution installed here that is not in
#: argv[2] (a JSON list) is made unimportable, as if not installed, then `pruner logs` runs on one session.
_LOGS_WITHOUT = """
import importlib.metadata as md, json, re, sys
allowed = set(json.loads(sys.argv[2]))
owners = md.packages_distributions()
blocked = {module for module, dists in owners.items()
           if module not in sys.modules and not {re.sub(r"[-_.]+", "-", d).lower() for d in dists} & allowed}

class Absent:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (not installed by this extra)", name=name)
        return None

sys.meta_path.insert(0, Absent)
from pruner.cli import main
sys.exit(main(["logs", "--agent", "codex", "--out", sys.argv[1]]))
"""


def _canonical(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` install, their own requirements followed through the installed
    metadata (markers evaluated with no extra: what a plain install of each brings)."""
    import importlib.metadata as md

    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = _canonical(req.name)
        if name in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        try:
            todo.extend(Requirement(r) for r in md.requires(req.name) or ())
        except md.PackageNotFoundError:
            continue
    return seen


@pytest.mark.parametrize("extra", ["logs", "dashboard"])  # dashboard: the README's set-up installs it
def test_pruner_logs_runs_with_only_what_the_core_and_the_logs_extra_install(extra, tmp_path):
    """`pip install pruner[logs]`, and the README's set-up, run `pruner logs` (issue 41: psutil, which the
    folder lock imports, came only with the batch extra, and the run died with ModuleNotFoundError). What
    the core's and the extra's requirements bring is followed through the installed metadata; every other installed
    distribution is hidden from the run, which must then bill the session as usual."""
    home = tmp_path / "home"
    day = home / ".codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    (day / "rollout-s.jsonl").write_bytes(SAMPLE.read_bytes())
    project = _pyproject()["project"]
    allowed = _closure(project["dependencies"] + project["optional-dependencies"][extra]) | {"pruner"}
    env = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME", "XDG_CACHE_HOME")}
    done = subprocess.run([sys.executable, "-c", _LOGS_WITHOUT, str(tmp_path / "out"), json.dumps(sorted(allowed))],
                          capture_output=True, text=True, check=False, cwd=tmp_path, env={**env, "HOME": str(home)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Billed $" in done.stdout, done.stdout[-3000:]


def test_every_sample_matches_a_package_data_pattern():
    data = _pyproject()["tool"]["setuptools"]["package-data"]
    for path in sorted(p for p in SAMPLES.rglob("*") if p.is_file()):
        package = ".".join(("pruner._app.sample_sessions", *path.parent.relative_to(SAMPLES).parts))
        assert any(path.match(pattern) for pattern in data.get(package, ())), f"{path} would not ship"


# -- the wheel, installed ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def _clean_env(venv: Path) -> dict[str, str]:
    """This environment without anything that would let the checkout or the test's venv leak in."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _venv(where: Path, requirement: str) -> Path:
    """A fresh virtual environment (no system site-packages) with ``requirement`` installed; its folder."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, capture_output=True)
    # --no-compile: byte-compiling pandas, pyarrow and Streamlit takes longer than installing them.
    done = subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-compile",
                           "--disable-pip-version-check", requirement],
                          capture_output=True, text=True, env=_clean_env(where), timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return where


def _installed(venv: Path) -> set[str]:
    done = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import json, importlib.metadata as m; "
                           "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))"],
                          capture_output=True, text=True, check=True, env=_clean_env(venv))
    return set(json.loads(done.stdout))


def _untimed(value):
    """``value`` without its ``seconds`` (how long each strategy took: the one figure that may differ)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k != "seconds"}
    return [_untimed(v) for v in value] if isinstance(value, list) else value


@pytest.mark.slow
def test_the_core_install_imports_pruner_and_replays_a_sample(wheel, tmp_path):
    venv = _venv(tmp_path / "core", str(wheel))
    assert not _installed(venv) & set(HEAVY_DISTRIBUTIONS)
    work = tmp_path / "elsewhere"  # not the checkout: nothing there to import by accident
    work.mkdir()
    env = _clean_env(venv)
    python = str(venv / "bin" / "python")
    where = subprocess.run([python, "-c", "import pruner; print(pruner.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(venv), where
    installed = subprocess.run([str(venv / "bin" / "pruner"), "replay", str(SAMPLE), "--json", "installed.json"],
                               cwd=work, env=env, capture_output=True, text=True, check=False)
    assert installed.returncode == 0, installed.stderr
    checkout = subprocess.run([sys.executable, "-m", "pruner", "replay", str(SAMPLE), "--json",
                               str(work / "checkout.json")], cwd=ROOT, capture_output=True, text=True, check=True)
    # The shipped price table and code give the checkout's bill, line for line and figure for figure.
    assert installed.stdout == checkout.stdout and "Billed $" in installed.stdout
    assert _untimed(json.loads((work / "installed.json").read_text())) == \
        _untimed(json.loads((work / "checkout.json").read_text()))
    batch = subprocess.run([str(venv / "bin" / "pruner"), "batch", str(SAMPLE), "--out", str(work / "b")],
                           cwd=work, env=env, capture_output=True, text=True, check=False)
    assert (batch.returncode, batch.stderr) == (2, "pruner batch needs the batch extra: pip install 'pruner[batch]'\n")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=10) as response:  # 127.0.0.1 only
        return response.status, response.read().decode("utf-8", "replace")


#: Run by the dashboard venv's Python: Streamlit's AppTest on the installed app, the Start page and then
#: the explorer's default sample (it opens a file of the shipped sample_sessions/).
_APPTEST = """
import json, sys
from streamlit.testing.v1 import AppTest
from pruner.cli.dashboard import app_path
app = app_path()
at = AppTest.from_file(str(app), default_timeout=300).run()
start = {"titles": [t.value for t in at.title], "errors": [e.value for e in at.error],
         "exceptions": [e.value for e in at.exception]}
at.switch_page("app_pages/explorer.py").run()
explorer = {"metrics": [m.label for m in at.metric], "errors": [e.value for e in at.error],
            "infos": [i.value for i in at.info], "exceptions": [e.value for e in at.exception]}
print(json.dumps({"app": str(app), "dashboard": sys.modules["dashboard"].__file__, "start": start,
                  "explorer": explorer}))
"""


@pytest.mark.slow
def test_the_dashboard_extra_from_the_wheel_serves_the_start_page(wheel, tmp_path):
    started = time.monotonic()
    venv = _venv(tmp_path / "dash", f"{wheel}[dashboard]")
    installed_s = time.monotonic() - started
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = _clean_env(venv)
    port = _free_port()
    server = subprocess.Popen([str(venv / "bin" / "pruner"), "dashboard", "--port", str(port), "--address",
                               "127.0.0.1", "--headless"], cwd=work, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        health, deadline = None, time.monotonic() + 180
        while time.monotonic() < deadline and server.poll() is None:
            try:
                health = _get(f"http://127.0.0.1:{port}/_stcore/health")
                break
            except OSError:
                time.sleep(0.5)
        assert health == (200, "ok"), (health, server.poll())
        status, page = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and "<title>" in page and 'id="root"' in page
        assert _get(f"http://127.0.0.1:{port}/start")[0] == 200  # the Start page's own URL
    finally:
        server.terminate()  # `pruner dashboard` became the Streamlit server (exec): this stops it
        output = server.communicate(timeout=60)[0]
    assert server.returncode in (0, -15), output
    done = subprocess.run([str(venv / "bin" / "python"), "-c", _APPTEST], cwd=work, env=env, capture_output=True,
                          text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(seen["app"]).is_relative_to(venv) and Path(seen["dashboard"]).is_relative_to(venv), seen
    assert seen["start"]["titles"][0].startswith("pruner:"), seen["start"]
    assert not seen["start"]["errors"] and not seen["start"]["exceptions"], seen["start"]
    assert "Tokens before → after" in seen["explorer"]["metrics"], seen["explorer"]
    assert not seen["explorer"]["errors"] and not seen["explorer"]["exceptions"], seen["explorer"]
    print(f"installed [dashboard] in {installed_s:.0f} s; whole test {time.monotonic() - started:.0f} s")


@pytest.mark.slow
def test_the_logs_extra_from_the_wheel_runs_pruner_logs(wheel, tmp_path):
    """`pip install pruner[logs]` alone, then `pruner logs` on a fake HOME (issue 41: it died on psutil)."""
    venv = _venv(tmp_path / "logs", f"{wheel}[logs]")
    home = tmp_path / "home"
    day = home / ".codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    (day / "rollout-s.jsonl").write_bytes(SAMPLE.read_bytes())
    env = {k: v for k, v in _clean_env(venv).items() if k not in ("CODEX_HOME", "XDG_CACHE_HOME")}
    done = subprocess.run([str(venv / "bin" / "pruner"), "logs", "--agent", "codex", "--bill-only", "--out",
                           str(tmp_path / "out")], cwd=tmp_path, env={**env, "HOME": str(home)},
                          capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Billed $" in done.stdout, done.stdout[-3000:]
