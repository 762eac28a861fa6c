"""The ``pruner`` command: argparse wiring only, one module per subcommand.

A subcommand module provides ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``, and ``EXTRA`` when it needs an optional install (``pruner.cli.extras``,
checked before ``run``; the extra's packages are imported inside ``run``, so ``--help`` works
without them); list it in ``_COMMAND_MODULES``, or in ``_MAINTAINER_MODULES`` (it runs, but
``pruner --help`` does not list it). Errors caused by the input (``PrunerError``) become one
line on stderr and exit status 2, with the flag for the setting the error names
(``common.setting_advice``). Everything a subcommand prints goes through
``common.TerminalSafeStream``: transcripts and servers are untrusted, and no control
character they hold may act on a terminal.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
from typing import NoReturn

from .. import __version__
from ..errors import PrunerError
from .common import TerminalSafeStream, error_line, terminal_safe
from .extras import MissingExtra, require

_COMMAND_MODULES = ("prune", "inspect", "convert", "compact", "replay", "bench", "batch", "logs", "dashboard")
#: The project's own measurements (they write sample_sessions/bench/): they run as any command does, but
#: are not listed in ``pruner --help`` (CONTRIBUTING.md lists them; docs/reference/cli.md has their help).
_MAINTAINER_MODULES = ("bench_speed", "bench_batch", "bench_logs", "bench_limits")


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line on stderr (``--help`` shows the usage), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, terminal_safe(f"{self.prog}: error: {message} (see {self.prog} --help)", one_line=True) + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pruner", description="Prune and compact LLM conversations, and explain every decision.")
    parser.add_argument("--version", action="version", version=f"pruner {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for modname in (*_COMMAND_MODULES, *_MAINTAINER_MODULES):
        module = importlib.import_module(f"{__name__}.{modname}")
        # A subcommand added without help= has no line in the list (argparse), and still parses and runs.
        listed = {"help": module.HELP} if modname in _COMMAND_MODULES else {}
        p = sub.add_parser(module.NAME, description=module.HELP, **listed)
        module.add_arguments(p)
        p.set_defaults(_run=module.run, _extra=getattr(module, "EXTRA", None))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already printed as one line
        return exc.code if isinstance(exc.code, int) else 2
    # What the user typed, for result files that record the command that wrote them.
    args.command_line = shlex.join(["pruner", *(sys.argv[1:] if argv is None else argv)])
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalSafeStream(stdout), TerminalSafeStream(stderr)
    try:
        if args._extra:
            require(f"pruner {args.command}", args._extra)
        return int(args._run(args) or 0)
    except MissingExtra as exc:  # the install lacks an extra: the line says which, and how to add it
        print(exc, file=sys.stderr)
        return 2
    except PrunerError as exc:
        commands = next(a for a in parser._actions if a.dest == "command").choices
        assert isinstance(commands, dict)  # the subcommands' action: name -> its parser
        command = commands[args.command]
        flags = [o for a in command._actions for o in a.option_strings]
        print(error_line(args.command, exc, flags=flags), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pruner {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        print(f"pruner {args.command}: error: out of memory; see docs/reference/limits.md", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not bad input: still one line, never a traceback
        print(terminal_safe(f"pruner {args.command}: internal error: {type(exc).__name__}: {exc} "
                            "(this is a bug in pruner; please report it with the input)", one_line=True),
              file=sys.stderr)
        return 70
    finally:
        sys.stdout, sys.stderr = stdout, stderr


__all__ = [
    "build_parser", "main"
]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
