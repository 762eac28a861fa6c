"""What every bill-only reader shares: a session file streamed line by line, hashed once, in flat memory.

The full readers (``pruner.formats.load_session``) read a whole file into
memory, decode it, and refuse a file over ``DEFAULT_MAX_BYTES``. A bill-only
reader (``codex_usage``, ``pi_usage``, ``gemini_cli_usage``, Qwen Code's and Copilot CLI's; Amp's
reads its one document with ``document``) streams it in
``BLOCK``-sized pieces instead, so its memory does not grow with the file's
text: it keeps, per line, only what the bill reads.

It must still give the full reader's answer. So ``Stream`` refuses (raises
``Unsure``, and the caller returns None: the full reader decides) wherever the
full reader would see the file differently:

* a file ``check_text_bytes`` refuses (empty, UTF-16, a NUL byte near its start);
* invalid UTF-8 anywhere (the full reader refuses the file);
* a file at most ``DEFAULT_MAX_BYTES`` long whose brackets ``charged_size`` charges above it;
* a line msgspec refuses (the caller's typed decoder raises): a lone surrogate escape, NaN, a
  truncated line, anything the strict reader may read differently;
* a number msgspec's typed decoders skip without checking, in a field no reader declares, that the
  strict reader refuses (a float out of range, ``1e999``; an integer of more than 4,300 digits), or
  a string that is not UTF-8: ``check`` reads each line with msgspec's generic decoder first.

A file over ``DEFAULT_MAX_BYTES`` is streamed all the same: the limit bounds the
full reader's memory, and streaming needs none (issue 32: a 1 GB session is
billed in flat memory; the full reader refuses it).

Exact repeats of a line are dropped as ``parse_jsonl`` drops them (same
identity, same text), without keeping the lines: ``Repeats`` keeps a hash and
the line's place in the file, and reads a candidate back to compare the bytes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from typing import Any, Iterator

import msgspec

BLOCK = 4 << 20  # bytes read at a time: large enough for few Python steps, small against any limit
HEAD = 1 << 20  # the first bytes kept for detection (51 lines of up to about 20 KB each)
__all__ = ["BLOCK", "Repeats", "Stream", "Unsure", "check", "detected", "document", "identity", "only"]

_generic = msgspec.json.Decoder().decode


class Unsure(Exception):
    """Something only the full reader reads (or refuses) the way it should."""


def check(line: bytes) -> Any:
    """``Unsure`` unless msgspec reads ``line`` whole. A typed decoder skips the fields it does not declare
    without checking them (a string's UTF-8, a number's range: ``1e999``, an integer of 5,000 digits),
    which the strict reader refuses; msgspec's generic decoder checks them as the strict reader does
    (``claude_code_usage``'s line parser, property-tested against it), at about 1 GB/s, faster than any
    search for such numbers in the bytes. A line it refuses is one the full reader skips or repairs."""
    try:
        return _generic(line)
    except Exception:
        raise Unsure() from None


class Stream:
    """A session file read once: its lines (``lines()``), its SHA-256 (``digest`` once read), its name."""

    def __init__(self, path: str):
        from . import BINARY_SNIFF_BYTES, CONTAINER_BYTES, DEFAULT_MAX_BYTES

        self.file = os.fspath(path)
        self.fd = os.open(self.file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        try:
            info = os.fstat(self.fd)
            if not stat.S_ISREG(info.st_mode):
                raise Unsure()
        except BaseException:
            os.close(self.fd)
            raise
        self.size = info.st_size
        self.sha = hashlib.sha256()
        self.digest = ""
        self._sniff = BINARY_SNIFF_BYTES
        # Only a file the full reader reads (not over the limit) is held to its bracket charge.
        self._brackets = self.size <= DEFAULT_MAX_BYTES < self.size * CONTAINER_BYTES
        self._limit = DEFAULT_MAX_BYTES // CONTAINER_BYTES
        self.head = b""  # the first bytes, for detection

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def blocks(self) -> Iterator[bytes]:
        brackets, offset = 0, 0
        while True:
            block = os.pread(self.fd, BLOCK, offset)
            if not block:
                break
            if offset < self._sniff:
                if offset == 0 and block.startswith((b"\xff\xfe", b"\xfe\xff")):
                    raise Unsure()  # UTF-16
                if b"\x00" in block[: self._sniff - offset]:
                    raise Unsure()  # binary data
            if self._brackets:
                brackets += block.count(b"[") + block.count(b"{")
                if brackets > self._limit:
                    raise Unsure()  # charged over the limit: the full reader refuses it
            self.sha.update(block)
            offset += len(block)
            yield block
        self.digest = self.sha.hexdigest()

    def lines(self) -> Iterator[tuple[int, int, bytes]]:
        """``(line number, offset in the file, line stripped)`` of every non-blank line, split on
        ``\\n`` as ``parse_jsonl`` splits (a UTF-8 BOM at the start is not part of the first line), each
        checked first (``check``)."""
        tail, start, lineno, seen_text = b"", 0, 0, False
        first = True
        for block in self.blocks():
            if first:
                self.head = block[:HEAD]
                first = False
                if block.startswith(b"\xef\xbb\xbf"):
                    block, start = block[3:], 3
            data = tail + block if tail else block
            pieces = data.split(b"\n")
            tail = pieces.pop()
            for raw in pieces:
                lineno += 1
                line = raw.strip()
                if line:
                    seen_text = True
                    check(line)
                    yield lineno, start + (len(raw) - len(raw.lstrip())), line
                start += len(raw) + 1
        if tail.strip():
            seen_text = True
            check(tail.strip())
            yield lineno + 1, start + (len(tail) - len(tail.lstrip())), tail.strip()
        if not seen_text:
            raise Unsure()  # empty: the full reader says so

    def read_back(self, offset: int, length: int) -> bytes:
        return os.pread(self.fd, length, offset)


class Repeats:
    """``parse_jsonl``'s rule for an agent log: a line with an identity that repeats an earlier line
    exactly is dropped. Keeps a hash and the place of each such line (one int), not the line: a repeat
    is confirmed by reading the earlier line back."""

    def __init__(self, stream: Stream):
        self.stream = stream
        self.seen: dict[int, Any] = {}  # hash -> offset << 32 | length, or a list of them (a collision)

    def repeated(self, key: Any, line: bytes, offset: int) -> bool:
        """Whether ``line`` (with identity ``key``, not None) was seen before; records it if not. (The
        identity is the line's own, so the same line has the same one: the line alone is hashed.)"""
        h = hash(line)
        place = offset << 32 | len(line)
        held = self.seen.get(h)
        if held is None:
            self.seen[h] = place
            return False
        places = held if isinstance(held, list) else [held]
        for p in places:
            length = p & 0xFFFFFFFF
            if length == len(line) and self.stream.read_back(p >> 32, length) == line:
                return True
        self.seen[h] = [*places, place]
        return False


def only(path: str, kind: bytes) -> str | None:
    """The SHA-256 of the JSONL file ``path`` when every line of it is an object of type ``kind`` (its
    first bytes ``{"type":"<kind>"``, as an agent writes it compactly, and read whole by ``check``),
    else None; reads no further than the first other line (a few bytes for most files)."""
    prefix = b'{"type":"' + kind + b'"'
    with Stream(path) as stream:
        start = os.pread(stream.fd, len(prefix) + 3, 0)
        if not start.removeprefix(b"\xef\xbb\xbf").startswith(prefix):
            return None
        for _, _, line in stream.lines():
            if not line.startswith(prefix):
                return None
            obj = check(line)
            if type(obj) is not dict or obj.get("type") != kind.decode():
                return None
        return stream.digest


def identity(scope: Any, keys: tuple[str, ...]) -> Any:
    """``common.identity_by``'s key of one scope: the first of ``keys`` holding a non-empty string or an int."""
    for key in keys:
        value = getattr(scope, key, None)
        if (type(value) is str and value) or type(value) is int:
            return (key, value)
    return None


def _first(line: bytes, strict: Any) -> Any:
    """A line as ``common.probe`` reads a JSONL file's first: msgspec, and where it refuses, the strict reader."""
    try:
        return _generic(line)
    except Exception:
        return strict(line.decode("utf-8"))


def detected(stream: Stream, name: str) -> bool:
    """Whether ``detect_format`` calls the JSONL file ``name``, from its first lines only when that is the
    same answer (``common.probe`` reads a JSONL file's first 50 lines); False when unsure."""
    from . import detect_format
    from ..jsonio import loads_json

    head = stream.head[3:] if stream.head.startswith(b"\xef\xbb\xbf") else stream.head
    try:
        pieces = head.lstrip().split(b"\n", 51)
        if len(pieces) < 52 and stream.size <= len(stream.head):  # the whole file, of 51 lines or fewer
            return detect_format(head.decode("utf-8"), file=stream.file) == name
        if len(pieces) < 52 or not any(p.strip() for p in pieces[1:51]) \
                or not isinstance(_first(pieces[0], loads_json), dict):
            return False  # lines too long for the head, or not JSONL from the start: the full reader decides
        return detect_format(b"\n".join(pieces[:51]).decode("utf-8"), file=stream.file) == name
    except Exception:
        return False


def document(path: str, decode: Any) -> tuple[str, Any, str]:
    """``(file name, decode(its bytes), SHA-256)`` of a one-document JSON file (an Amp thread), read as
    ``Stream`` reads lines: ``Unsure`` where the full reader would see it differently (see the module; a
    file over ``DEFAULT_MAX_BYTES`` too, which that reader refuses, and a document msgspec refuses)."""
    from . import DEFAULT_MAX_BYTES

    with Stream(path) as stream:
        if stream.size > DEFAULT_MAX_BYTES:
            raise Unsure()
        data = b"".join(stream.blocks())
        data = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
        if not data.strip():
            raise Unsure()  # empty: the full reader says so
        check(data)
        try:
            return stream.file, decode(data), stream.digest
        except Exception:
            raise Unsure() from None
