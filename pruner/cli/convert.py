"""``pruner convert FILE --to native|openai|anthropic -o OUT``: rewrite a transcript.

``native`` is pruner's JSONL; ``openai`` a Chat Completions ``messages``
list; ``anthropic`` a Messages body ``{"system", "messages"}``. Both API
exports are valid for their API (every call answered). ``--prune`` converts
the pruned session instead (default settings). The input is never changed.
"""

from __future__ import annotations

import argparse
import sys

from ..formats.export import export
from ..engine.prune import prune
from .common import say, warn, write_output
from .inspect import add_loading_arguments, load_one

NAME = "convert"
HELP = "convert a transcript to native JSONL, OpenAI Chat Completions or Anthropic Messages"
TARGETS = ("native", "openai", "anthropic")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_loading_arguments(p)
    p.add_argument("--to", choices=TARGETS, required=True, help="output format")
    p.add_argument("-o", "--output", metavar="OUT", default="-", help="output file (default: stdout)")
    p.add_argument("--prune", action="store_true", help="prune first (default settings) and convert the result")


def run(args: argparse.Namespace) -> int:
    session = load_one(args)
    source = prune(session) if args.prune else session
    out = export(source, to=args.to)
    write_output(args.output, out.text, source=args.file)
    for note in out.notes:
        warn(note)
    if args.output != "-":
        say(f"wrote {args.to} ({len(session.messages)} messages read from {session.source_format}) "
            f"to {args.output}", file=sys.stderr)
    return 0
