"""``pruner bench-speed``: median time of the three passes at a base size, 10x and 50x."""

from __future__ import annotations

import sys

from ..bench.speed import measure
from .types import positive_int

NAME = "bench-speed"
HELP = "time the three passes at ~10,000 messages and at 10x and 50x that size"

REFERENCE = "reference design, measured here: 13 ms for its 10,039-message tool-agent corpus; 530 ms at 16k turns"


def add_arguments(p) -> None:
    p.add_argument("--base", type=positive_int, default=10_000, metavar="N",
                   help="base size in messages (default %(default)s)")
    p.add_argument("--factors", default="1,10,50", metavar="A,B",
                   help="sizes as multiples of the base (default %(default)s)")
    p.add_argument("--runs", type=positive_int, default=20, metavar="N",
                   help="timed runs at the base size, after a warm-up (default %(default)s; "
                        "larger sizes use fewer, at least 3)")


def run(args) -> int:
    factors = [int(x) for x in args.factors.split(",") if x.strip()]
    rows = []
    print(f"{'messages':>9} {'tokens':>11} {'runs':>4} {'passes ms':>10} {'us/msg':>7} "
          f"{'prune() ms':>10} {'exact-only ms':>13}")
    for i, factor in enumerate(factors, start=1):
        n = args.base * factor
        print(f"[{i}/{len(factors)}] {n:,} messages ...", file=sys.stderr, flush=True)
        runs = args.runs if factor == 1 else max(3, args.runs // factor)
        row = measure(n, runs=runs)
        rows.append(row)
        print(f"{row.messages:>9,} {row.tokens:>11,} {row.runs:>4} {row.passes_ms:>10.1f} "
              f"{row.us_per_message:>7.2f} {row.prune_ms:>10.1f} {row.exact_only_ms:>13.1f}", flush=True)
    if len(rows) > 1:
        base = rows[0]
        for row in rows[1:]:
            ratio = row.passes_ms / base.passes_ms if base.passes_ms else float("inf")
            print(f"{row.messages // base.messages}x the messages took {ratio:.1f}x the time "
                  f"({'linear' if ratio <= 1.2 * row.messages / base.messages else 'super-linear'})")
    print(REFERENCE)
    return 0
