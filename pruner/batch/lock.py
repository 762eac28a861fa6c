"""One batch at a time per folder: a lock file that names the process running it.

``OUT/_pruner_batch.lock`` holds the holder's process id, the process's start
time and the host name. A second batch on the folder is refused with those
named. A lock whose process is gone (killed, the machine rebooted) is stale:
the process id alone could since belong to another program, so the start time
must match too. A stale lock is taken over; a lock written on another host
cannot be checked from here and is refused with what it says.

Every look at the lock (create, take over, release) happens while holding an
``flock`` on the folder itself, so two starters never both take one stale lock;
the kernel drops that guard when its process dies. The lock file is created
with ``O_EXCL`` by a hard link from a fully written temporary file and read with
``O_NOFOLLOW``, so it is never half written and never read or written through a
link someone planted.

Each run's lock carries a random token that the run's Dask tasks are given:
a task checks it before committing its files, so a task left running by a
killed batch never commits into a folder another run now holds.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import socket
import stat
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Iterator

from ..errors import ConfigurationError

LOCK = "_pruner_batch.lock"
#: A lock file is a few hundred bytes; anything longer is not one of ours.
LOCK_MAX_BYTES = 4096
#: Process start times are compared with this tolerance (seconds): they are derived from clock ticks.
START_TIME_TOLERANCE = 0.5


class FolderBusyError(ConfigurationError):
    """Another batch holds the folder."""


@dataclass(frozen=True)
class Holder:
    pid: int
    started: float  # the process's start time, seconds since the epoch
    host: str
    token: str

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.started))
        return f"process {self.pid} on {self.host}, started {when}"


def _process_start(pid: int) -> float | None:
    """The start time of the running process ``pid``; None when there is none (or only its zombie)."""
    import psutil  # a dependency of distributed

    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        started: float = process.create_time()  # psutil is untyped here
        return started
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def this_process(token: str | None = None) -> Holder:
    started = _process_start(os.getpid())
    return Holder(pid=os.getpid(), started=started if started is not None else time.time(),
                  host=socket.gethostname(), token=token or secrets.token_hex(16))


def is_running(holder: Holder) -> bool | None:
    """Whether the holder still runs: True, False, or None when it ran on another host."""
    if holder.host != socket.gethostname():
        return None
    started = _process_start(holder.pid)
    return started is not None and abs(started - holder.started) <= START_TIME_TOLERANCE


def lock_path(root: str) -> str:
    return os.path.join(root, LOCK)


def read_holder(root: str) -> Holder | None:
    """Who holds ``root``'s lock; None when there is no lock. ``ConfigurationError`` for a lock
    file that is not one (a link, a pipe, garbage): a person must look at it."""
    path = lock_path(root)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        reason = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise ConfigurationError(f"{path}: cannot read the batch lock ({reason}); if no batch runs on this "
                                 "folder, delete the file") from None
    with os.fdopen(fd, "rb", buffering=0) as fh:
        info = os.fstat(fd)
        data = fh.read(LOCK_MAX_BYTES + 1) if stat.S_ISREG(info.st_mode) else b""
    try:
        body = json.loads(data.decode("utf-8"))
        holder = Holder(pid=int(body["pid"]), started=float(body["started"]), host=str(body["host"]),
                        token=str(body["token"]))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, OverflowError):
        raise ConfigurationError(f"{path}: this is not a batch lock this version wrote; if no batch runs on "
                                 "this folder, delete the file") from None
    return holder


@contextmanager
def _guard(root: str) -> Iterator[None]:
    """An exclusive ``flock`` on the folder while the lock is looked at (where the system has one)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the O_EXCL link alone
        yield
        return
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # a file system without flock (some network mounts): the O_EXCL link alone
            pass
        yield
    finally:
        os.close(fd)  # releases the flock


def _write_temp(root: str, holder: Holder) -> str:
    temp = os.path.join(root, f".{LOCK}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(asdict(holder), fh, sort_keys=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    return temp


@dataclass(frozen=True)
class Acquired:
    holder: Holder
    took_over: Holder | None  # the stale lock's holder, when one was taken over


def acquire(root: str) -> Acquired:
    """Lock ``root`` (created if need be) for this process; ``FolderBusyError`` when a live batch holds it,
    ``ConfigurationError`` when the folder cannot hold a lock (not writable, ...)."""
    try:
        return _acquire(root)
    except OSError as exc:
        raise ConfigurationError(f"{root}: cannot lock the batch folder ({exc.strerror or exc}); choose a "
                                 "folder this user can write") from None


def _acquire(root: str) -> Acquired:
    os.makedirs(root, exist_ok=True)
    me = this_process()
    path = lock_path(root)
    with _guard(root):
        temp = _write_temp(root, me)
        try:
            try:
                os.link(temp, path)  # fails when the name exists, whatever it is (a link too)
                return Acquired(me, None)
            except FileExistsError:
                pass
            current = read_holder(root)
            if current is None:  # released between the two steps (no guard on this file system)
                os.link(temp, path)
                return Acquired(me, None)
            running = is_running(current)
            if running is None:
                raise FolderBusyError(f"{root}: a batch holds this folder ({current.describe()}); it ran on "
                                      f"another host, so this one cannot check it; if it is gone, delete {path}")
            if running:
                raise FolderBusyError(f"{root}: another batch is running on this folder ({current.describe()}); "
                                      "wait for it to finish or choose another batch folder", setting="out")
            os.replace(temp, path)  # a stale lock: its process is gone
            return Acquired(me, current)
        finally:
            if os.path.lexists(temp):
                os.remove(temp)


def release(root: str, holder: Holder) -> None:
    """Remove the lock if ``holder`` still holds it."""
    with _guard(root):
        try:
            current = read_holder(root)
        except ConfigurationError:
            return
        if current is not None and current.token == holder.token:
            os.remove(lock_path(root))


def holds(root: str, token: str) -> bool:
    """Whether the run with ``token`` still holds ``root`` (what a task checks before committing)."""
    try:
        current = read_holder(root)
    except ConfigurationError:
        return False
    return current is not None and current.token == token
