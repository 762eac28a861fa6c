"""What the bill-only readers of JSON Lines agent logs share: the file read as the full reader reads it.

A bill-only reader (``Agent.read_usage``; ``claude_code_usage`` is the first) decodes each line with a
typed msgspec decoder that declares only the fields the bill and the cache ledger read, then hands the
skeleton records to its format's own record reader, so both paths go through the same code from the
records on. It must give the full reader's row or step aside: ``lines`` raises ``Unsupported`` (the
caller returns None and the full reader reads the file) wherever the two could differ: a line the typed
decoder refuses (not JSON to msgspec, a field of another type than declared: the strict reader and the
full importer decide those), a line repeated exactly (the full reader drops it and says so), a file the
full reader does not take as text (a NUL byte near its start, UTF-16, empty, a byte that is not UTF-8
anywhere in it) or over its size limit.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable

from ..files import read_limited

__all__ = ["Unsupported", "document", "lines", "risky"]

#: Numbers msgspec skips in a field a typed decoder does not declare but the strict reader refuses (an
#: exponent of three digits, thousands of digits): a file holding one goes to the full reader. A match
#: inside a string only sends the file there too, which is always allowed.
_EXPONENT = re.compile(rb"[:,\[]\s*-?[0-9]+(?:\.[0-9]*)?[eE][+-]?[0-9]{3}")
_EXPONENT_HINT = re.compile(rb"[0-9][eE][+-]?[0-9]{3}")  # needed for a match of the above, three times cheaper
_LONG = re.compile(rb"[0-9]{4000}")


def risky(data: bytes) -> bool:
    """Whether ``data`` may hold a number only the strict reader refuses (see ``_EXPONENT``)."""
    return bool(_LONG.search(data) or (_EXPONENT_HINT.search(data) and _EXPONENT.search(data)))


class Unsupported(Exception):
    """Something only the full reader handles (or refuses) the way it should."""


def _read(path: str) -> tuple[str, bytes, str]:
    from . import CONTAINER_BYTES, DEFAULT_MAX_BYTES, _check_size, check_text_bytes

    file, data = read_limited(path, DEFAULT_MAX_BYTES)
    digest = hashlib.sha256(data).hexdigest()
    check_text_bytes(data, file=file)
    if len(data) * CONTAINER_BYTES > DEFAULT_MAX_BYTES:
        _check_size(data, DEFAULT_MAX_BYTES, file)
    # msgspec checks the UTF-8 of the fields it decodes, not of those it skips; the full reader refuses
    # a file with any invalid byte (``decode_bytes``), so the whole file is checked here.
    data.decode("utf-8")
    return file, data[3:] if data.startswith(b"\xef\xbb\xbf") else data, digest


def document(path: str, decode: Callable[[bytes], Any]) -> tuple[str, Any, str]:
    """``(file name, decoded document, SHA-256)`` of a one-document file, as ``lines`` reads lines."""
    file, data, digest = _read(path)
    if risky(data):
        raise Unsupported()
    try:
        return file, decode(data), digest
    except Exception:
        raise Unsupported() from None


def lines(path: str, decode: Callable[[bytes], Any]) -> tuple[str, list[tuple[int, Any]], str]:
    """``(file name, [(line number, decoded line)], SHA-256 of the file)`` for ``path``, read as
    ``pruner.formats.load_session`` reads it (regular files, bounded); raises ``Unsupported`` (see the
    module) or the decoder's own error for anything the full reader should see."""
    file, data, digest = _read(path)
    out = []
    # A hash, not the line: two lines hashing alike only send the file to the full reader.
    seen: set[int] = set()
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        key = hash(line)
        if key in seen:
            raise Unsupported()  # an exact repeat: the full reader drops it and reports it
        seen.add(key)
        try:
            out.append((lineno, decode(line)))
        except Exception:  # msgspec's DecodeError / ValidationError: the full reader decides
            raise Unsupported() from None
    return file, out, digest
