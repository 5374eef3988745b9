"""The lock interface's contract on both of its branches: exclusive, blocking without a time limit,
released by release() whatever the file position, and by the OS when the holder dies.

The POSIX branch runs as it ships. The Windows branch runs its real code over a stand-in `msvcrt`
whose `locking` is a POSIX record lock on the same byte range (what this machine can offer): it
checks our polling, the seek to byte 0 and the unlock, not Windows itself.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import sys
import time

import pytest

from memory_custodian.base import locking

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
if sys.argv[2] == "flock":
    fcntl.flock(fd, fcntl.LOCK_EX)
else:
    fcntl.lockf(fd, fcntl.LOCK_EX, 1, 0, os.SEEK_SET)
print("held", flush=True)
time.sleep(float(sys.argv[3]))
"""


class StandInMsvcrt:
    """`msvcrt.locking` semantics (a byte range from the current position; LK_NBLCK fails at once)."""

    LK_UNLCK, LK_NBLCK = 0, 2

    def __init__(self):
        self.calls = []

    def locking(self, fd, mode, nbytes):
        self.calls.append((mode, os.lseek(fd, 0, os.SEEK_CUR)))
        if mode == self.LK_UNLCK:
            fcntl.lockf(fd, fcntl.LOCK_UN, nbytes, 0, os.SEEK_CUR)
            return
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, nbytes, 0, os.SEEK_CUR)
        except BlockingIOError as exc:
            raise OSError(errno.EACCES, "Permission denied") from exc


def branches():
    return [("fcntl", locking.PosixLock(), "flock"), ("msvcrt", locking.WindowsLock(StandInMsvcrt()), "lockf")]


def _holder(path, how, seconds):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), how, str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _take_and_free(lock, path):
    fd = os.open(path, os.O_RDWR)
    try:
        lock.acquire(fd)
        lock.release(fd)
    finally:
        os.close(fd)


@pytest.fixture
def lock_file(tmp_path):
    path = tmp_path / "lock"
    path.write_bytes(b"")
    return path


@pytest.mark.parametrize("name,lock,how", branches(), ids=lambda v: v if isinstance(v, str) else "")
def test_acquire_waits_for_another_process_then_holds(lock_file, name, lock, how):
    holder = _holder(lock_file, how, 0.4)
    fd = os.open(lock_file, os.O_RDWR)
    try:
        started = time.monotonic()
        lock.acquire(fd)
        waited = time.monotonic() - started
        assert waited > 0.2, name  # it blocked while the other process held the lock
        lock.release(fd)
    finally:
        os.close(fd)
        holder.wait(5)


@pytest.mark.parametrize("name,lock,how", branches(), ids=lambda v: v if isinstance(v, str) else "")
def test_release_frees_the_lock_for_others_even_after_the_file_position_moved(lock_file, name, lock, how):
    fd = os.open(lock_file, os.O_RDWR)
    try:
        lock.acquire(fd)
        os.write(fd, b"moved")  # the position is no longer byte 0
        lock.release(fd)
        holder = _holder(lock_file, how, 0)  # takes the lock at once: it was released
        holder.wait(5)
    finally:
        os.close(fd)


@pytest.mark.parametrize("name,lock,how", branches(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_killed_holder_frees_the_lock(lock_file, name, lock, how):
    holder = _holder(lock_file, how, 60)
    holder.send_signal(signal.SIGKILL)
    holder.wait(5)
    _take_and_free(lock, lock_file)


def test_the_windows_branch_polls_without_a_time_limit_and_backs_off(lock_file):
    naps = []
    stand_in = StandInMsvcrt()
    lock = locking.WindowsLock(stand_in, sleep=lambda s: (naps.append(s), time.sleep(s)))
    holder = _holder(lock_file, "lockf", 0.3)
    _take_and_free(lock, lock_file)
    holder.wait(5)
    assert naps and naps[0] == pytest.approx(0.001) and max(naps) <= 0.05
    assert all(pos == 0 for _, pos in stand_in.calls)  # every lock and unlock is on byte 0


def test_this_platform_gets_its_branch():
    assert locking.backend().name == ("msvcrt" if os.name == "nt" else "fcntl")
