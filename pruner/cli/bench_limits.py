"""``pruner bench-limits``: time and peak memory of the worst inputs, per 10 MB (see ``pruner.bench.limits``)."""

from __future__ import annotations

import argparse
import sys

from ..bench.limits import CASES, SIZES_MB, per_10mb, run_limits, to_json
from .common import say, write_output

NAME = "bench-limits"
HELP = "measure CPU time and peak memory per 10 MB of the worst inputs this reader can be given"
DEFAULT_OUT = "sample_sessions/bench/limits.json"


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers of MB, got {text!r}") from None
    if not sizes or sizes[0] <= 0 or sizes[-1] > 1024:
        raise argparse.ArgumentTypeError(f"sizes must be from 1 to 1024 MB, got {text!r}")
    return sizes


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sizes", type=_sizes, default=list(SIZES_MB), metavar="A,B",
                   help=f"input sizes in MB (default {','.join(map(str, SIZES_MB))}); the per-10 MB cost is "
                        "taken between the smallest and the largest")
    p.add_argument("--cases", type=lambda t: [c for c in t.split(",") if c], default=list(CASES), metavar="A,B",
                   help=f"cases to run (default: {','.join(CASES)})")
    p.add_argument("--json", metavar="OUT", default=DEFAULT_OUT, help="write the results here (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        say(f"pruner bench-limits: error: unknown case {', '.join(unknown)}; choose from {', '.join(CASES)}",
            file=sys.stderr)
        return 2
    results = run_limits(args.sizes, cases=tuple(args.cases),
                         progress=lambda what: print(what, file=sys.stderr, flush=True))
    write_output(args.json, to_json(results))
    say(f"{'case':<14} {'command':<8} {'size':>6} {'exit':>4} {'wall s':>7} {'CPU s':>6} {'peak MB':>8} "
        f"{'CPU s/10 MB':>11} {'MB/10 MB':>8}")
    for r in per_10mb(results):
        say(f"{r['case']:<14} {r['command']:<8} {r['size_mb']:>4}MB {r['exit_code']:>4} {r['wall_s']:>7.1f} "
            f"{r['cpu_s']:>6.1f} {r['peak_mb']:>8.0f} {r['cpu_s_per_10mb']:>11.2f} {r['peak_mb_per_10mb']:>8.0f}")
    limit = f"{results['meta']['default_max_bytes']:,}-byte limit"
    for r in results["rows"]:
        if r["case"] == "over_the_limit":
            say(f"a file one byte over the {limit}: exit {r['exit_code']} after {r['wall_s']:.2f} s, "
                f"peak {r['peak_mb']:.0f} MB (refused before reading)")
        elif r["case"] == "deep_over_the_limit":
            say(f"{r['size_mb']} MB of deep nesting, charged over the {limit}: exit {r['exit_code']} after "
                f"{r['wall_s']:.2f} s, peak {r['peak_mb']:.0f} MB (refused before parsing)")
    say(f"wrote {args.json}", file=sys.stderr)
    return 0
