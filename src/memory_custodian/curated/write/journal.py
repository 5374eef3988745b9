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
import signal

from ...base import fsutil
from ...base.errors import Conflict, Corrupt, CustodianError
from ...base.records import Record

JOURNAL_NAME = "journal.json"
CRASH_ENV = "MEMORY_CUSTODIAN_TEST_CRASH_AFTER_WRITES"
ABSENT = "absent"

_writes_done = 0


def digest_text(text: str | None) -> str:
    if text is None:
        return ABSENT
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_file(path) -> str:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return ABSENT
    return hashlib.sha256(raw).hexdigest()


class Change(Record):
    """One file's new state: `path` relative to the memory folder (POSIX), `new` its full text or None
    to delete it, `old_digest` the digest of the bytes the plan was built from (or ABSENT)."""

    path: str
    new: str | None
    old_digest: str

    @property
    def action(self) -> str:
        if self.new is None:
            return "delete"
        return "create" if self.old_digest == ABSENT else "update"


def journal_path(memory_dir) -> str:
    return os.path.join(os.fspath(memory_dir), fsutil.CACHE_DIR, JOURNAL_NAME)


def pending(memory_dir) -> bool:
    """One stat: whether an interrupted plan's journal awaits `recover`."""
    return os.path.exists(journal_path(memory_dir))


def _count_write() -> None:
    global _writes_done
    _writes_done += 1
    limit = os.environ.get(CRASH_ENV)
    if limit and limit.isdigit() and _writes_done == int(limit):
        os.kill(os.getpid(), signal.SIGKILL)


def _remove(path: str) -> None:
    """Delete `path` durably (its folder fsynced); a file already gone is fine."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    fsutil.fsync_dir(os.path.dirname(path))


def _write_one(memory_dir, change: Change) -> None:
    target = os.path.join(os.fspath(memory_dir), change.path)
    if change.new is None:
        _remove(target)
    else:
        fsutil.atomic_write(target, change.new)
    _count_write()


# what finishes a plan a full disk stopped: a migrate that has nothing to migrate changes nothing else
FINISH_BY_COMMAND = "run any curated write to finish it ({verb:migrate} with {field:apply} changes nothing else)"
FINISH_BY_RETRY = "run the write again: it finishes this plan first"


def apply_changes(memory_dir, changes: list[Change], label: str) -> None:
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
    fsutil.cache_dir(memory_dir)
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
    _land(memory_dir, changes, jpath, keep_journal=False, finish=FINISH_BY_COMMAND)


def _land(memory_dir, changes: list[Change], jpath: str, *, keep_journal: bool, finish: str) -> None:
    """Every temp file first, then the renames, then the journal goes: a full disk mostly stops the
    first phase, where nothing has changed yet (the journal goes too unless `keep_journal`, the plan of
    an earlier command); a rename that fails part-way says which files landed and what finishes them."""
    temps: list[str | None] = []
    try:
        for change in changes:
            target = os.path.join(os.fspath(memory_dir), change.path)
            temps.append(None if change.new is None else fsutil.write_temp(target, change.new))
    except CustodianError:
        _discard(temps)
        if not keep_journal:
            _remove(jpath)
        raise
    for i, (change, tmp) in enumerate(zip(changes, temps)):
        try:
            _commit(memory_dir, change, tmp)
        except CustodianError as exc:
            _discard(temps[i + 1:])
            if i == 0 and not keep_journal:
                _remove(jpath)
                raise
            raise _stopped(exc, changes[:i], changes[i:], finish) from exc.__cause__
        _count_write()
    _remove(jpath)


def _commit(memory_dir, change: Change, tmp: str | None) -> None:
    target = os.path.join(os.fspath(memory_dir), change.path)
    if tmp is not None:
        fsutil.commit_temp(tmp, target)
        return
    try:
        _remove(target)
    except OSError as exc:
        raise fsutil.disk_error(target, exc) from exc


def _discard(temps) -> None:
    for tmp in temps:
        if tmp is not None:
            fsutil.discard_temp(tmp)


def _stopped(exc: CustodianError, done: list[Change], left: list[Change], finish: str) -> CustodianError:
    wrote = ", ".join(c.path for c in done)
    pending = ", ".join(c.path for c in left)
    return fsutil.stopped_part_way(
        exc, f"{wrote} {'was' if len(done) == 1 else 'were'} written" if done else "nothing was written yet",
        f"{pending} {'is' if len(left) == 1 else 'are'} not yet (the plan is kept in .cache/{JOURNAL_NAME})", finish)


def _corrupt(jpath: str, why: str) -> Corrupt:
    # The journal is the only copy of a plan that may be half-applied: never drop it silently, and
    # never write a file from a journal we cannot fully trust. A person decides (git diff shows
    # what landed), then deletes it.
    return Corrupt(
        f"unreadable write journal left by an interrupted command ({why}) — check the memory files by "
        "hand (git diff), then delete this file",
        path=str(jpath),
    )


def _read_journal(memory_dir, jpath: str) -> tuple[str, list[tuple[str, str | None, str, str]]]:
    """(label, [(path, new, old digest, new digest)]), every field checked before anything is written."""
    try:
        with open(jpath, "rb") as fh:
            record = json.loads(fh.read().decode("utf-8"))
    except OSError as exc:
        raise _corrupt(jpath, f"cannot read it: {exc.strerror or exc}") from exc
    except ValueError as exc:  # also UnicodeDecodeError
        raise _corrupt(jpath, "not JSON") from exc
    except RecursionError as exc:
        raise _corrupt(jpath, "JSON nested too deeply") from exc
    if not isinstance(record, dict) or record.get("v") != 1:
        raise _corrupt(jpath, "not a version 1 journal object")
    label, changes = record.get("label"), record.get("changes")
    if not isinstance(label, str) or not isinstance(changes, list):
        raise _corrupt(jpath, "`label` or `changes` missing")
    entries = []
    for i, e in enumerate(changes):
        if not isinstance(e, dict):
            raise _corrupt(jpath, f"changes[{i}] is not an object")
        rel, new, old, new_digest = e.get("path"), e.get("new"), e.get("old"), e.get("new_digest")
        if not (isinstance(rel, str) and rel and isinstance(old, str) and isinstance(new_digest, str)):
            raise _corrupt(jpath, f"changes[{i}] lacks a text `path`, `old` or `new_digest`")
        if not (new is None or isinstance(new, str)):
            raise _corrupt(jpath, f"changes[{i}].new is neither text nor null")
        try:
            matches = digest_text(new) == new_digest
        except UnicodeEncodeError:  # a lone surrogate: JSON can hold it, a file cannot
            matches = False
        if not matches:
            raise _corrupt(jpath, f"changes[{i}].new does not match its digest")
        if not _safe_target(memory_dir, rel):
            raise _corrupt(jpath, f"changes[{i}] names an unsafe path {rel!r}")
        entries.append((rel, new, old, new_digest))
    return label, entries


def _safe_target(memory_dir, rel: str) -> bool:
    """A curated file inside the memory folder: never the ledger or the cache, never through a link."""
    parts = [part for part in rel.split("/") if part not in ("", ".")]  # as PurePosixPath(rel).parts
    if (not parts or rel.startswith("/") or ".." in parts or "\\" in rel or "\x00" in rel
            or parts[0] in (fsutil.CACHE_DIR, "ledger") or not rel.isprintable()):
        return False
    try:
        rel.encode("utf-8")
        path = os.path.join(os.fspath(memory_dir), *parts)
        return (not os.path.islink(path) and not os.path.isdir(path)
                and fsutil.inside(os.path.realpath(path), os.path.realpath(memory_dir)))
    except (OSError, ValueError):
        return False


def recover(memory_dir) -> str | None:
    """Finish a plan an interrupted command left behind; return what was done, or None.

    The caller holds the project lock. A file changed by hand since the crash (neither its old
    nor its new state) is not overwritten: the command is refused until a person decides.
    """
    jpath = journal_path(memory_dir)
    if not os.path.exists(jpath):
        return None
    label, entries = _read_journal(memory_dir, jpath)
    pending: list[Change] = []
    for rel, new, old, new_digest in entries:
        current = digest_file(os.path.join(os.fspath(memory_dir), rel))
        if current == new_digest:
            continue
        if current != old:
            raise Conflict(
                f"an interrupted `{label}` left a journal, but {rel} changed since — check it (git diff), "
                "then delete the journal to continue",
                path=str(jpath),
            )
        pending.append(Change(rel, new, old))
    if pending:
        _land(memory_dir, pending, jpath, keep_journal=True, finish=FINISH_BY_RETRY)
    else:
        _remove(jpath)
    done = len(entries) - len(pending)
    return (
        f"finished an interrupted `{label}`: {done} of {len(entries)} files had been written before it "
        f"stopped; wrote the other {len(pending)}"
    )
