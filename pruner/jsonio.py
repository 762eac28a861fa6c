"""Strict JSON in and safe JSON out, shared by every importer and exporter.

Reading: ``NaN`` and ``Infinity`` are not JSON (RFC 8259) and a number too large
for a float (``1e999``) would turn into infinity, which no API accepts; Python
also refuses integers longer than 4,300 digits. Each of these is a
``JsonProblem`` that says what and where (line and column), like a syntax error.

Writing: ``dumps_json`` never writes ``NaN``/``Infinity`` (``ExportError``
instead) and escapes the characters a reader or a terminal may take for
something else: DEL and the C1 controls (U+0080-U+009F, which include an
8-bit escape), the line separators U+2028/U+2029 (``str.splitlines`` and
JavaScript split lines on them) and lone surrogates (which UTF-8 cannot
encode). Escaping changes no value: ``json.loads`` reads back the same string.

>>> dumps_json({"t": "a\\u2028b\\x9b"})
'{"t": "a\\\\u2028b\\\\u009b"}'
>>> loads_json('{"x": NaN}')
Traceback (most recent call last):
...
pruner.jsonio.JsonProblem: NaN is not a JSON value (line 1, column 7)
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from .errors import ExportError, FormatError, PrunerError
from .files import read_limited

_UNSAFE_OUT = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")
# A JSON token scanner used only to locate a bad number once parsing has failed:
# strings are matched whole so digits inside them are never mistaken for numbers.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|(NaN|-?Infinity)|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)')
_INT_DIGITS = 4300  # CPython's default sys.int_info.default_max_str_digits


class JsonProblem(ValueError):
    """Text that is not JSON a transcript can hold; ``msg``, ``lineno``, ``colno`` say what and where."""

    def __init__(self, msg: str, lineno: int, colno: int):
        self.msg, self.lineno, self.colno = msg, lineno, colno
        super().__init__(f"{msg} (line {lineno}, column {colno})")


class _BadNumber(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _BadNumber(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadNumber(f"the number {text[:40]} is too large for a floating-point value")
    return value


def _bad_number(text: str, fallback: str) -> tuple[str, int, int]:
    """The first number token in ``text`` that cannot be read: (message, line, column)."""
    for match in _TOKENS.finditer(text):
        constant, number = match.group(1), match.group(2)
        if constant:
            problem = f"{constant} is not a JSON value"
        elif number and re.fullmatch(r"-?\d+", number) and len(number.lstrip("-")) > _INT_DIGITS:
            problem = (f"a whole number of {len(number.lstrip('-')):,} digits is longer than the "
                       f"{_INT_DIGITS:,} digits a number may have here")
        elif number and not re.fullmatch(r"-?\d+", number) and not math.isfinite(float(number)):
            problem = f"the number {number[:40]} is too large for a floating-point value"
        else:
            continue
        line = text.count("\n", 0, match.start()) + 1
        column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
        return problem, line, column
    return fallback, 1, 1


# One decoder for every call: ``json.loads`` with hooks would build a new one each time (per JSONL line).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def loads_json(text: str) -> Any:
    """``json.loads`` for transcripts: ``JsonProblem`` (a ``ValueError``) for anything that
    is not JSON, including NaN, Infinity, overflowing floats and over-long integers.
    ``RecursionError`` (nesting too deep) passes through for the caller to name."""
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise JsonProblem(exc.msg, exc.lineno, exc.colno) from None
    except ValueError as exc:  # NaN / Infinity / 1e999 (our hooks) or an over-long integer (Python's limit)
        raise JsonProblem(*_bad_number(text, str(exc))) from None


_ENCODERS: dict[int | None, json.JSONEncoder] = {}  # reused: json.dumps with options builds one per call


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_unsafe(text: str) -> str:
    """JSON text with the characters ``dumps_json`` escapes written as ``\\u`` escapes (they can
    only stand inside strings, so several documents joined by newlines can be escaped at once)."""
    return _UNSAFE_OUT.sub(_escape, text) if _UNSAFE_OUT.search(text) else text


def dumps_json(value: Any, *, indent: int | None = None, escape: bool = True) -> str:
    """JSON text for ``value`` that any JSON reader, line splitter or terminal takes as it is
    (``escape=False`` leaves that to a later ``escape_unsafe`` over many documents)."""
    encoder = _ENCODERS.get(indent) or _ENCODERS.setdefault(
        indent, json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=indent))
    try:
        text = encoder.encode(value)
    except ValueError:
        raise ExportError("a value is NaN or infinite, which JSON cannot hold; "
                          "replace it with a number or a string") from None
    except RecursionError:
        raise ExportError("a value is nested too deeply to write as JSON") from None
    return escape_unsafe(text) if escape else text


#: Settings and results files (prices, benchmark results, a batch manifest) are small.
SETTINGS_FILE_MAX_BYTES = 64 * 1024 * 1024


def load_json_file(path: str | os.PathLike[str], *, error: type[PrunerError], expected: str = "",
                   max_bytes: int = SETTINGS_FILE_MAX_BYTES) -> Any:
    """The strict JSON in the regular file ``path``; ``error`` (a ``PrunerError`` class) naming
    the file when it cannot be read or is not JSON. Reads with a bound and only regular files, so
    a named pipe is refused at once instead of waited on. ``expected`` ends the message, e.g.
    "expected a file written by 'pruner bench --json'"."""
    hint = f"; {expected}" if expected else ""
    try:
        file, data = read_limited(path, max_bytes, what="a regular file")
    except FormatError as exc:
        raise error(f"{path}: {exc.detail}{hint}") from None
    try:
        return loads_json(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise error(f"{file}: not UTF-8 text ({exc.reason}){hint}") from None
    except (JsonProblem, RecursionError) as exc:
        raise error(f"{file}: not JSON ({exc or 'nested too deeply'}){hint}") from None
