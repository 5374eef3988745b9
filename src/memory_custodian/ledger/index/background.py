"""The index read on in a detached process, so that no command waits for a big backlog.

A command reads at most its share of the shards (`limits.INDEX_LINES_PER_COMMAND`: `Index.catch_up`)
and answers from what is indexed, saying what it has not read. What is left is read here, one
bounded step per transaction (readers see each step as it commits, writers wait for one step at
most), by one process at a time: its marker file `.cache/indexing` names its pid. A marker whose
process is gone, or that no step touched for `STALE_S`, no longer counts, and the next command
starts another build.
"""

from __future__ import annotations

import os
import sys
import time

from ...base.fsutil import CACHE_DIR, cache_dir
from ...base.limits import INDEX_LINES_PER_COMMAND

MARKER = "indexing"
FAILED = "indexing-failed"  # why the last detached build stopped, when it failed
SHOWN_FAILURE = 300
STALE_S = 120  # the build touches its marker every step (a step: seconds)
# One step of the detached build: bigger than a command's (no one waits for it), small enough that
# a step's memory stays far under the 500 MB bound and a command that must write the index (a
# write, a merge under the build) waits for one step at most (2-3 s at 74,900 notes).
STEP_LINES, STEP_BYTES = 10_000, 8 * 1_048_576


def marker(memory_dir: str) -> str:
    return os.path.join(memory_dir, CACHE_DIR, MARKER)


def building(memory_dir: str) -> bool:
    """Whether a detached build is under way: its marker is fresh (the build touches it every step) and
    the process it names is alive, so a build that was killed stops counting at once."""
    path = marker(memory_dir)
    try:
        if time.time() - os.stat(path).st_mtime >= STALE_S:
            return False
        with open(path, encoding="ascii", errors="replace") as fh:
            pid = fh.read().strip()
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not pid.isdigit():
        return True  # just taken: the starter writes the build's pid next
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, under another user
    return True


def start(memory_dir: str, cwd: str | None = None) -> bool:
    """Start the detached build unless one runs (the marker is taken with O_EXCL and then names the
    build's pid). Whether one runs now."""
    cache_dir(memory_dir)
    path = marker(memory_dir)
    if os.path.exists(path) and not building(memory_dir):
        try:
            os.unlink(path)  # a build that died: take over
        except FileNotFoundError:
            pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return True
    try:
        import subprocess  # only to start the build: a hook that starts none never loads it

        child = subprocess.Popen([sys.executable, "-m", "memory_custodian.ledger.index.detached_build", memory_dir],
                                 cwd=cwd or memory_dir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        os.write(fd, str(child.pid).encode("ascii"))
    except BaseException:
        os.unlink(path)
        raise
    finally:
        os.close(fd)
    return True


def failed(memory_dir: str) -> str | None:
    """Why the last detached build stopped, if it failed (one line, written by the build), else None."""
    try:
        with open(os.path.join(memory_dir, CACHE_DIR, FAILED), encoding="utf-8", errors="replace") as fh:
            return fh.read(SHOWN_FAILURE).strip() or None
    except (FileNotFoundError, NotADirectoryError):
        return None


def unread_phrase(unread: tuple[int, int], failure: str | None = None) -> str:
    """The words for what the index has not read yet, (bytes, shards) as `Index.unread` gives them, and
    why the detached build stopped when it failed (`failed`)."""
    size, shards = unread
    amount = f"{size / 1_048_576:,.1f} MB" if size >= 104_858 else f"{size:,} bytes"
    said = (f"{amount} of the ledger ({shards} {'shard' if shards == 1 else 'shards'}) is not indexed yet — a command "
            f"reads at most {INDEX_LINES_PER_COMMAND:,} new lines and the rest is read in the background, so notes "
            "there are missing from this answer")
    return said + (f" (the last background read failed: {failure}; each command still reads its share)" if failure else "")
