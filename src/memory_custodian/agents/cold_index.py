"""The first session after a clone builds the index in the background instead of making the agent wait.

A session-start hook that finds no index (`.cache/` is never committed) sends the curated files and
the directives, read without one (`ledger/cold_start.py`), and starts the detached process that
builds it (`ledger/index/background.py`, which every command also starts when it leaves lines
unread). Until there is an index to read the prompt and file hooks send no recall lines and say
why, instead of blocking on the build; while the build reads on they answer from what it has read
so far and say what they could not search. A small ledger (under `COLD_BYTES` of shards, built in well under
a second) is indexed in the hook itself, as before.
"""

from __future__ import annotations

from ..ledger.index import background
from ..ledger.index.cold_start import index_is_cold
from ..ledger.storage.store import Ledger

COLD_BYTES = 1_000_000  # ~2,000 notes: an index build of about a second on a busy core (7,490 notes: 3 s)
WAITING = ("recall is still being indexed (a fresh clone, or many new ledger lines) — matching notes arrive once it is "
           "built; `memory-custodian recall` answers meanwhile from what is indexed so far, and says what is not")


def _too_big_to_index_here(memory) -> bool:
    """No index yet, and more ledger shards than a hook indexes itself."""
    if not index_is_cold(memory.memory_dir_str):
        return False
    return sum(st.st_size for st in Ledger(memory.memory_dir_str).shard_stats().values()) >= COLD_BYTES


def cold(memory) -> bool:
    """Whether recall must wait: no index yet and ledger shards to index, or a build under way."""
    return background.building(memory.memory_dir_str) or _too_big_to_index_here(memory)


def unbuilt(memory) -> bool:
    """Whether a prompt or file hook must answer without recall: no index yet, too much to read in
    the hook, and no build reading it (the build is started here, then). While a build runs the
    hooks answer from what it has read so far, and say what they could not search."""
    if background.building(memory.memory_dir_str) or not _too_big_to_index_here(memory):
        return False
    start_building(memory)
    return True


def start_building(memory) -> None:
    """Start the detached build (once: `background.start`)."""
    background.start(memory.memory_dir_str, memory.root_str)
