"""Reading input files with a bound, and writing output files atomically.

``read_limited`` reads only regular files: opening a named pipe nobody writes to
would wait forever, and a device such as ``/dev/zero`` never ends. The check is
made on the opened descriptor (opened without blocking), so nothing can swap
the file in between. A file over ``max_bytes`` is refused from its size, before
it is read.

``write_atomic`` writes to a temporary file beside the target and renames it
over the target (``os.replace``); it is the one place pruner writes a file (a test
holds every other module to it). A failure at any point (a character UTF-8
cannot encode, a full disk, an interrupt) leaves the previous file exactly as
it was. A symbolic link is followed: the file it points to is replaced and the
link stays. Targets that cannot be replaced by a rename are written in place:
a device (``/dev/null``, a terminal) and a named pipe that a process is
reading; a pipe nobody reads is refused rather than waited on.
With ``follow_symlinks=False`` (a folder's own files, such as a batch
manifest) a link at the target's name is replaced by the file instead of
followed, so whoever can write into the folder cannot redirect the write.
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import stat
from typing import BinaryIO, Callable

from .errors import ConfigurationError, ExportError, FileTooLargeError, FormatError

#: Limits of ``max_bytes``: Python cannot read more than this in one call on 64-bit systems.
MAX_READ_LIMIT = 2**62


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_byte_limit(max_bytes: object) -> int:
    """``max_bytes`` if it is a usable size limit, else ``ConfigurationError``."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or not 0 < max_bytes <= MAX_READ_LIMIT:
        raise ConfigurationError(f"max_bytes is {max_bytes!r}; it must be a whole number of bytes from 1 "
                                 f"to {MAX_READ_LIMIT:,}")
    return max_bytes


def read_limited(path: str | os.PathLike[str], max_bytes: int, *, what: str = "a transcript file") -> tuple[str, bytes]:
    """``(file name, bytes)`` of the regular file ``path``; ``FormatError`` when it cannot be read,
    ``FileTooLargeError`` when it holds more than ``max_bytes``."""
    check_byte_limit(max_bytes)
    file = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(file, flags)
    except OSError as exc:
        if exc.errno == errno.EISDIR:  # where a folder cannot even be opened for reading
            raise FormatError(f"this is a folder, not a file; give the path of {what}", file=file) from None
        raise FormatError(f"cannot read the file ({exc.strerror})", file=file) from None
    try:
        # The kind is checked on the descriptor before it becomes a file object: io refuses a
        # folder's descriptor with IsADirectoryError, which is no message for a person.
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FormatError(f"this is {_kind(info.st_mode)}, not a file; give the path of {what}", file=file)
        if info.st_size > max_bytes:  # before reading, so a huge file is refused at once
            raise FileTooLargeError(size=info.st_size, limit=max_bytes, file=file)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb", buffering=0) as fh:
        try:
            data = _read_upto(fh, max_bytes + 1)  # bounded even where the size is not known (/proc)
        except OSError as exc:
            raise FormatError(f"cannot read the file ({exc.strerror})", file=file) from None
    if len(data) > max_bytes:  # the file grew while it was read
        raise FileTooLargeError(size=len(data), limit=max_bytes, file=file)
    return file, data


def _read_upto(fh: BinaryIO, limit: int) -> bytes:
    chunks, total = [], 0
    while total < limit:
        chunk = fh.read(min(limit - total, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _encode(text: str, file: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ExportError(f"{file}: the text to write holds U+{ord(text[exc.start]):04X} at character {exc.start:,}, "
                          "half of a surrogate pair, which UTF-8 cannot encode; nothing was written") from None


def _write_in_place(target: str, mode: int, data: bytes, file: str) -> None:
    flags = os.O_WRONLY | getattr(os, "O_BINARY", 0)
    if stat.S_ISFIFO(mode):
        flags |= getattr(os, "O_NONBLOCK", 0)  # fails at once (ENXIO) when no process reads the pipe
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise ExportError(f"{file}: this is a named pipe (FIFO) that no process is reading; nothing was "
                              "written") from None
        raise ExportError(f"{file}: cannot write ({exc.strerror})") from None
    try:
        if stat.S_ISFIFO(mode):
            os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise ExportError(f"{file}: cannot write ({exc.strerror})") from None
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike[str], content: str | bytes | Callable[[BinaryIO], object], *,
                 follow_symlinks: bool = True) -> None:
    """Write ``content`` to ``path`` so that a failure leaves the previous file intact.

    ``content`` is text (written as UTF-8), bytes, or a function that writes the file itself into
    the binary file object it is given (a Parquet table, a copy, a file too big to hold in memory:
    streamed into the temporary file, which replaces ``path`` only once the function returned).
    """
    file = os.fspath(path)
    fill: Callable[[BinaryIO], object] | None = None
    data: bytes | None = None
    if isinstance(content, str):
        data = _encode(content, file)  # before touching anything: an encoding failure changes nothing
    elif isinstance(content, (bytes, bytearray, memoryview)):
        data = bytes(content)
    else:
        fill = content
    target = os.path.realpath(file) if follow_symlinks else os.path.abspath(file)
    info: os.stat_result | None
    try:
        info = os.stat(target) if follow_symlinks else os.lstat(target)
        if stat.S_ISLNK(info.st_mode):
            info = None  # replaced by the rename below, never written through
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise ExportError(f"{file}: cannot write ({exc.strerror})") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        if follow_symlinks and (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
            if fill is not None:  # a device or pipe is written in place, not renamed over
                buffer = io.BytesIO()
                fill(buffer)
                data = buffer.getvalue()
            _write_in_place(target, info.st_mode, data or b"", file)
            return
        raise ExportError(f"{file}: this is {_kind(info.st_mode)}; give the path of a file to write")
    folder = os.path.dirname(target) or "."
    temp = os.path.join(folder, f".{os.path.basename(target)}.{secrets.token_hex(8)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise ExportError(f"{file}: cannot write ({exc.strerror})") from None
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                if fill is not None:
                    fill(fh)
                elif data is not None:
                    fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            if info is not None:  # keep the permissions the previous file had
                os.chmod(temp, stat.S_IMODE(info.st_mode))
            os.replace(temp, target)
        except OSError as exc:
            raise ExportError(f"{file}: cannot write ({exc.strerror}); the previous file is unchanged") from None
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
