"""Transcript formats: one module per format, registered by name.

A format module provides ``NAME``, ``DESCRIPTION``, ``detect(text, probe) -> float``
(0..1 confidence from the content; ``probe`` is the parsed document or the first
JSONL records, see ``common.Probe``), ``loads(text, *, file, skip_bad_lines,
retrieval_tools=None) -> Session`` and optionally ``dumps(session) -> str``.
Every module in this package is registered when the package loads (``ORDER``
sets where it is listed), so a new format is one new module. Detection looks at
content only; when two formats fit equally well the error names both (choose
with ``format=``).

>>> from pruner.formats import FORMATS
>>> "native" in FORMATS
True
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Mapping, Protocol, cast

from ..errors import ConfigurationError, FileTooLargeError, FormatError
from ..files import check_byte_limit, read_limited, write_atomic
from ..model import Session
from ..registry import Registry, origin_of
from .repairing import has_lone_surrogate, repairs_of, replace_lone_surrogates
from ._subagent_files import with_subagent_files

from ._limits import CONTAINER_BYTES, DEFAULT_MAX_BYTES

#: The modules of this package a format author builds on (public, documented in CONTRIBUTING.md):
#: ``builder`` (``SessionBuilder``), ``common`` (parsing, usage, detection helpers) and
#: ``repairing`` (``Repairs``: what a lenient importer repaired, recorded).
AUTHORING_MODULES = ("builder", "common", "repairing")
#: The public modules of this package that are not formats, so the loader does not register them:
#: the authoring modules, the bill-only readers ``<agent>_usage`` (an agent's log read for the bill
#: only, by ``pruner logs``) and what they share (``usage_lines``, ``usage_skeleton``). Every other public
#: module here is a format.
NOT_FORMATS = (*AUTHORING_MODULES, "claude_code_usage", "codex_usage", "pi_usage", "gemini_cli_usage", "usage_lines",
               "usage_skeleton")


if TYPE_CHECKING:  # pragma: no cover
    from .common import Probe


class Detector(Protocol):
    """``detect(text, probe) -> float``: 0..1 confidence from the content (``probe``: ``common.Probe``)."""

    def __call__(self, text: str, probe: Probe | None, /) -> float: ...


class Loader(Protocol):
    """``loads(text, *, file, skip_bad_lines, ...) -> Session``; a loader may accept more keywords
    (``retrieval_tools``, ``dialogue``), which ``loads`` passes only when its signature names them."""

    def __call__(self, text: str, *, file: str = ..., skip_bad_lines: bool = ...) -> Session: ...


class Dumper(Protocol):
    def __call__(self, session: Session, /) -> str: ...


class FormatModule(Protocol):
    """What a format module provides (the module docstring); ``dumps``, ``loads_all`` and ``ORDER``
    are optional, so they are read with ``getattr``."""

    NAME: str
    DESCRIPTION: str

    def detect(self, text: str, probe: Probe | None, /) -> float: ...

    def loads(self, text: str, *, file: str = ..., skip_bad_lines: bool = ...) -> Session: ...


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    detect: Detector
    loads: Loader
    dumps: Dumper | None = None


def _format_origin(fmt: Format) -> str:
    return getattr(fmt.loads, "__module__", None) or origin_of(fmt.loads)


FORMATS: Registry[Format] = Registry("format", origin=_format_origin)
"""Every registered transcript format by name (``native``, ``claude_code``, ...); one module each.
A second format under a taken name is refused, naming both modules."""


def register_format(fmt: Format) -> Format:
    return FORMATS.add(fmt.name, fmt)


_MODULES: dict[str, ModuleType] = {}


def register_module(module: ModuleType) -> None:
    """Register a format module, checked against ``FormatModule`` (a module is typed at run time only)."""
    where = module.__name__
    for attribute in ("NAME", "DESCRIPTION"):
        if not isinstance(getattr(module, attribute, None), str):
            raise ConfigurationError(f"format module {where} must define {attribute} as a string")
    for function in ("detect", "loads"):
        if not callable(getattr(module, function, None)):
            raise ConfigurationError(f"format module {where} must define a function {function}")
    parameters = inspect.signature(module.loads).parameters
    for keyword in ("file", "skip_bad_lines"):
        if keyword not in parameters:
            raise ConfigurationError(f"format module {where}: loads must accept the keyword {keyword!r}")
    checked = cast("FormatModule", module)  # what the checks above established
    register_format(Format(name=checked.NAME, description=checked.DESCRIPTION, detect=checked.detect,
                           loads=checked.loads, dumps=getattr(module, "dumps", None)))
    _MODULES[checked.NAME] = module


def _load_builtin_formats() -> None:
    """Import and register every format module of this package, so a new format is one
    new module and nothing else. ``ORDER`` (default 100) sets the registration order,
    which is the order ``--help`` lists formats in; detection never depends on it."""
    import importlib
    import pkgutil

    modules = [importlib.import_module(f"{__name__}.{info.name}")
               for info in pkgutil.iter_modules(__path__)
               if not info.name.startswith("_") and not info.ispkg and info.name not in NOT_FORMATS]
    for module in sorted(modules, key=lambda m: (getattr(m, "ORDER", 100), m.NAME)):
        register_module(module)


_load_builtin_formats()

from .common import RETRIEVAL_TOOLS, probe  # noqa: E402

#: Other names accepted by ``--format``.
ALIASES: dict[str, str] = {"openai": "openai_chat", "chat": "openai_chat", "responses": "openai_responses",
                           "claude": "anthropic", "claude-code": "claude_code", "swe-agent": "swe_agent",
                           "sweagent": "swe_agent", "pi-session": "pi"}


def format_name(name: str, *, file: str = "<input>") -> str:
    """The registered name for ``name`` (aliases accepted); ``FormatError`` if unknown."""
    resolved = ALIASES.get(name, name)
    if resolved not in FORMATS:
        raise FormatError(f"unknown format {name!r}; supported: {', '.join(FORMATS)}", file=file,
                          setting="format")
    return resolved


#: A NUL byte in a file's first bytes marks it binary (no JSON text holds a raw NUL).
BINARY_SNIFF_BYTES = 65536


def check_text_bytes(data: bytes, *, file: str) -> None:
    """``FormatError`` when ``data`` is no text file at all: empty, UTF-16, or binary data. The one rule
    of both readers: ``decode_bytes`` (the full reader) and the bill-only reader (``claude_code_usage``),
    so ``pruner logs --bill-only`` never bills a file every other command refuses."""
    if not data.strip():
        raise FormatError("the file is empty", file=file)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise FormatError("the file is UTF-16 text; save it as UTF-8", file=file)
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise FormatError("this is binary data, not a text transcript", file=file)


def decode_bytes(data: bytes, *, file: str) -> str:
    """Bytes to text: refuses binary data and invalid UTF-8, accepts a UTF-8 BOM."""
    check_text_bytes(data, file=file)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FormatError(f"invalid UTF-8 at byte {exc.start}; save the file as UTF-8",
                          file=file, line=line) from None


def detect_format(text: str, *, file: str = "<input>") -> str:
    """The name of the registered format that best matches ``text``'s content."""
    try:
        seen = probe(text, file=file)
    except RecursionError:
        raise FormatError("JSON is nested too deeply to read; this is not a transcript", file=file) from None
    scores = [(fmt.detect(text, seen), name) for name, fmt in FORMATS.items()]
    best = max((s for s, _ in scores), default=0.0)
    if best <= 0:
        raise FormatError(f"unknown format; supported: {', '.join(FORMATS)} (choose one if the file is one of "
                          "them)", file=file, setting="format")
    winners = [name for s, name in scores if s == best]
    if len(winners) > 1:
        # The advice is the front end's (``setting``): the CLI adds "choose the format with --format NAME".
        raise FormatError(f"ambiguous format: the content fits {' and '.join(winners)} equally well",
                          file=file, setting="format")
    return winners[0]


def _loader_options(fmt: Format, retrieval_tools: Any, dialogue: int | None, file: str) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    if retrieval_tools is not None and "retrieval_tools" in inspect.signature(fmt.loads).parameters:
        opts["retrieval_tools"] = frozenset(retrieval_tools)
    if dialogue is not None:
        if "dialogue" in inspect.signature(fmt.loads).parameters:
            opts["dialogue"] = dialogue
        elif dialogue != 0:  # every other format holds exactly one dialogue
            raise FormatError(f"a {fmt.name} file holds one dialogue; dialogue {dialogue} does not exist",
                              file=file, setting="dialogue")
    return opts


def loads(text: str, *, file: str = "<input>", format: str | None = None, skip_bad_lines: bool = False,
          retrieval_tools: Any = None, dialogue: int | None = None) -> Session:
    """Parse transcript text (format detected from content unless given).

    ``retrieval_tools``: tool names whose results become ``retrieved_doc``
    messages (default ``RETRIEVAL_TOOLS``, empty). ``dialogue``: which dialogue
    of a multi-dialogue file (0-based).
    """
    name = format_name(format, file=file) if format else detect_format(text, file=file)
    fmt = FORMATS[name]
    try:
        session = fmt.loads(text, file=file, skip_bad_lines=skip_bad_lines,
                            **_loader_options(fmt, retrieval_tools, dialogue, file))
        return replace_lone_surrogates(session, text, file=file)
    except RecursionError:  # a value nested too deeply for the reader (or the model) to walk
        raise FormatError("JSON is nested too deeply to read; this is not a transcript", file=file) from None
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        # Last resort: a structure no importer check anticipated. Say so in one line
        # rather than showing a traceback (the fuzz tests call importers directly).
        raise FormatError(f"cannot read this as {name}: unexpected structure ({type(exc).__name__}: {exc}); "
                          "check the file, or choose another format", file=file, setting="format") from None


def loads_all(text: str, *, file: str = "<input>", format: str | None = None, skip_bad_lines: bool = False,
              retrieval_tools: Any = None) -> list[Session]:
    """Every dialogue in ``text``: several for a multi-dialogue file, else one."""
    name = format_name(format, file=file) if format else detect_format(text, file=file)
    module = _MODULES.get(name)
    if module is not None and hasattr(module, "loads_all"):
        try:
            sessions: list[Session] = module.loads_all(text, file=file, skip_bad_lines=skip_bad_lines,
                                        **_loader_options(FORMATS[name], retrieval_tools, None, file))
            if not has_lone_surrogate(text):  # scanned once for the file, not once per dialogue
                return sessions
            return [replace_lone_surrogates(s, None, file=file) for s in sessions]
        except RecursionError:
            raise FormatError("JSON is nested too deeply to read; this is not a transcript", file=file) from None
    return [loads(text, file=file, format=name, skip_bad_lines=skip_bad_lines, retrieval_tools=retrieval_tools)]




def charged_size(data: bytes) -> int:
    """The size a file is held to the limit by: its length, or ``CONTAINER_BYTES`` per array and
    object when that is more (deeply nested JSON costs far more memory than its length says)."""
    return max(len(data), CONTAINER_BYTES * (data.count(b"[") + data.count(b"{")))


def _check_size(data: bytes, max_bytes: int, file: str) -> None:
    if len(data) > check_byte_limit(max_bytes):
        raise FileTooLargeError(size=len(data), limit=max_bytes, file=file)
    charged = charged_size(data)
    if charged > max_bytes:
        raise FileTooLargeError(size=len(data), limit=max_bytes, file=file, charged=charged)


def load_bytes(data: bytes, *, file: str = "<input>", format: str | None = None,
               skip_bad_lines: bool = False, max_bytes: int = DEFAULT_MAX_BYTES,
               retrieval_tools: Any = None, dialogue: int | None = None) -> Session:
    _check_size(data, max_bytes, file)
    return loads(decode_bytes(data, file=file), file=file, format=format, skip_bad_lines=skip_bad_lines,
                 retrieval_tools=retrieval_tools, dialogue=dialogue)


def _read(path: str | os.PathLike[str], max_bytes: int) -> tuple[str, bytes]:
    return read_limited(path, max_bytes)  # regular files only; over max_bytes refused before reading


def load_session(path: str | os.PathLike[str], *, format: str | None = None, skip_bad_lines: bool = False,
                 max_bytes: int = DEFAULT_MAX_BYTES, retrieval_tools: Any = None,
                 dialogue: int | None = None) -> Session:
    """Read a transcript file of any registered format. The file is only read, never changed.

    ``max_bytes`` (default 200 MB) refuses bigger files before reading them, and files whose
    JSON holds more arrays and objects than that many bytes of text would (``charged_size``);
    ``retrieval_tools`` and ``dialogue`` are as for ``loads``. A Claude Code session ``X.jsonl``
    also gets the subagent files in ``X/subagents/`` (``_subagent_files``).
    """
    file, data = _read(path, max_bytes)
    session = load_bytes(data, file=file, format=format, skip_bad_lines=skip_bad_lines, max_bytes=max_bytes,
                         retrieval_tools=retrieval_tools, dialogue=dialogue)
    return with_subagent_files(session, path, lambda p: load_session(
        p, format="claude_code", skip_bad_lines=skip_bad_lines, max_bytes=max_bytes, retrieval_tools=retrieval_tools))


def load_dialogues(path: str | os.PathLike[str], *, format: str | None = None, skip_bad_lines: bool = False,
                   max_bytes: int = DEFAULT_MAX_BYTES, retrieval_tools: Any = None) -> list[Session]:
    """Every dialogue of a file (tau-bench style files hold many; other files one)."""
    file, data = _read(path, max_bytes)
    _check_size(data, max_bytes, file)
    return loads_all(decode_bytes(data, file=file), file=file, format=format, skip_bad_lines=skip_bad_lines,
                     retrieval_tools=retrieval_tools)


def save_session(session: Session, path: str | os.PathLike[str]) -> None:
    """Write ``session`` as native JSONL, atomically (a failure leaves any previous file intact)."""
    write_atomic(path, _MODULES["native"].dumps(session))


def repairs(session: Session) -> list[Mapping[str, Any]]:
    """What the importer repaired to read ``session``'s file: entries ``{"kind", "count",
    "message", "lines"}`` whose ``message`` is a sentence for a person (see ``repairing``)."""
    return repairs_of(session.metadata)


def repair_messages(session: Session) -> list[str]:
    """One sentence per repair the importer made (``[]`` when the file was read as it is)."""
    return [str(r.get("message", "")) for r in repairs(session)]


__all__ = [
    "ALIASES", "AUTHORING_MODULES", "BINARY_SNIFF_BYTES", "CONTAINER_BYTES", "DEFAULT_MAX_BYTES", "Detector",
    "Dumper", "FORMATS", "Format", "FormatModule", "Loader", "NOT_FORMATS", "RETRIEVAL_TOOLS", "charged_size",
    "check_text_bytes", "decode_bytes", "detect_format", "format_name", "load_bytes", "load_dialogues", "load_session",
    "loads", "loads_all", "probe", "register_format", "register_module", "repair_messages", "repairs",
    "save_session"
]
