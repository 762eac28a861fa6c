"""``pruner logs --watch [--interval S]``: the flags, and the loop's terminal output (``pruner.logs.watch``).

Kept beside ``pruner/cli/logs.py`` rather than in it: that command's module holds the one-off run, this
one what follows it when ``--watch`` is given (a line per cycle that changed something, nothing for one
that did not, one line and exit 130 when stopped).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Callable

from ..errors import ConfigurationError
from ..logs.discover import LogSession
from ..logs.names import printable
from .types import positive_seconds

#: Seconds between two cycles when ``--interval`` is not given.
DEFAULT_INTERVAL = 5.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--watch", action="store_true",
                   help="after the run, keep reading what changed (new sessions, sessions that grew) every "
                        "--interval seconds until Ctrl-C, printing one line per cycle that changed something: "
                        "what changed and the session being written now (its dollars so far, cache-read share, "
                        "and what cache_aware and the best strategy would have cost so far); the folder is "
                        "locked only while a cycle reads, so other runs can use it in between")
    p.add_argument("--interval", type=positive_seconds, default=None, metavar="S",
                   help=f"seconds between two cycles of --watch (default {DEFAULT_INTERVAL:g})")


def check(args: argparse.Namespace) -> None:
    """``ConfigurationError`` for flags that do not go with ``--watch`` (before anything is read); with
    ``--watch``, SIGTERM stops the command as Ctrl-C does from here on, the first run included (a service
    manager stops a watch with SIGTERM, and it must exit as cleanly as Ctrl-C makes it)."""
    if getattr(args, "interval", None) is not None and not args.watch:
        raise ConfigurationError("--interval is the time between two cycles of --watch; add --watch")
    if args.watch and args.list:
        raise ConfigurationError("--list reads nothing and --watch reads again and again; give one of them")
    if not args.watch:
        return  # pruner.logs.watch needs the logs extra, which finding and listing do not
    from .extras import require

    require("pruner logs", "logs")
    from ..logs.watch import MAX_INTERVAL

    if (args.interval or 0) > MAX_INTERVAL:
        raise ConfigurationError(f"--interval {args.interval:g} is more than a day ({MAX_INTERVAL:g} s); "
                                 "give fewer seconds")
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # raises KeyboardInterrupt


def follow(args: argparse.Namespace, find: Callable[[], list[LogSession]], target: str,
           strategies: tuple[str, ...]) -> int:
    """Watch ``target`` after the first run: print each cycle that changed it; exit 130 on Ctrl-C or SIGTERM."""
    from ..logs.watch import Busy, cycles

    interval = args.interval or DEFAULT_INTERVAL
    busy = False
    sessions: int | None = None
    try:
        for cycle in cycles(find, target, interval=interval, strategies=strategies, bound=args.bound,
                            workers=args.workers):
            if isinstance(cycle, Busy):
                if not busy:  # once per stretch: the next cycle that runs ends it
                    print(f"waiting: {cycle.reason}", flush=True)
                busy = True
                continue
            busy = False
            sessions = cycle.summary.sessions
            print(json.dumps(cycle.as_dict(), sort_keys=True) if args.json else cycle.text(), flush=True)
    except KeyboardInterrupt:
        return stopped(target, sessions)
    return 0  # pragma: no cover - cycles() ends only by an interrupt


def stopped(target: str, sessions: int | None = None) -> int:
    """The one line a stopped watch ends with, wherever the interrupt fell (the first run, its closing
    lines, a cycle), and its exit status."""
    held = "" if sessions is None else f" ({sessions:,} sessions)"
    print(f"pruner logs --watch: stopped; {printable(target)} holds what the last cycle committed{held}",
          file=sys.stderr, flush=True)
    return 130
