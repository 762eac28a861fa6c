"""``pruner prune FILE``: prune a transcript, write the kept session, print a summary."""

from __future__ import annotations

import sys

from ..formats.export import export
from ..engine.prune import DEFAULT_NEAR_DUPLICATE_THRESHOLD, PruneConfig, prune
from ..tokens import ENCODINGS
from .types import fraction
from ..jsonio import dumps_json
from .common import add_input_arguments, load_from_args, say, warn, write_output

NAME = "prune"
HELP = "prune a transcript and explain every decision"


def add_arguments(p) -> None:
    add_input_arguments(p)
    p.add_argument("-o", "--output", metavar="OUT", help="write the kept session here (default: stdout "
                   "only when --to is given, else nothing)")
    p.add_argument("--to", choices=("native", "openai"), default="native",
                   help="output format: native JSONL or OpenAI Chat Completions messages JSON")
    p.add_argument("--report-json", metavar="REPORT", help="write the full report with every decision")
    p.add_argument("--encoding", choices=ENCODINGS, default="o200k_base", help="tiktoken encoding")
    p.add_argument("--near-duplicate-threshold", type=fraction, default=DEFAULT_NEAR_DUPLICATE_THRESHOLD,
                   metavar="X", help="share of a text's word 3-grams seen before (default %(default)s)")
    p.add_argument("--no-expire", action="store_true", help="switch off pass 1 (expired context)")
    p.add_argument("--no-dedupe", action="store_true", help="switch off pass 2 (duplicate context)")
    p.add_argument("--no-restore", action="store_true", help="switch off pass 3 (dependency restoration)")
    p.add_argument("--orphan-policy", choices=("placeholder", "drop_pair"), default="placeholder",
                   help="what the export sends for a kept call whose result was pruned")


def summary_lines(result) -> list[str]:
    s = result.stats
    statuses = ", ".join(f"{k} {v}" for k, v in s.by_status.items())
    rules = ", ".join(f"{k} {v}" for k, v in s.by_rule.items()) or "none"
    return [
        f"messages: {s.messages_before} -> {s.messages_after}",
        f"tokens:   {s.tokens_before:,} -> {s.tokens_after:,} ("
        + (f"{100 * s.reduction:.1f}% fewer" if s.reduction >= 0 else f"{-100 * s.reduction:.1f}% MORE")
        + f"; placeholders {s.placeholder_tokens:,})",
        f"status:   {statuses}",
        f"rules:    {rules}",
        f"counter:  {s.counter}; passes took {s.elapsed_ms:.1f} ms",
    ]


def run(args) -> int:
    session = load_from_args(args)
    config = PruneConfig(expire=not args.no_expire, deduplicate=not args.no_dedupe,
                         restore=not args.no_restore, near_duplicate_threshold=args.near_duplicate_threshold,
                         orphan_policy=args.orphan_policy, encoding=args.encoding)
    result = prune(session, config)
    if args.output:
        out = export(result, to=args.to)
        write_output(args.output, out.text, source=args.file)
        for note in out.notes:
            warn(note)
    if args.report_json:
        write_output(args.report_json, dumps_json(result.report(), indent=2) + "\n", source=args.file,
                     option="--report-json")
    say(summary_lines(result), file=sys.stderr if args.output == "-" else sys.stdout)
    return 0
