"""What a merge must know beyond the three versions of one file: which side forgot what.

A ledger shard is merged line by line against the base: every event either side added is kept
once (ours first, in its order, then theirs'), a line either side removed (a `forget --note`, a
`doctor --repair`) stays removed, and then every event of a note that is forgotten in the merged
ledger goes too — including a successor a branch wrote by superseding a note the other branch
forgot (`fold._forget_successors`) — so the forgotten text is in no shard after the merge. Which
notes are forgotten is decided on the whole ledger of both branches (a forget event sits in the
month it was made, the note's lines in others), read from the commits git names.

Curated files learn what each side forgot from `forgotten.txt` (`curated.write.fingerprints`) at
the merge base and at both heads. Git names the merged commit in `GITHEAD_<sha>` for `git merge`;
where it does not (a rebase, a cherry-pick) only this side's fingerprints are known, so the other
side's forget can only make an edit of it a marked conflict, never let it back silently.
"""

from __future__ import annotations

import json
import os
import tempfile

from ..base.fsutil import atomic_write
from ..curated.write.fingerprints import FILE, parse
from ..curated.write.merge_entries import Forgotten
from ..ledger.storage.store import Ledger
from .gitrepo import git, shards_at


def _merged_commit() -> str | None:
    named = sorted(k[len("GITHEAD_"):] for k in os.environ if k.startswith("GITHEAD_"))
    return named[0] if len(named) == 1 else None


def _blob(commit: str, path: str) -> bytes | None:
    proc = git(".", "cat-file", "blob", f"{commit}:{path}", check=False, text=False)
    return proc.stdout if proc.returncode == 0 else None


def _memory_rel(path: str) -> str:
    """The memory folder holding `path` (a curated file at any depth): the nearest folder with a manifest."""
    folder = os.path.dirname(path)
    while folder and not os.path.isfile(os.path.join(folder, "manifest.md")):
        folder = os.path.dirname(folder)
    return folder or os.path.dirname(path)


def forgotten_sides(path: str):
    """The fingerprints each side's forgets added since the merge base, for the curated file at `path`."""
    rel = f"{_memory_rel(path)}/{FILE}"
    theirs_commit = _merged_commit()

    def at(commit: str | None) -> frozenset:
        data = _blob(commit, rel) if commit else None
        return parse(data.decode("utf-8", "replace")) if data else frozenset()

    ours = at("HEAD")
    if theirs_commit is None:
        return Forgotten(ours=ours)
    bases = git(".", "merge-base", "HEAD", theirs_commit, check=False).stdout.split()
    base = at(bases[0]) if bases else frozenset()
    return Forgotten(ours=ours - base, theirs=at(theirs_commit) - base)


def _lines(path: str) -> list[bytes]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return []
    return [line if line.endswith(b"\n") else line + b"\n" for line in data.splitlines(keepends=True)]


def merge_lines(base: list[bytes], ours: list[bytes], theirs: list[bytes]) -> list[bytes]:
    """Both sides' lines, each once (ours' order, then theirs' new ones); a line a side removed stays out."""
    base_set, ours_set, theirs_set = set(base), set(ours), set(theirs)
    removed = (base_set - ours_set) | (base_set - theirs_set)
    out, seen = [], set()
    for line in [*ours, *theirs]:
        if line in removed or line in seen:
            continue
        seen.add(line)
        out.append(line)
    return out


def _note_of(line: bytes) -> tuple[str, str] | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None  # a torn or bad line is kept as it is: doctor names it
    if not isinstance(event, dict):
        return None
    return str(event.get("note", "")), str(event.get("op", ""))


def forgotten_notes(shards: dict[str, list[bytes]]) -> set[str]:
    """The notes forgotten in a ledger given as shard lines (a successor of a forgotten note included)."""
    with tempfile.TemporaryDirectory(prefix="mc-merge-") as scratch:
        os.mkdir(os.path.join(scratch, "ledger"))
        for name, lines in shards.items():
            with open(os.path.join(scratch, "ledger", name), "wb") as fh:
                fh.write(b"".join(lines))
        notes = Ledger(scratch).load(lenient=True).notes
    return {note_id for note_id, note in notes.items() if note.state == "forgotten"}


def merge_shard(base: str, ours: str, theirs: str, path: str) -> int:
    """The ledger driver: `ours` becomes both sides' events with every forget applied; always clean."""
    merged = merge_lines(_lines(base), _lines(ours), _lines(theirs))
    name = os.path.basename(path)
    memory_rel = os.path.dirname(os.path.dirname(path)) or "."
    shards: dict[str, list[bytes]] = {}
    commit = _merged_commit()
    for head in ("HEAD", commit) if commit else ("HEAD",):
        for other, data in shards_at(head, memory_rel):
            if other != name:
                lines = shards.setdefault(other, [])
                seen = set(lines)
                lines.extend(line for line in _split(data) if line not in seen)
    # without a merged commit (a rebase) the other side's other shards are unknown: replay still
    # forgets a successor of a forgotten note, and `doctor --repair` strips what is left
    shards[name] = merged
    gone = forgotten_notes(shards)
    if gone:
        merged = [line for line in merged if _kept(line, gone)]

    atomic_write(ours, b"".join(merged))
    return 0


def _kept(line: bytes, gone: set[str]) -> bool:
    found = _note_of(line)
    return found is None or found[1] == "forget" or found[0] not in gone


def _split(data: bytes) -> list[bytes]:
    return [line if line.endswith(b"\n") else line + b"\n" for line in data.splitlines(keepends=True)]
