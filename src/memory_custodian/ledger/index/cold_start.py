"""The first session after a clone: the directives read straight from the shards, no index needed.

`.cache/` is never committed, so a fresh clone has no index, and building one at 74,900 notes
takes seconds a session start cannot wait. Directives are the rules that must reach the agent, so
they are found without it: one pass over the shard bytes keeps the lines that create a directive
and every later event of those notes (a substring test per line, no JSON parse), and only those
are folded. Recall waits for the index, which the hook builds in the background meanwhile.
"""

from __future__ import annotations

import json
import os

from ...base.fsutil import CACHE_DIR
from ..recall.ranking import PRIORITY_ORDER
from ..storage.fold import replay
from ..storage.inputs import current_branch
from ..storage.model import INDEX_FILE
from ..storage.store import Ledger, split_shard

NOTE_KEY = b'"note":"'


def index_is_cold(memory_dir: str) -> bool:
    """Whether there is no index yet (a fresh clone, or a deleted cache)."""
    return not os.path.exists(os.path.join(memory_dir, CACHE_DIR, INDEX_FILE))


def _note_of(line: bytes) -> bytes | None:
    at = line.find(NOTE_KEY)
    return line[at + len(NOTE_KEY):at + len(NOTE_KEY) + 8] if at >= 0 else None


def directive_notes(memory_dir: str, root: str, now_iso: str) -> list[tuple]:
    """(note, state) of every directive in force (active or stale, in scope), highest priority first."""
    ledger = Ledger(memory_dir)
    shards = []
    wanted: set[bytes | None] = set()
    for path in ledger.shards():
        with open(path, "rb") as fh:
            lines, _ = split_shard(fh.read())
        shards.append(lines)
        for line in lines:
            if b'"kind":"directive"' in line and b'"op":"create"' in line:
                wanted.add(_note_of(line))
    events = [json.loads(line) for lines in shards for line in lines if _note_of(line) in wanted]
    notes, _, _ = replay(events, check_txns=True)
    branch = None
    found = []
    for note in notes.values():
        state = note.state_at(now_iso)
        if note.kind != "directive" or state not in ("active", "stale"):
            continue
        if note.scope == "branch":
            branch = branch or current_branch(root) or ""
            if note.branch != branch:
                continue
        found.append((note, state))
    found.sort(key=lambda pair: (PRIORITY_ORDER.get(pair[0].priority, 9), pair[0].created_at, pair[0].id))
    return found
