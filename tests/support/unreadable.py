"""A file the kernel refuses to read, also when the tests run as root.

``chmod 000`` stops every user but root: root passes the permission check by its capabilities
``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH``. ``permission_checks()`` takes those two out of the
calling thread's effective set (``capset(2)``; they stay in its permitted set) for the length of a
``with`` block and puts them back after, so inside it a ``chmod 000`` file gives a real ``EACCES``
from ``open`` (no mocked function), and everything else (the standard library, the worktree, the
temporary folders root owns) stays readable by ownership. Dropping to another user instead would
not do: this machine's Python installation is readable by root alone. Not root: the block does
nothing, the permission bits already bind. Linux only (elsewhere as root: the test is skipped).
"""

from __future__ import annotations

import ctypes
import os
import sys
from contextlib import contextmanager
from typing import Iterator

import pytest

_VERSION_3 = 0x20080522  # _LINUX_CAPABILITY_VERSION_3
_DAC = (1 << 1) | (1 << 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _caps():
    libc = ctypes.CDLL(None, use_errno=True)
    header, data = _Header(_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    return libc, header, data


@contextmanager
def permission_checks() -> Iterator[None]:
    """Inside: the permission bits bind this thread, root or not (see the module)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        yield
        return
    if not sys.platform.startswith("linux"):
        pytest.skip("running as root, and dropping root's file capabilities is done here on Linux only")
    libc, header, data = _caps()
    saved = data[0].effective
    data[0].effective = saved & ~_DAC
    if libc.capset(ctypes.byref(header), data) != 0:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE (errno {ctypes.get_errno()})")
    try:
        yield
    finally:
        data[0].effective = saved
        libc.capset(ctypes.byref(header), data)
