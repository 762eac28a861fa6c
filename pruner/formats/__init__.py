"""Transcript formats: one module per format, registered by name.

A format module provides ``NAME``, ``detect(text, records) -> float`` (0..1
confidence from the content), ``loads(text, *, file, skip_bad_lines) -> Session``
and optionally ``dumps(session) -> str``. Register it with ``register_format``.

>>> from pruner.formats import FORMATS
>>> "native" in FORMATS
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import FormatError
from ..model import Session

DEFAULT_MAX_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    detect: Callable[[str, Any], float]
    loads: Callable[..., Session]
    dumps: Callable[[Session], str] | None = None


FORMATS: dict[str, Format] = {}


def register_format(fmt: Format) -> Format:
    FORMATS[fmt.name] = fmt
    return fmt


def _register_module(module: Any, description: str) -> None:
    register_format(Format(name=module.NAME, description=description, detect=module.detect,
                           loads=module.loads, dumps=getattr(module, "dumps", None)))


from . import native  # noqa: E402  (registration order is detection tie-break order)

_register_module(native, "pruner's own JSONL: a header line, then one message per line")


def decode_bytes(data: bytes, *, file: str) -> str:
    """Bytes to text: refuses binary data and invalid UTF-8, accepts a UTF-8 BOM."""
    if not data.strip():
        raise FormatError("the file is empty", file=file)
    if b"\x00" in data[:65536]:
        raise FormatError("this is binary data, not a text transcript", file=file)
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
    scores = [(fmt.detect(text, None), name) for name, fmt in FORMATS.items()]
    best = max((s for s, _ in scores), default=0.0)
    if best <= 0:
        raise FormatError(
            f"unknown format; supported: {', '.join(FORMATS)} (use --format NAME to choose)", file=file)
    winners = [name for s, name in scores if s == best]
    if len(winners) > 1:
        raise FormatError(f"ambiguous format: could be {' or '.join(winners)}; "
                          "choose one with --format NAME", file=file)
    return winners[0]


def loads(text: str, *, file: str = "<input>", format: str | None = None,
          skip_bad_lines: bool = False) -> Session:
    """Parse transcript text (format detected from content unless given)."""
    name = format or detect_format(text, file=file)
    if name not in FORMATS:
        raise FormatError(f"unknown format {name!r}; supported: {', '.join(FORMATS)}", file=file)
    return FORMATS[name].loads(text, file=file, skip_bad_lines=skip_bad_lines)


def load_bytes(data: bytes, *, file: str = "<input>", format: str | None = None,
               skip_bad_lines: bool = False, max_bytes: int = DEFAULT_MAX_BYTES) -> Session:
    if len(data) > max_bytes:
        raise FormatError(f"the file is {len(data):,} bytes, over the {max_bytes:,}-byte limit "
                          "(raise it with --max-bytes)", file=file)
    return loads(decode_bytes(data, file=file), file=file, format=format, skip_bad_lines=skip_bad_lines)


def load_session(path: str | os.PathLike, *, format: str | None = None, skip_bad_lines: bool = False,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> Session:
    """Read a transcript file of any registered format. The file is only read, never changed."""
    file = os.fspath(path)
    try:
        size = os.path.getsize(file)
    except OSError as exc:
        raise FormatError(f"cannot read the file ({exc.strerror})", file=file) from None
    if size > max_bytes:
        raise FormatError(f"the file is {size:,} bytes, over the {max_bytes:,}-byte limit "
                          "(raise it with --max-bytes)", file=file)
    try:
        with open(file, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise FormatError(f"cannot read the file ({exc.strerror})", file=file) from None
    return load_bytes(data, file=file, format=format, skip_bad_lines=skip_bad_lines, max_bytes=max_bytes)


def save_session(session: Session, path: str | os.PathLike) -> None:
    """Write ``session`` as native JSONL."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(native.dumps(session))
