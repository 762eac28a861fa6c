"""Arguments, file handling and terminal output shared by the subcommands.

Everything a subcommand prints to a terminal goes through ``terminal_safe``:
transcripts and servers are untrusted, and an escape sequence in a session's
name or an endpoint's error text must not drive the terminal.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import IO, Any, Iterable, Sequence

from ..errors import ConfigurationError, ExportError
from ..files import write_atomic
from ..model import Session
from ..formats import DEFAULT_MAX_BYTES, FORMATS, load_session, repair_messages, repairs
from ..engine.prune import PruneConfig
from ..setting_fields import describe
from .types import byte_count, fraction, non_negative_int, positive_int

# C0 controls (but tab and newline), DEL, C1 controls (an 8-bit CSI among them), and the
# bidirectional overrides that can make a terminal show text in another order than it is.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
                     "\ud800-\udfff]")
_UNSAFE_OR_NEWLINE = re.compile(_UNSAFE.pattern[:-1] + "\n\t]")

#: How the CLI names the library settings an error says would change the outcome, for those that are
#: no field of a settings dataclass (a field's flag is its own: ``setting_advice``).
SETTING_FLAGS = {
    "max_bytes": "raise the limit with --max-bytes N",
    "dialogue": "choose one with --dialogue N",
    "format": "choose the format with --format NAME",
    "skip_bad_lines": "--skip-bad-lines skips such lines",
    "out": "choose it with --out DIR",
    "seeds": "set it with --seeds N",
    "homes": "choose it with --homes SHARED",
}


def _escape(match: re.Match[str]) -> str:
    # The JSON spelling: readable, and inside a JSON string it stands for the very same character.
    return f"\\u{ord(match.group()):04x}"


def terminal_safe(text: object, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\u001b``) instead of acting;
    with ``one_line``, newlines and tabs too."""
    return (_UNSAFE_OR_NEWLINE if one_line else _UNSAFE).sub(_escape, str(text))


class TerminalSafeStream:
    """A text stream that writes everything through ``terminal_safe``: ``main`` puts it in front of
    stdout and stderr, so no subcommand can print a control character by mistake."""

    def __init__(self, stream: IO[str]):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def say(lines: str | Iterable[str], *, file: IO[str] | None = None) -> None:
    """Print ``lines`` (one string or several) to stdout or ``file``, terminal-safe."""
    out = sys.stdout if file is None else file
    for line in [lines] if isinstance(lines, str) else lines:
        print(terminal_safe(line), file=out)


def error_line(command: str, exc: BaseException, *, flags: Iterable[str] | None = None) -> str:
    """The one stderr line for an error: its message, plus the flag for the setting it names (only
    when ``command`` takes that flag: ``flags``, the command's option strings, None for any)."""
    text = f"pruner {command}: error: {exc}"
    hint = setting_advice(getattr(exc, "setting", None))
    flag = re.search(r"--[a-z][a-z-]*", hint)
    if flags is not None and flag and flag.group() not in set(flags):
        hint = ""
    if hint:
        text += f" ({hint})"
    return terminal_safe(text, one_line=True)


def setting_advice(setting: str | None) -> str:
    """The CLI's words for the library setting ``setting``: its flag ("" when no flag sets it).

    >>> setting_advice("reserve_tokens"), setting_advice("inherit_cold"), setting_advice("nothing")
    ('set it with --reserve-tokens N', 'set it with --no-inherit-cold', '')
    """
    if not setting:
        return ""
    if setting in SETTING_FLAGS:
        return SETTING_FLAGS[setting]
    from ..compaction.settings import CompactionSettings  # the settings a flag sets (cli/ imports them all)
    from ..replay.settings import ReplaySettings

    for cls in (ReplaySettings, CompactionSettings, PruneConfig):
        try:
            s = describe(cls, setting)
        except KeyError:
            continue
        if isinstance(s.default, bool):
            return f"set it with {s.flag}"
        value = s.metavar or ("N" if s.minimum is not None else "X" if isinstance(s.default, float)
                              else "{" + ",".join(s.choices) + "}" if s.choices else "VALUE")
        return f"set it with {s.flag} {value}"
    return ""


def warn(message: str) -> None:
    print(terminal_safe(f"warning: {message}", one_line=True), file=sys.stderr)


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="transcript file (format detected from its content)")
    p.add_argument("--format", metavar="NAME", default=None,
                   help=f"read FILE as this format instead of detecting it ({', '.join(FORMATS)})")
    p.add_argument("--skip-bad-lines", action="store_true",
                   help="in native JSONL files, skip lines that cannot be read and report them (agent logs "
                        "always do)")
    p.add_argument("--max-bytes", type=byte_count, default=DEFAULT_MAX_BYTES, metavar="N",
                   help="refuse files larger than this (default %(default)s)")
    p.add_argument("--dialogue", type=non_negative_int, metavar="N", default=None,
                   help="for files holding several dialogues (e.g. tau-bench): use dialogue N (from 0)")
    p.add_argument("--retrieval-tool", action="append", default=[], metavar="NAME",
                   help="treat results of this tool as retrieved documents (repeatable)")


def add_setting_arguments(p: argparse.ArgumentParser, cls: type, names: Iterable[str], *,
                          helps: dict[str, str] | None = None) -> None:
    """One argument per setting of the dataclass ``cls`` named in ``names``, its flag, default, help,
    choices and type read from the field (``pruner.setting_fields``): the CLI restates none of them.

    Each argument's ``dest`` is the field's name, so ``setting_values`` hands them back as keywords.
    ``helps`` replaces a field's help for one command."""
    for name in names:
        s = describe(cls, name)
        text = (helps or {}).get(name, s.flag_help)
        if isinstance(s.default, bool):  # a switch: --X turns it on, --no-X off
            p.add_argument(s.flag, dest=name, action="store_false" if s.default else "store_true", help=text)
        elif isinstance(s.default, tuple):  # a list: the flag is repeated
            p.add_argument(s.flag, dest=name, action="append", default=None, metavar=s.metavar or "NAME", help=text)
        else:
            kwargs: dict[str, Any] = {"choices": s.choices} if s.choices else {}
            if isinstance(s.default, float):
                kwargs |= {"type": fraction, "metavar": s.metavar or "X"}
            elif s.minimum is not None:
                kwargs |= {"type": positive_int if s.minimum >= 1 else non_negative_int, "metavar": s.metavar or "N"}
            if s.default is not None:
                text += " (default %(default)s)"
            p.add_argument(s.flag, dest=name, default=s.default, help=text, **kwargs)


def setting_values(cls: type, args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The keywords for ``cls`` that the arguments of ``add_setting_arguments`` were given."""
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(args, name)
        out[name] = describe(cls, name).default if value is None and isinstance(
            describe(cls, name).default, tuple) else tuple(value) if isinstance(value, list) else value
    return out


#: The pruning settings every command that prunes takes.
PRUNE_SETTINGS = ("encoding", "near_duplicate_threshold", "expire", "deduplicate", "restore", "orphan_policy")


def add_prune_arguments(p: argparse.ArgumentParser, *, orphan_help: str) -> None:
    """The pruning settings, the same for every command that prunes (``prune_config`` reads them)."""
    add_setting_arguments(p, PruneConfig, PRUNE_SETTINGS, helps={"orphan_policy": orphan_help})


def prune_config(args: argparse.Namespace) -> PruneConfig:
    """The ``PruneConfig`` the options of ``add_prune_arguments`` describe."""
    return PruneConfig(**setting_values(PruneConfig, args, PRUNE_SETTINGS))


def report_repairs(sessions: Sequence[Session], file: str) -> None:
    """One stderr warning per repair the importer made, so nothing is changed without a word.

    For a file of several dialogues, one line per kind of repair with how many
    dialogues it touched (``inspect --json`` lists each).
    """
    if len(sessions) == 1:
        for message in repair_messages(sessions[0]):
            warn(f"{file}: {message}")
        return
    kinds: dict[str, list[int]] = {}
    for session in sessions:
        for r in repairs(session):
            counts = kinds.setdefault(str(r.get("kind")), [0, 0])
            counts[0] += 1
            counts[1] += int(r.get("count", 0))
    for kind, (dialogues, count) in kinds.items():
        warn(f"{file}: {dialogues} of {len(sessions)} dialogues were repaired ({kind.replace('_', ' ')}: "
             f"{count:,}); inspect --json lists each")


def load_from_args(args: argparse.Namespace) -> Session:
    session = load_session(args.file, format=args.format, skip_bad_lines=args.skip_bad_lines,
                           max_bytes=args.max_bytes, retrieval_tools=args.retrieval_tool or None,
                           dialogue=args.dialogue)
    report_repairs([session], args.file)
    return session


def _destination(path: str) -> tuple[str, tuple[int, int] | None]:
    """Where writing ``path`` lands: its resolved path (a link followed, ``./x`` and ``x`` alike) and,
    when it exists, its device and inode (a hard link, or a link to a link, is the same file)."""
    if path == "-":
        return "-", None
    try:
        info = os.stat(path)
        inode: tuple[int, int] | None = (info.st_dev, info.st_ino)
    except OSError:
        inode = None
    return os.path.realpath(path), inode


def refuse_shared_outputs(*outputs: tuple[str, str | None]) -> None:
    """``ConfigurationError`` when two of a command's outputs (``(option, path)``; ``None`` for an option
    not given) name one destination, before anything is written: the second write would replace the
    first and the command would end with one output and exit 0. Standard output (``-``) counts as one
    destination too: two documents run together on it are neither."""
    seen: list[tuple[str, str, tuple[str, tuple[int, int] | None]]] = []
    for option, path in outputs:
        if not path:
            continue
        where = _destination(path)
        for other_option, other_path, (real, inode) in seen:
            if where[0] == real or (inode is not None and where[1] == inode):
                where_to = "standard output" if path == "-" else path if path == other_path else (
                    f"one file ({other_path} and {path})")
                raise ConfigurationError(f"{other_option} and {option} both write to {where_to}; give each "
                                         "output its own file (nothing was written)")
        seen.append((option, path, where))


def write_output(path: str, text: str, *, source: str | None = None, option: str = "-o") -> None:
    """Write ``text`` to ``path`` (``-`` is stdout) atomically: a failure leaves an existing file as it
    was. Refuses to overwrite the input file ``source``; ``option`` names the flag that gave ``path``."""
    if path == "-":
        sys.stdout.write(text)
        return
    if source and os.path.exists(path) and os.path.exists(source) and os.path.samefile(path, source):
        raise ExportError(f"{path}: refusing to overwrite the input file; choose another {option}")
    write_atomic(path, text)
