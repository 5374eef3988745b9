"""One exclusive, blocking lock on an open file, on POSIX and on Windows, behind two functions.

POSIX takes `fcntl.flock` on the whole file; Windows has no fcntl, so it locks the file's first
byte with `msvcrt.locking`, whose blocking mode gives up after ten seconds: we poll the
non-blocking mode instead, so a writer waits as long as the holder needs, as flock does. Both are
released by the OS when the process dies, which is what makes a killed writer harmless. The
standard library covers both platforms, so no lock package is needed (recorded in decisions.md).
"""

from __future__ import annotations

import os
import time

_POLL_START, _POLL_MAX = 0.001, 0.05  # seconds between tries while another process holds the lock


class PosixLock:
    """`flock` on the whole file: exclusive, blocking, per open file description."""

    name = "fcntl"

    def __init__(self, fcntl_module=None):
        if fcntl_module is None:
            import fcntl as fcntl_module
        self._fcntl = fcntl_module

    def acquire(self, fd: int) -> None:
        self._fcntl.flock(fd, self._fcntl.LOCK_EX)

    def release(self, fd: int) -> None:
        self._fcntl.flock(fd, self._fcntl.LOCK_UN)


class WindowsLock:
    """`msvcrt.locking` on byte 0, polled without a time limit (its own blocking mode stops at 10 s)."""

    name = "msvcrt"

    def __init__(self, msvcrt_module=None, sleep=None):
        if msvcrt_module is None:
            import msvcrt as msvcrt_module
        self._msvcrt, self._sleep = msvcrt_module, sleep or time.sleep

    def acquire(self, fd: int) -> None:
        delay = _POLL_START
        while True:
            os.lseek(fd, 0, os.SEEK_SET)  # the locked range starts at the file position
            try:
                self._msvcrt.locking(fd, self._msvcrt.LK_NBLCK, 1)
                return
            except OSError:  # held by another process (EACCES / EDEADLOCK): wait and try again
                self._sleep(delay)
                delay = min(delay * 2, _POLL_MAX)

    def release(self, fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        self._msvcrt.locking(fd, self._msvcrt.LK_UNLCK, 1)


_backend = None


def backend():
    """This platform's lock, made once."""
    global _backend
    if _backend is None:
        _backend = WindowsLock() if os.name == "nt" else PosixLock()
    return _backend


def acquire(fd: int) -> None:
    """Block until this process holds the exclusive lock on the open file `fd`."""
    backend().acquire(fd)


def release(fd: int) -> None:
    backend().release(fd)
