"""Helpers shared by the issue 23 regression tests (tests/unit/replay/test_cli_and_replay_regressions.py and
tests/unit/batch/test_batch_and_corpus_regressions.py)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from pruner.cli import main


def run_cli(args, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def make_fifo(path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this system")
    os.mkfifo(path)
    return path


def finishes(target, seconds: float, unblock: Path | None = None):
    """``target()``'s result if it returns within ``seconds``; fails the test otherwise. A call blocked
    opening the pipe ``unblock`` is released afterwards (by opening its other end) so no thread is left."""
    box: dict = {}

    def work():
        try:
            box["value"] = target()
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        if unblock is not None:
            fd = os.open(unblock, os.O_RDWR)  # a writer: the blocked open returns, then reads EOF
            os.close(fd)
            thread.join(10)
        pytest.fail(f"still running after {seconds} s")
    if "error" in box:
        raise box["error"]
    return box["value"]
