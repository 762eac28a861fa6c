"""Arguments and file handling shared by the subcommands."""

from __future__ import annotations

import os
import sys

from ..errors import PrunerError
from ..formats import DEFAULT_MAX_BYTES, FORMATS, load_session
from .types import byte_count, non_negative_int


def add_input_arguments(p) -> None:
    p.add_argument("file", metavar="FILE", help="transcript file (format detected from its content)")
    p.add_argument("--format", metavar="NAME", default=None,
                   help=f"read FILE as this format instead of detecting it ({', '.join(FORMATS)})")
    p.add_argument("--skip-bad-lines", action="store_true",
                   help="in JSONL files, skip lines that cannot be read (and report how many)")
    p.add_argument("--max-bytes", type=byte_count, default=DEFAULT_MAX_BYTES, metavar="N",
                   help="refuse files larger than this (default %(default)s)")
    p.add_argument("--dialogue", type=non_negative_int, metavar="N", default=None,
                   help="for files holding several dialogues (e.g. tau-bench): use dialogue N (from 0)")
    p.add_argument("--retrieval-tool", action="append", default=[], metavar="NAME",
                   help="treat results of this tool as retrieved documents (repeatable)")


def load_from_args(args):
    session = load_session(args.file, format=args.format, skip_bad_lines=args.skip_bad_lines,
                           max_bytes=args.max_bytes, retrieval_tools=args.retrieval_tool or None,
                           dialogue=args.dialogue)
    skipped = session.metadata.get("skipped_bad_lines")
    if skipped:
        print(f"warning: skipped {skipped} unreadable line(s) in {args.file}", file=sys.stderr)
    return session


def write_output(path: str, text: str, *, source: str | None = None) -> None:
    """Write ``text`` to ``path`` (``-`` is stdout); refuses to overwrite the input file."""
    if path == "-":
        sys.stdout.write(text)
        return
    if source and os.path.exists(path) and os.path.samefile(path, source):
        raise PrunerError(f"{path}: refusing to overwrite the input file; choose another -o")
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        raise PrunerError(f"{path}: cannot write ({exc.strerror})") from None
