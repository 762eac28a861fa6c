"""``pruner bench-logs``: MB/s of ``pruner logs`` on a generated folder shaped like real Claude Code logs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .types import positive_int

NAME = "bench-logs"
HELP = ("time pruner logs on a generated Claude Code folder (the shared real files' sizes): bill + ledger, every "
        "strategy, a rerun with nothing changed, each agent's bill-only reader (MB/s), a 1 GB session's peak "
        "memory and a run's peak memory over a folder of N and of 10 N sessions")
EXTRA = "logs"  # checked by pruner.cli before run()

#: Where the default run keeps its figures: the file docs/own-logs.md's table renders.
DEFAULT_RESULTS = "sample_sessions/bench/logs.json"
DEFAULTS = {"files": 2_000, "strategy_files": 120, "rerun_files": 10_000, "workers": 2, "reader_mb": 200,
            "big_mb": 1000, "folder_sessions": 300}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--files", type=positive_int, default=DEFAULTS["files"], metavar="N",
                   help="sessions in the generated corpus (default %(default)s)")
    p.add_argument("--strategy-files", type=positive_int, default=DEFAULTS["strategy_files"], metavar="N",
                   help="of them, how many are also replayed under every strategy (default %(default)s)")
    p.add_argument("--rerun-files", type=positive_int, default=DEFAULTS["rerun_files"], metavar="N",
                   help="files in the folder the unchanged rerun is timed on (default %(default)s)")
    p.add_argument("--workers", type=positive_int, default=DEFAULTS["workers"], metavar="N",
                   help="worker processes (default %(default)s)")
    p.add_argument("--reader-mb", type=positive_int, default=DEFAULTS["reader_mb"], metavar="MB",
                   help="MB each agent's bill-only reader reads, over its real files (default %(default)s)")
    p.add_argument("--big-mb", type=int, default=DEFAULTS["big_mb"], metavar="MB",
                   help="size of the generated Codex session whose peak memory is measured (0: none; default "
                        "%(default)s)")
    p.add_argument("--folder-sessions", type=int, default=DEFAULTS["folder_sessions"], metavar="N",
                   help="small sessions in the folder whose whole run's peak memory is measured, against a folder of "
                        "10 N (0: none; default %(default)s)")
    p.add_argument("--scratch", default="/tmp/pruner-bench-logs", metavar="DIR",
                   help="where the corpora are generated (emptied first; default %(default)s)")
    p.add_argument("--real", default=None, metavar="DIR",
                   help="the shared real transcripts (default ../shared/data/real beside the repository)")
    p.add_argument("--out", default=DEFAULT_RESULTS, metavar="FILE", help="results file (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    from ..bench.environment import finish, start
    from ..errors import ConfigurationError
    from ..files import write_atomic
    from ..logs.bench import run_bench

    real = Path(args.real) if args.real else Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "real"
    if not (real / "claude-code").is_dir():
        raise ConfigurationError(f"{real}: the shared real transcripts are not there; pass --real DIR")
    env = start(args.command_line)
    figures = run_bench(Path(args.scratch), real, files=args.files, strategy_files=args.strategy_files,
                        rerun_files=args.rerun_files, workers=args.workers, reader_mb=args.reader_mb,
                        big_mb=max(0, args.big_mb),
                        folder_sessions=max(0, args.folder_sessions),
                        say=lambda line: print(line, file=sys.stderr, flush=True))
    body = {"meta": {"environment": finish(env), "corpus": f"{args.files:,} Claude Code sessions drawn from the "
                                                         f"shared real files, under {args.scratch}"}, **figures}
    write_atomic(args.out, json.dumps(body, indent=2, sort_keys=True) + "\n")
    print(f"wrote {args.out}")
    return 0
