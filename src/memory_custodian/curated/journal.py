"""All-or-nothing writes across several memory files: a journal first, then the files.

A command that changes several files (a forget that edits decisions and the changelog, a compact
that moves entries to the archive) writes its whole plan to `.cache/journal.json` before the
first file, and deletes it after the last. If the process dies in between, the next write
command finds the journal and finishes the plan, saying so, so a reader never keeps a mix of old
and new files.

The journal holds only the new contents and digests of the old ones: it rolls forward, never
back, because a journal that kept the old text would keep a hard-forgotten topic on disk.

Test hook: with `MEMORY_CUSTODIAN_TEST_CRASH_AFTER_WRITES=N` set, the process SIGKILLs itself
right after its N-th file write through this module (tests use it to crash between writes).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from .. import fsutil
from ..errors import Conflict, Corrupt

JOURNAL_NAME = "journal.json"
CRASH_ENV = "MEMORY_CUSTODIAN_TEST_CRASH_AFTER_WRITES"
ABSENT = "absent"

_writes_done = 0


def digest_text(text: str | None) -> str:
    if text is None:
        return ABSENT
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_file(path: Path) -> str:
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return ABSENT
    return hashlib.sha256(raw).hexdigest()


@dataclass
class Change:
    """One file's new state: `new` is its full text, or None to delete it."""

    path: str  # relative to the memory folder, POSIX
    new: str | None
    old_digest: str  # digest of the bytes the plan was built from, or ABSENT

    @property
    def action(self) -> str:
        if self.new is None:
            return "delete"
        return "create" if self.old_digest == ABSENT else "update"


def journal_path(memory_dir: Path) -> Path:
    return Path(memory_dir) / fsutil.CACHE_DIR / JOURNAL_NAME


def _count_write() -> None:
    global _writes_done
    _writes_done += 1
    limit = os.environ.get(CRASH_ENV)
    if limit and limit.isdigit() and _writes_done == int(limit):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _write_one(memory_dir: Path, change: Change) -> None:
    target = Path(memory_dir) / change.path
    if change.new is None:
        try:
            target.unlink()
        except FileNotFoundError:
            pass
        else:
            fsutil.fsync_dir(target.parent)
    else:
        fsutil.atomic_write(target, change.new)
    _count_write()


def apply_changes(memory_dir: Path, changes: list[Change], label: str) -> None:
    """Write `changes` so that either all of them land or the next command finishes them.

    The caller holds the project lock. `label` names the command in the recovery message; it must
    not carry anything private (a hard forget passes "forget (hard)", never the topic).
    """
    changes = [c for c in changes if c.new is None or digest_text(c.new) != c.old_digest]
    if not changes:
        return
    if len(changes) == 1:
        _write_one(memory_dir, changes[0])
        return
    fsutil.ensure_cache_dir(memory_dir)
    record = {
        "v": 1,
        "label": label,
        "changes": [
            {"path": c.path, "old": c.old_digest, "new_digest": digest_text(c.new), "new": c.new}
            for c in changes
        ],
    }
    jpath = journal_path(memory_dir)
    fsutil.atomic_write(jpath, json.dumps(record, sort_keys=True, ensure_ascii=False), mode=0o600)
    for change in changes:
        _write_one(memory_dir, change)
    jpath.unlink()
    fsutil.fsync_dir(jpath.parent)


def recover(memory_dir: Path) -> str | None:
    """Finish a plan an interrupted command left behind; return what was done, or None.

    The caller holds the project lock. A file changed by hand since the crash (neither its old
    nor its new state) is not overwritten: the command is refused until a person decides.
    """
    jpath = journal_path(memory_dir)
    if not jpath.exists():
        return None
    try:
        record = json.loads(jpath.read_text(encoding="utf-8"))
        label = str(record["label"])
        entries = [
            (str(e["path"]), e["new"], str(e["old"]), str(e["new_digest"])) for e in record["changes"]
        ]
    except (ValueError, KeyError, TypeError) as exc:
        raise Corrupt(
            "unreadable write journal left by an interrupted command — check the memory files by hand "
            "(git diff), then delete this file",
            path=str(jpath),
        ) from exc
    pending: list[Change] = []
    for rel, new, old, new_digest in entries:
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise Corrupt(f"write journal names an unsafe path {rel!r} — delete this file", path=str(jpath))
        current = digest_file(Path(memory_dir) / rel)
        if current == new_digest:
            continue
        if current != old:
            raise Conflict(
                f"an interrupted `{label}` left a journal, but {rel} changed since — check it (git diff), "
                "then delete the journal to continue",
                path=str(jpath),
            )
        pending.append(Change(rel, new, old))
    for change in pending:
        _write_one(memory_dir, change)
    jpath.unlink()
    fsutil.fsync_dir(jpath.parent)
    done = len(entries) - len(pending)
    return (
        f"finished an interrupted `{label}`: {done} of {len(entries)} files had been written before it "
        f"stopped; wrote the other {len(pending)}"
    )
