"""``pruner prune FILE``: prune a transcript, write the kept session, print a summary."""

from __future__ import annotations

import argparse
import sys

from ..formats.export import export
from ..engine.prune import PruneResult, prune
from ..jsonio import dumps_json
from .common import (add_input_arguments, add_prune_arguments, load_from_args, prune_config, refuse_shared_outputs, say,
                     warn, write_output)

NAME = "prune"
HELP = "prune a transcript and explain every decision"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    p.add_argument("-o", "--output", metavar="OUT", help="write the kept session here (default: stdout "
                   "only when --to is given, else nothing)")
    p.add_argument("--to", choices=("native", "openai"), default="native",
                   help="output format: native JSONL or OpenAI Chat Completions messages JSON")
    p.add_argument("--report-json", metavar="REPORT", help="write the full report with every decision")
    add_prune_arguments(p, orphan_help="what the export sends for a kept call whose result was pruned")


def summary_lines(result: PruneResult) -> list[str]:
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


def run(args: argparse.Namespace) -> int:
    refuse_shared_outputs(("-o", args.output), ("--report-json", args.report_json))
    session = load_from_args(args)
    config = prune_config(args)
    result = prune(session, config)
    if args.output:
        out = export(result, to=args.to)
        write_output(args.output, out.text, source=args.file)
        for note in out.notes:
            warn(note)
    if args.report_json:
        write_output(args.report_json, dumps_json(result.report(), indent=2) + "\n", source=args.file,
                     option="--report-json")
    # An output on standard output keeps it to itself: the summary goes to stderr, not into the JSON.
    say(summary_lines(result), file=sys.stderr if "-" in (args.output, args.report_json) else sys.stdout)
    return 0
