"""``pruner bench-batch``: sessions per second of ``pruner batch`` with 1 and 2 local workers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..files import write_atomic
from . import batch
from .types import positive_int, positive_int_list

NAME = "bench-batch"
HELP = "time pruner batch over 10,000+ sessions with 1 and 2 local Dask workers, and its overhead per session"
EXTRA = batch.EXTRA  # it runs pruner batch: the same extra, checked by pruner.cli before run()

#: Where the default run keeps its figures: the file the README's "At scale" table renders.
DEFAULT_RESULTS = "sample_sessions/bench/batch.json"
#: Three runs per worker count, alternating 1, 2, 1, 2, ...: on a shared machine the load changes
#: from minute to minute, and the fastest run of each count is the least disturbed one.
DEFAULTS = {"sessions": 10_000, "tau_copies": 40, "workers": (1, 2), "runs": 3, "corpus": None}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sessions", type=positive_int, default=DEFAULTS["sessions"], metavar="N",
                   help="corpus size in sessions (default %(default)s)")
    p.add_argument("--tau-copies", type=positive_int, default=DEFAULTS["tau_copies"], metavar="N",
                   help="copies of the 200 tau-bench dialogues from ../shared/data/real, when present; generated "
                        "workload sessions make up the rest (default %(default)s)")
    p.add_argument("--workers", type=positive_int_list, default=DEFAULTS["workers"], metavar="A,B",
                   help="local worker counts to time (default 1,2)")
    p.add_argument("--runs", type=positive_int, default=DEFAULTS["runs"], metavar="N",
                   help="runs per worker count, alternating counts; the fastest is kept (default %(default)s)")
    p.add_argument("--corpus", type=Path, default=None, metavar="DIR",
                   help="build the corpus in DIR, or reuse the one there (default: a temporary folder)")
    p.add_argument("--json", metavar="OUT", default=None,
                   help=f"write the figures as JSON (the default run writes {DEFAULT_RESULTS})")


def is_default_run(args: argparse.Namespace) -> bool:
    return all(getattr(args, k) == v for k, v in DEFAULTS.items())


def write_json(path: str, results: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(results, indent=2, sort_keys=True) + "\n")


def run(args: argparse.Namespace) -> int:
    from ..batch.bench import run_bench

    command = " ".join(["pruner", NAME, *sys.argv[2:]]) if sys.argv[1:2] == [NAME] else f"pruner {NAME}"
    results = run_bench(sessions=args.sessions, tau_copies=args.tau_copies, workers=args.workers, runs=args.runs,
                        corpus=args.corpus, command=command, say=lambda line: print(line, flush=True))
    targets = [args.json] if args.json else ([DEFAULT_RESULTS] if is_default_run(args) else [])
    for target in targets:
        write_json(target, results)
        print(f"figures written to {target}")
    return 0
