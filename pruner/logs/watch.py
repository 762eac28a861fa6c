"""``pruner logs --watch``: keep the logs table up to date while agents write, until stopped.

Each cycle is one incremental run (``pruner.logs.run.run_logs``): the folders are listed again, and
``plan`` (the run's own new-and-changed detection, not a second one) sends only the new and grown
sessions to be read; an unchanged session costs one ``stat``. A cycle that changed the table yields a
``Cycle`` (what changed, and the session being written now: ``pruner.logs.live``); one that changed
nothing yields nothing.

Decisions the issue left open (issue 32, "Live"):

* **The lock is held per cycle, not for the whole watch.** Each cycle is a run, and a run holds the
  folder's lock while it plans and writes (``pruner.logs.table.locked``); between cycles the folder is
  free. So a plain ``pruner logs`` (or ``--bound``) on the same folder runs between two cycles, and the
  next cycle plans against the table it left, reading only what it did not. A run that starts while a
  cycle holds the lock is refused with the watching process's number, as any second run is; a cycle
  that finds the folder held by another run is skipped (``Busy``) and tried again next interval.
  Holding it for the whole watch would refuse every other run of the folder for hours.
* **A file that stays unreadable is not read every cycle**: the first run retries error rows as any
  run does; later cycles read an error row again only when its file changes (``retry_errors=False``).
  A growing JSONL's last line may be half written when a cycle reads it: the readers leave such a line
  out of the bill and count it in ``damaged_lines`` (they never fail on it), and the file has grown
  when the line is complete, so the next cycle reads the session again with it. A Gemini CLI file
  read mid-rewrite is an error row until then, read again when it changes.
* **Stopping**: Ctrl-C and SIGTERM (turned into the same ``KeyboardInterrupt``) end the watch. A stop
  while a cycle reads commits what that cycle read (``run_logs``' own interrupt handling); a stop
  anywhere else leaves the table as the last commit wrote it, since every write of the table is one
  atomic rename. The caller says so in one line and exits 130.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from ..batch.lock import FolderBusyError
from .discover import LogSession
from .live import LiveSession, live_session
from .run import LogsSummary, run_logs
from .table import load_rows

#: The longest interval accepted (a day): longer is a typo, and ``time.sleep`` has a ceiling.
MAX_INTERVAL = 86_400.0


@dataclass(frozen=True)
class Cycle:
    """One cycle that changed the table."""

    summary: LogsSummary
    live: LiveSession | None

    @property
    def grown(self) -> int:
        """Sessions read again because their files changed (not those re-read for new prices or strategies)."""
        return max(0, self.summary.changed - self.summary.retried - self.summary.repriced)

    def text(self) -> str:
        s = self.summary
        parts = [f"+{s.new:,} new", f"{self.grown:,} grown"]
        parts += [f"{n:,} {what}" for n, what in ((s.changed - self.grown, "re-read"), (s.removed, "removed"),
                                                   (s.returned, "back"), (s.errors, "unreadable")) if n]
        now = f"; now {self.live.text()}" if self.live else ""
        return f"{', '.join(parts)}: {s.sessions:,} sessions held{now}"

    def as_dict(self) -> dict[str, object]:
        return {"new": self.summary.new, "grown": self.grown, "read": self.summary.read,
                "removed": self.summary.removed, "errors": self.summary.errors, "sessions": self.summary.sessions,
                "live": None if self.live is None else self.live.as_dict()}


@dataclass(frozen=True)
class Busy:
    """A cycle skipped: another run held the folder."""

    reason: str


def changed(summary: LogsSummary) -> bool:
    """Whether the run changed what the table says (a file merely touched changes no figure)."""
    return bool(summary.read or summary.removed or summary.returned or summary.merged)


def cycles(find: Callable[[], list[LogSession]], out: str, *, interval: float, strategies: tuple[str, ...] = (),
           bound: bool = False, workers: int = 1, sleep: Callable[[float], None] = time.sleep,
           ) -> Iterator[Cycle | Busy]:
    """Every ``interval`` seconds, list the sessions again (``find``) and bring ``out``'s table up to date;
    yield each cycle that changed it (and each one skipped because the folder was busy). Runs until
    interrupted: ``KeyboardInterrupt`` (Ctrl-C, or SIGTERM while this runs) propagates to the caller
    after the cycle's reading committed what it read."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)  # raises KeyboardInterrupt
    try:
        while True:
            sleep(interval)
            try:
                summary = run_logs(find(), out, strategies=strategies, workers=workers, bound=bound,
                                   retry_errors=False)
            except FolderBusyError as exc:
                yield Busy(str(exc))
                continue
            if summary.interrupted:  # run_logs caught the stop and committed: pass it on
                raise KeyboardInterrupt
            if changed(summary):
                yield Cycle(summary, live_session(load_rows(out).values(), strategies))
    finally:
        signal.signal(signal.SIGTERM, previous)
