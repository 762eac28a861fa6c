"""``pruner logs report``: the logs table rolled up by day, week, month, block, project, model or agent.

A subcommand of ``pruner logs`` (``add_subcommand`` is its one hook in ``pruner.cli.logs``): plain
``pruner logs [options]`` still reads the logs, and ``pruner logs report --by day`` reads only the
table those runs wrote (``pruner.logs.report``). Its options have their own names inside the namespace
(``report_*``), so an option typed before ``report`` (``pruner logs --out DIR report``) is kept, not
overwritten by the subcommand's default.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Mapping

from ..errors import ConfigurationError
from ..logs.groupings import GROUPINGS
from ..logs.names import printable
from ..replay.verdict import DEFAULT_MIN_RECALL
from .types import fraction

NAME = "report"
HELP = ("roll the logs table up by day, week, month, 5-hour block, project, model or agent: dollars billed, "
        "requests, cache-read share, each strategy's dollars and recall, and the best strategy per group "
        "(reads the table only)")


def add_subcommand(logs: argparse.ArgumentParser, day: Callable[[str], str],
                   default_out: Callable[[Mapping[str, str]], str]) -> None:
    """``report`` under ``pruner logs`` (optional: without it ``pruner logs`` runs as it always has).
    ``day`` and ``default_out`` are ``pruner logs``' own (given, not imported: no import circle)."""
    sub = logs.add_subparsers(dest="logs_command", metavar="report", required=False,
                              title="subcommand (optional)",
                              description="report: roll the table up (pruner logs report --help)")
    p = sub.add_parser(NAME, help=HELP, description=f"{HELP}. Totals of every grouping equal the table's total: "
                       "a session counts whole in the group of its start (docs/own-logs.md).")
    p.add_argument("--by", dest="report_by", choices=tuple(GROUPINGS), default="day",
                   help="the grouping: " + "; ".join(f"{g.name}: {g.help}" for g in GROUPINGS.values())
                        + " (default %(default)s)")
    p.add_argument("--since", dest="report_since", type=day, default=None, metavar="YYYY-MM-DD",
                   help="only sessions that started on or after this day (UTC)")
    p.add_argument("--until", dest="report_until", type=day, default=None, metavar="YYYY-MM-DD",
                   help="only sessions that started on or before this day (UTC)")
    p.add_argument("--min-recall", dest="report_min_recall", type=fraction, default=DEFAULT_MIN_RECALL,
                   metavar="R", help="the recall bar of the best strategy (default %(default)s)")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", dest="report_json", action="store_true", help="print the roll-up as JSON")
    form.add_argument("--csv", dest="report_csv", action="store_true", help="print the roll-up as CSV")
    p.add_argument("--out", dest="report_out", default=None, metavar="DIR",
                   help="the logs folder to read (default: pruner logs' own, $XDG_CACHE_HOME/pruner/logs, else "
                        "~/.cache/pruner/logs)")
    p.set_defaults(_run=run, _extra="logs", _default_out=default_out)


def run(args: argparse.Namespace) -> int:
    from ..logs.report import as_csv, as_json, report, text
    from ..logs.table import TABLE, load_rows

    folder = os.path.abspath(args.report_out or getattr(args, "out", None) or args._default_out(os.environ))
    since = args.report_since or getattr(args, "since", None)
    until = args.report_until or getattr(args, "until", None)
    if since and until and since > until:
        raise ConfigurationError(f"--since {since} is after --until {until}")
    if not os.path.isfile(os.path.join(folder, TABLE)):
        raise ConfigurationError(f"{printable(folder)}: no logs table here ({TABLE}); run pruner logs --out "
                                 f"{printable(folder)} first", setting="out")
    rows = list(load_rows(folder).values())
    rolled = report(rows, args.report_by, since=since, until=until, min_recall=args.report_min_recall)
    if args.report_json or getattr(args, "json", False):
        print(as_json(rolled))
    elif args.report_csv:
        sys.stdout.write(as_csv(rolled))
    else:
        print(f"{printable(folder)}: by {rolled.by}")
        for line in text(rolled):
            print(line)
    return 0
