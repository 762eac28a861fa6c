"""A progress bar on the terminal (stderr), drawn only when stderr is a terminal.

>>> import io
>>> out = io.StringIO()
>>> bar = TerminalProgress(out, force=True, width=10)
>>> bar(5, 10, 1); bar.close()
>>> out.getvalue().splitlines()[-1].strip()
'files [#####.....] 5/10  1 failed'
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class TerminalProgress:
    """Call it with (files done, files to do, error rows so far); ``close()`` ends the line."""

    def __init__(self, stream: TextIO | None = None, *, force: bool = False, width: int = 30,
                 min_interval_s: float = 0.1):
        self.stream = stream or sys.stderr
        self.enabled = force or getattr(self.stream, "isatty", lambda: False)()
        self.width = width
        self.min_interval_s = min_interval_s
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int, failed: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < self.min_interval_s:
            return
        self._last = now
        filled = self.width * done // total if total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        extra = f"  {failed} failed" if failed else ""
        self.stream.write(f"\rfiles [{bar}] {done}/{total}{extra}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
