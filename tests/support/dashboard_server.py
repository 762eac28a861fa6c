"""The dashboard's Streamlit server for the browser tests: one per test process, shared by its browser tests.

The suite runs on several pytest-xdist workers (pyproject's ``addopts``); each worker is its own process
with its own session, so the session-scoped ``dashboard_server`` fixture starts one server per worker, on
a free port and with its log in that worker's own temporary folder (the folder is named after the worker
id, ``gw0`` … or ``main`` without xdist). The browser test modules' ``server`` fixture
(``tests/e2e/test_browser.py``) hands it on, so a worker's browser tests share one server instead of
starting one per module (each start costs 5 to 20 s on a loaded 2-core machine). A test that measures
the server's cold cache starts its own with :func:`started` (``tests/e2e/test_speed_browser.py``).

The server is started exactly as the README says (``pruner dashboard`` from the repository root); only
the environment differs: the port (``STREAMLIT_SERVER_PORT``), no ``DISPLAY`` (no browser window opens),
and an audit hook on ``PYTHONPATH`` that logs any outbound connection or name lookup of the server process.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.paths import ROOT

#: Prints every attempt of the server's Python process to reach another host (see its docstring).
OUTBOUND_AUDIT = ROOT / "tests" / "support" / "outbound"
#: The README's command, run from the repository root: the test passes no flag it does not.
README_COMMAND = [str(Path(sys.executable).with_name("pruner")), "dashboard"]
START_TIMEOUT_S = 180  # a loaded 2-core machine with other workers starting Chromium


@dataclass(frozen=True)
class Server:
    url: str
    log: Path
    outbound: Path  # one line per outbound attempt of the server process; absent when none

    def outbound_attempts(self) -> list[str]:
        return self.outbound.read_text(encoding="utf-8").splitlines() if self.outbound.exists() else []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(workdir: Path) -> tuple[subprocess.Popen, Server]:
    port = _free_port()
    log, outbound = workdir / "server.log", workdir / "outbound.log"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env |= {"STREAMLIT_SERVER_PORT": str(port), "PRUNER_OUTBOUND_LOG": str(outbound),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(OUTBOUND_AUDIT), env.get("PYTHONPATH")]))}
    with open(log, "wb") as out:
        proc = subprocess.Popen(README_COMMAND, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return proc, Server(url=f"http://localhost:{port}", log=log, outbound=outbound)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def started(workdir: Path) -> Iterator[Server]:
    """A dashboard server of its own, started in ``workdir`` (its log, its outbound log) and stopped after.

    A free port can be taken by another process between the probe and Streamlit's bind (several workers
    start servers at once): a server that exits before it answers is started again on a new port, twice."""
    for attempt in range(3):
        proc, server = _start(workdir)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not _healthy(server.url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            else:
                yield server
                return
            text = server.log.read_text(errors="replace")
            if proc.poll() is None or "already in use" not in text.lower() or attempt == 2:
                pytest.fail(f"streamlit did not start:\n{text[-3000:]}")
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def worker_id() -> str:
    """The pytest-xdist worker running this process (``gw0``, ``gw1`` …), ``main`` without xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


@pytest.fixture(scope="session")
def dashboard_server(tmp_path_factory) -> Iterator[Server]:
    """This worker's dashboard server, shared by every browser test the worker runs (see the module)."""
    with started(tmp_path_factory.mktemp(f"streamlit-{worker_id()}")) as server:
        yield server
