"""A line on stderr that says what a long command is doing: drawn once the command has run ``DELAY``
seconds, redrawn in place, erased when the command is done; only when stderr is a terminal (nothing in
a pipe, a file or ``--json`` output).

>>> import io
>>> out = io.StringIO()
>>> with Ticker(out, force=True, delay=60.0) as t:  # drawn here by hand, not by its thread
...     t.stage("replaying 9 strategies")
...     t.draw()
>>> out.getvalue().startswith("\\rreplaying 9 strategies… ")
True
>>> out.getvalue().endswith("\\r")
True
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

#: Seconds before the line appears: a command that answers sooner prints nothing of it.
DELAY = 2.0


def _raw(stream: Any) -> Any:
    """The terminal under ``cli.common.TerminalSafeStream`` (which would show the carriage return as an escape)."""
    return getattr(stream, "_stream", stream)


class Ticker:
    """``with Ticker() as t: t.stage("computing the hindsight bound"); ...``: the line shows the stage and
    the seconds since the command started."""

    def __init__(self, stream: TextIO | None = None, *, force: bool = False, delay: float | None = None,
                 interval: float = 0.5):
        self.stream = _raw(stream if stream is not None else sys.stderr)
        self.enabled = force or bool(getattr(self.stream, "isatty", lambda: False)())
        self.delay, self.interval = DELAY if delay is None else delay, interval
        self.text = "working"
        self.start = time.monotonic()
        self._width = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def stage(self, text: str) -> None:
        self.text = text

    def draw(self) -> None:
        with self._lock:
            line = f"{self.text}… {time.monotonic() - self.start:.0f} s"
            self.stream.write("\r" + line.ljust(self._width))
            self.stream.flush()
            self._width = max(self._width, len(line))

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        while not self._stop.is_set():
            self.draw()
            self._stop.wait(self.interval)

    def __enter__(self) -> "Ticker":
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="pruner-ticker", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self._width:  # erase the line: what the command prints next starts clean
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
                self._width = 0
