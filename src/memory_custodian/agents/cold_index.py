"""The first session after a clone builds the index in the background instead of making the agent wait.

A session-start hook that finds no index (`.cache/` is never committed) sends the curated files and
the directives, read without one (`ledger/cold_start.py`), and starts one detached process that
builds it. Until that process is done — its marker file `.cache/indexing` says so — the prompt and
file hooks send no recall lines and say why, instead of blocking on the build. A marker older than
`STALE_S` (a build that died) no longer counts, and the next hook starts another. A small ledger
(under `COLD_BYTES` of shards, built in well under a second) is indexed in the hook itself, as before.
"""

from __future__ import annotations

import os
import sys
import time

from ..base.fsutil import cache_dir
from ..ledger.index.cold_start import index_is_cold
from ..ledger.storage.store import Ledger
from ..memory import Memory

MARKER = "indexing"
COLD_BYTES = 1_000_000  # ~2,000 notes: an index build of about a second on a busy core (7,490 notes: 3 s)
STALE_S = 600
WAITING = ("recall is still being indexed (the first session after a clone) — matching notes arrive once it is "
           "built; `memory-custodian recall` works meanwhile (it waits for the index)")


def _marker(memory) -> str:
    return os.path.join(memory.memory_dir_str, ".cache", MARKER)


def building(memory) -> bool:
    """Whether a background build is under way (its marker is fresh)."""
    try:
        return time.time() - os.stat(_marker(memory)).st_mtime < STALE_S
    except (FileNotFoundError, NotADirectoryError):
        return False


def cold(memory) -> bool:
    """Whether recall must wait: no index yet and ledger shards to index, or a build under way."""
    if building(memory):
        return True
    if not index_is_cold(memory.memory_dir_str):
        return False
    return sum(st.st_size for st in Ledger(memory.memory_dir_str).shard_stats().values()) >= COLD_BYTES


def start_building(memory) -> None:
    """Start the detached build (once: the marker is taken with O_EXCL)."""
    import subprocess

    cache_dir(memory.memory_dir_str)
    path = _marker(memory)
    if os.path.exists(path) and not building(memory):
        os.unlink(path)  # a build that died: take over
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)
    code = "import sys; from memory_custodian.agents.cold_index import build; build(sys.argv[1], sys.argv[2])"
    subprocess.Popen([sys.executable, "-c", code, memory.root_str, memory.memory_dir_str], cwd=memory.root_str,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True)


def build(root: str, memory_dir: str) -> None:
    """The detached process: build the index, then drop the marker (also when the build fails)."""
    memory = Memory(root, memory_dir)
    try:
        memory.reindex()
    finally:
        try:
            os.unlink(_marker(memory))
        except FileNotFoundError:
            pass
