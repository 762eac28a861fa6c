"""``pruner logs``: find this machine's agent logs, and read the new and changed sessions into a table.

Why a command of its own rather than ``pruner batch`` with no input: ``batch``
prunes the files it is given into a folder it is told; ``logs`` goes looking
in the user's home folder and bills what it finds at each session's own model.
A ``pruner batch`` typed without its input is far more often a forgotten path
than a wish to read everything under ``~``, and it should stay an error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from typing import IO, TYPE_CHECKING, Mapping

from ..errors import ConfigurationError
from ..logs.agents import AGENTS as AGENT_REGISTRY
from ..logs.discover import AGENTS, Location, discover
from ..logs.names import printable
from ..replay import strategy_names
from . import logs_watch
from .common import warn
from .extras import require
from .types import dask_address, positive_int, strategy_list

if TYPE_CHECKING:  # pragma: no cover - the run's types need pyarrow (the logs extra), imported when it runs
    from ..logs.run import Reader

NAME = "logs"
_TITLES = [a.title for a in AGENT_REGISTRY.values()]
HELP = (f"find the {', '.join(_TITLES[:-1])} and {_TITLES[-1]} logs of this machine and read the new "
        "and changed sessions into a table of what each cost (a rerun reads only what changed)")

_DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def _day(text: str) -> str:
    if not _DAY.match(text):
        import argparse
        raise argparse.ArgumentTypeError(f"{text!r} is not a day; write YYYY-MM-DD")
    return text


def default_out(env: Mapping[str, str] = os.environ) -> str:
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pruner", "logs")


def add_arguments(p: argparse.ArgumentParser) -> None:
    looks = ", ".join(f"{a.layout} (${a.variable})" for a in AGENT_REGISTRY.values())
    p.description = (f"{HELP}. Looks in {looks}. "
                     "It is a command of its own, not 'pruner batch' with no input: batch prunes the files it is "
                     "given, logs goes looking in your home folder, and a batch typed without its input stays an "
                     "error.")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="the logs folder: its table, sessions.parquet, is updated in place (default "
                        "$XDG_CACHE_HOME/pruner/logs, else ~/.cache/pruner/logs)")
    for agent in AGENT_REGISTRY.values():
        p.add_argument(f"--{agent.flag}-dir", dest=f"dir_{agent.name}", default=None, metavar="DIR",
                       help=f"read {agent.name} sessions from DIR instead of the agent's own folder")
    p.add_argument("--homes", default=None, metavar="SHARED",
                   help="a team's logs: SHARED holds one folder per person or machine, each laid out as a home "
                        "folder (SHARED/alice/.claude/projects/..., SHARED/bob/.codex/sessions/...); each is "
                        "searched as ~ is, and the table's person column names it")
    p.add_argument("--agent", action="append", choices=AGENTS, default=None,
                   help="only this agent (repeatable; default: all)")
    p.add_argument("--since", type=_day, default=None, metavar="YYYY-MM-DD",
                   help="only sessions active on or after this day (UTC)")
    p.add_argument("--until", type=_day, default=None, metavar="YYYY-MM-DD",
                   help="only sessions that started on or before this day (UTC)")
    p.add_argument("--project", default=None, metavar="TEXT",
                   help="only sessions whose project (the folder the agent filed them under) contains TEXT")
    p.add_argument("--strategies", type=strategy_list, default=strategy_names(), metavar="A,B",
                   help="replay every session under these strategies for their dollars (default: all)")
    p.add_argument("--bill-only", action="store_true",
                   help="only the bill and the cache ledger (no strategy replayed): the fast reading")
    p.add_argument("--bound", action="store_true",
                   help="also compute each session's hindsight bound (the cheapest schedule knowing the whole "
                        "session; see docs/explanation/hindsight-bound.md) and end with the savings of it and of "
                        "cache_aware; slow today on long sessions (about two minutes for 388 requests on a "
                        "busy 2-core machine), so off by default")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, default=1, metavar="N",
                       help="read sessions in N processes (default %(default)s)")
    where.add_argument("--scheduler", type=dask_address, default=None, metavar="ADDRESS",
                       help="read sessions on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (the batch "
                            "extra); its workers must read the logs at the same paths; the table is written here")
    p.add_argument("--list", action="store_true", help="only print what was found; read nothing")
    p.add_argument("--json", action="store_true", help="print the run's summary as JSON")
    logs_watch.add_arguments(p)
    from .logs_report import add_subcommand  # pruner logs report: the table rolled up (its own module)

    add_subcommand(p, day=_day, default_out=default_out)


def _cluster_reader(scheduler: str) -> Reader:
    from ..logs.cluster import DaskReader

    def on_cluster(address: str, workers: int) -> None:
        print(f"dask: {printable(address)} with {workers} worker(s)", file=sys.stderr, flush=True)

    return DaskReader(scheduler, on_cluster=on_cluster)


def person_line(target: str, keys: list[str]) -> str:
    """What each person's (or machine's) sessions were billed, with --homes (the table's person column)."""
    from ..logs.homes import person_totals
    from ..logs.table import load_rows
    from ..money import money

    wanted = set(keys)
    held = load_rows(target, columns=("session_key", "source", "files", "person", "billed", "removed"))
    rows = [r for k, r in sorted(held.items()) if k in wanted]
    return "Billed by person (the bill's prices, as above): " + "; ".join(
        f"{printable(person) or '-'} {money(dollars)} ({n:,} sessions)" for person, n, dollars in person_totals(rows))


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


class _Progress:
    """Sessions, MB, rate and time left on stderr, at most once a second."""

    def __init__(self, stream: IO[str]):
        self.stream, self.last = stream, 0.0

    def __call__(self, done: int, todo: int, done_files: int, total_files: int, done_bytes: int, total_bytes: int,
                 seconds: float) -> None:
        now = time.monotonic()
        if done not in (0, todo) and now - self.last < 1.0:
            return
        self.last = now
        rate = done_bytes / seconds / 1e6 if seconds > 0 else 0.0
        left = (total_bytes - done_bytes) / (rate * 1e6) if rate > 0 else None
        eta = f", {left:,.0f} s left" if left is not None and done < todo else ""
        print(f"read {done:,}/{todo:,} sessions ({done_files:,}/{total_files:,} files), {_mb(done_bytes)} of "
              f"{_mb(total_bytes)}, {rate:,.1f} MB/s{eta}", file=self.stream, flush=True)


def dashboard_link(folder: str) -> str:
    """The exact address of the folder on the dashboard's Corpus page (the app on its default port)."""
    from urllib.parse import quote

    return f"http://localhost:8501/corpus?corpus={quote(folder, safe='/')}"


def closing_lines(target: str, keys: list[str]) -> list[str]:
    """What the run ends with: the bill, each strategy's sum over the sessions it could run on, the verdict
    across the folder (``pruner.logs.answer``: the Corpus page's same figures), the hindsight bound's sums
    (``pruner.logs.bound``) and the link to open."""
    from ..logs.answer import folder_answer
    from ..logs.bound import bound_answer, largest_gaps
    from ..money import money
    from ..logs.table import load_rows

    wanted = set(keys)
    rows = [r for k, r in sorted(load_rows(target).items()) if k in wanted and not r.get("removed")]
    if not rows:
        return []
    folder = folder_answer(rows, strategy_names())
    sums = [f"  {s.text()}" for s in folder.sums if s.strategy != "as_recorded"]
    bound = bound_answer(rows)
    gaps = [f"  {printable(g['session_key'])}: {money(g[bound.online])} against {money(g['bound'])} "
            f"(+{money(g['gap'])})" for g in largest_gaps(rows, bound.online, limit=5)]
    if gaps:
        gaps.insert(0, f"Largest gaps between {bound.online} and the cheapest schedule found in hindsight:")
    head = ["Per strategy, over the sessions where it could run:"] + sums if sums else []
    return (head + list(folder.lines(bound=bound.text())) + gaps + [
            "Open it: pruner dashboard (the dashboard extra: pip install 'pruner[dashboard]'), then "
            f"{dashboard_link(target)}"])


def run(args: argparse.Namespace) -> int:
    if not args.watch:
        return _run(args)
    try:  # a watch stopped at any point, its first run included, ends with the same one line
        return _run(args)
    except KeyboardInterrupt:
        return logs_watch.stopped(os.path.abspath(args.out or default_out()))


def _run(args: argparse.Namespace) -> int:
    if args.since and args.until and args.since > args.until:
        raise ConfigurationError(f"--since {args.since} is after --until {args.until}")
    logs_watch.check(args)
    overrides = {agent: getattr(args, f"dir_{agent}") for agent in AGENTS if getattr(args, f"dir_{agent}")}
    agents = tuple(args.agent or AGENTS)
    if args.homes and overrides:
        flags = ", ".join(f"--{AGENT_REGISTRY[agent].flag}-dir" for agent in overrides)
        raise ConfigurationError(f"{flags} names one agent folder of one home; with --homes each person's "
                                 "folders are found in their own sub-folder: drop it", setting="homes")

    def find() -> list[tuple[str, Location]]:  # (person, folder); again on each cycle of --watch
        if args.homes:
            from ..logs.homes import discover_homes

            return discover_homes(args.homes, agents=agents, since=args.since, until=args.until,
                                  project=args.project)
        return [("", loc) for loc in discover(os.environ, overrides=overrides, agents=agents,
                                              since=args.since, until=args.until, project=args.project)]

    locations = find()
    out = sys.stdout if not args.json else sys.stderr
    who = f"{'person':<12} " if args.homes else ""
    print(f"{who}{'agent':<12} {'sessions':>8} {'files':>7} {'size':>11}  {'days':<23} folder", file=out)
    for person, loc in locations:
        days = loc.date_range()
        span = f"{days[0]} .. {days[1]}" if days else "-"
        where = printable(loc.folder) + ("" if loc.how == "default" else f" ({loc.how})")
        state = "" if os.path.isdir(loc.folder) else "  (not found)"
        who = f"{printable(person):<12} " if args.homes else ""
        print(f"{who}{loc.agent:<12} {len(loc.sessions):>8,} {loc.files:>7,} {_mb(loc.size):>11}  {span:<23} "
              f"{where}{state}", file=out)
    if args.list:
        return 0
    require("pruner logs", "logs")  # finding and listing need no extra; the table is Parquet
    if args.scheduler:
        require("pruner logs --scheduler", "batch")  # Dask, as pruner batch
    from ..logs.run import run_logs

    sessions = [s for _, loc in locations for s in loc.sessions]
    target = os.path.abspath(args.out or default_out())
    strategies = () if args.bill_only else tuple(args.strategies)
    if args.bound and not strategies:
        raise ConfigurationError("--bound needs the strategies' replay; drop --bill-only to compute it")
    summary = run_logs(sessions, target, strategies=strategies, workers=args.workers, progress=_Progress(sys.stderr),
                       bound=args.bound, reader=_cluster_reader(args.scheduler) if args.scheduler else None)
    if args.json:
        print(json.dumps(summary.as_dict(), indent=2, sort_keys=True))
    else:
        again = [f"{n:,} {what}" for n, what in ((summary.retried, "retried after an error"),
                                                 (summary.repriced, "billed again at new prices")) if n]
        print(f"{printable(target)}: {summary.sessions:,} sessions held; read {summary.read:,} now (new "
              f"{summary.new:,}, changed {summary.changed:,}{''.join(f', {a}' for a in again)}), "
              f"{summary.unchanged:,} unchanged ({summary.touched:,} touched, same content), {summary.removed:,} "
              f"marked removed, {summary.errors:,} with errors; {_mb(summary.bytes_read)} in "
              f"{summary.seconds:,.2f} s")
        if summary.returned or summary.merged:
            print(f"{summary.returned:,} removed sessions are back; {summary.merged:,} rows of a session held under "
                  "another path to the same file were dropped (one session, one row)")
        if summary.stale:
            warn(f"{summary.stale:,} sessions of a database that could not be read now are kept as billed before, "
                 "marked stale (the table's stale column); they are read again next run")
        for line in closing_lines(target, [s.key for s in sessions]):
            print(line)
        if args.homes:
            print(person_line(target, [s.key for s in sessions]))
        if summary.interrupted:
            print("interrupted: what was read is kept; run the same command again to finish", file=sys.stderr)
    if summary.damaged_lines:
        warn(f"{summary.damaged_lines:,} damaged lines (not JSON, or usage that is not whole numbers in range) are "
             f"left out of the bill of {summary.damaged_sessions:,} of the sessions held (a time outside the years "
             "1000 to 9999 is counted too, and dates nothing): the table's damaged_lines "
             "column counts them per session, and 'pruner replay FILE' names them")
    if args.watch and not summary.interrupted:
        return logs_watch.follow(args, lambda: [s for _, loc in find() for s in loc.sessions], target, strategies)
    return 130 if summary.interrupted else 0
