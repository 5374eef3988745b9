"""The index file under other processes: never made by opening its path, never deleted under a
process that did not find it damaged, reset in a way a long-lived reader notices.

CI once saw eight concurrent writers read "database disk image is malformed": an opener took a
schema another process was still creating for a stale one and deleted the files under it. These
pin each rule that closed that, with real processes, real locks and real SQLite files.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from conftest import REPO

from memory_custodian import Memory
from memory_custodian.ledger.index import index_file
from memory_custodian.ledger.index.index import Index
from memory_custodian.ledger.storage.store import Ledger


def _project(tmp_path, notes=3) -> Memory:
    (tmp_path / "docs" / "memory").mkdir(parents=True)
    (tmp_path / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
    mem = Memory.open(tmp_path)
    for i in range(notes):
        mem.remember(f"note {i} about the sqlite lock")
    return mem


def _index_path(mem: Memory):
    return mem.memory_dir / ".cache" / "index.sqlite"


def test_an_index_is_made_only_under_the_project_lock(tmp_path):
    """While another process holds the lock, an opener waits: it neither creates the file nor reads
    one half-made."""
    mem = _project(tmp_path)
    assert not _index_path(mem).exists()
    release = tmp_path / "release"
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import os, sys, time\n"
            f"sys.path.insert(0, {str(REPO / 'src')!r})\n"
            "from memory_custodian.base import fsutil\n"
            f"with fsutil.project_lock({str(mem.memory_dir)!r}):\n"
            "    print('held', flush=True)\n"
            f"    while not os.path.exists({str(release)!r}):\n"
            "        time.sleep(0.01)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        result: dict = {}
        opener = threading.Thread(target=lambda: result.update(Index(Ledger(mem.memory_dir)).catch_up()))
        opener.start()
        time.sleep(0.5)
        assert opener.is_alive() and not _index_path(mem).exists()
        release.touch()
        opener.join(30)
        assert result["mode"] != "current" and _index_path(mem).exists()
    finally:
        release.touch()
        holder.wait(30)
    assert [h.note.body for h in mem.recall("sqlite lock", limit=5).hits]


def test_damage_found_on_a_file_another_process_already_renewed_leaves_the_new_file_alone(tmp_path):
    mem = _project(tmp_path)
    late = Index(Ledger(mem.memory_dir))
    late.catch_up()  # connected to the first file
    first = index_file.inode(str(_index_path(mem)))
    early = Index(Ledger(mem.memory_dir))
    early.catch_up()
    early.discard("file")  # this process found the damage first: the file is replaced
    early.catch_up()
    renewed = index_file.inode(str(_index_path(mem)))
    assert renewed != first
    late.discard("file")  # the same damage, found later through the old file: nothing to do
    assert index_file.inode(str(_index_path(mem))) == renewed
    assert early.stats()["notes"] == 3  # the renewed file's connection was not disturbed
    assert late.catch_up()["mode"] == "current" and late.stats()["notes"] == 3


def test_a_stale_schema_is_reset_in_place_and_a_long_lived_reader_catches_up(tmp_path):
    mem = _project(tmp_path)
    reader = Index(Ledger(mem.memory_dir))
    assert reader.catch_up()["mode"] != "current"
    assert reader.catch_up()["mode"] == "current"  # the fast path: shards unchanged
    before = index_file.inode(str(_index_path(mem)))
    raw = sqlite3.connect(_index_path(mem))
    raw.execute("UPDATE meta SET value = 'an older version' WHERE key = 'schema'")
    raw.commit()
    raw.close()
    other = Index(Ledger(mem.memory_dir))
    assert other.db is not None  # a process of this version finds it stale and resets it, in place
    assert index_file.inode(str(_index_path(mem))) == before
    assert other.stats()["notes"] == 0
    # the reader's shards did not change, but the file did: it must read them again, not answer empty
    assert reader.catch_up()["mode"] != "current"
    assert reader.stats()["notes"] == 3


def test_a_file_removed_under_a_long_lived_connection_is_reopened(tmp_path):
    """A hard forget removes the index files; a connection on the removed file must not go on
    reading (and keeping) the forgotten text."""
    mem = _project(tmp_path)
    reader = Index(Ledger(mem.memory_dir))
    reader.catch_up()
    for p in _index_path(mem).parent.glob("index.sqlite*"):
        p.unlink()
    assert reader.catch_up()["mode"] != "current"
    assert _index_path(mem).exists() and reader.stats()["notes"] == 3


def _open_and_read(args) -> list[str]:
    root, start = args
    while time.time() < start:
        pass
    try:
        mem = Memory.open(root)
        for _ in range(3):
            mem.remember("a note written while the index is being made")
            assert mem.recall("sqlite lock", limit=5).hits
            mem.read("implementation", paths=("src/x.py",))
    except Exception as exc:
        return [f"{type(exc).__name__}: {exc}"]
    return []


@pytest.mark.parametrize("start", ["missing", "stale", "garbage"])
def test_processes_opening_one_index_at_once_all_succeed(tmp_path, start):
    mem = _project(tmp_path)
    path = _index_path(mem)
    if start != "missing":
        mem.recall("sqlite")  # the index is there, current
        if start == "stale":
            raw = sqlite3.connect(path)
            raw.execute("UPDATE meta SET value = 'an older version' WHERE key = 'schema'")
            raw.commit()
            raw.close()
        else:
            for p in path.parent.glob("index.sqlite*"):
                p.unlink()
            path.write_bytes(b"not a database " * 300)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(6) as pool:
        start_at = time.time() + 1.0  # past every worker's start-up, so they open together
        errors = [e for r in pool.map(_open_and_read, [(str(tmp_path), start_at)] * 6) for e in r]
    assert errors == []
    fresh = Index(Ledger(mem.memory_dir))
    assert fresh.catch_up()["mode"] == "current" and fresh.stats()["notes"] == 3 + 6 * 3


def test_a_note_row_without_its_text_is_damage_the_index_repairs(tmp_path):
    """What CI's torn index looked like from inside: a note's row with no text row. Its next change
    must rebuild the cache, not end in a TypeError."""
    mem = _project(tmp_path)
    note = mem.recall("note 1", limit=1).hits[0].note
    raw = sqlite3.connect(_index_path(mem))
    raw.execute("DELETE FROM note_text WHERE rowid = (SELECT rowid FROM notes WHERE id = ?)", (note.id,))
    raw.commit()
    raw.close()
    mem.flag_stale(note.id, reason="checking the repair")
    states = {h.note.id: h.note.state for h in mem.recall("sqlite lock", limit=10, states=("active", "stale")).hits}
    assert states[note.id] == "stale" and len(states) == 3
    # the same tear met while catching up with an event written by another process (no look-up first)
    raw = sqlite3.connect(_index_path(mem))
    raw.execute("DELETE FROM note_text WHERE rowid = (SELECT rowid FROM notes WHERE id = ?)", (note.id,))
    raw.commit()
    raw.close()
    Ledger(mem.memory_dir).append_txn([{"op": "reinstate", "note": note.id, "actor": "human", "reason": "fine"}])
    states = {h.note.id: h.note.state for h in mem.recall("sqlite lock", limit=10).hits}
    assert states.get(note.id) == "active" and len(states) == 3


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_streamed_lines_are_the_lines_a_whole_read_splits(tmp_path, chunk):
    from memory_custodian.ledger.storage.store import split_shard, stream_blocks

    whole = b'{"a":1}\n\n{"b":2}\n' + b"x" * 300 + b"\n"
    for tail in (b"", b'{"c":3}', b'{"torn', b"\n\n"):
        path = tmp_path / "s.jsonl"
        path.write_bytes(whole + tail)
        lines = [line for block in stream_blocks(str(path), chunk) for line in block.split(b"\n")]
        assert lines == split_shard(whole + tail)[0], (chunk, tail)


def test_a_file_renewed_while_a_catch_up_waits_for_the_write_lock_is_planned_again(tmp_path):
    """Between a catch-up's first look and its write lock another process may renew the file; the
    catch-up must plan again on the file there now, not go on (and COMMIT) on a closed connection."""
    mem = _project(tmp_path)
    index = Index(Ledger(mem.memory_dir))
    index.catch_up()
    note = mem.recall("note 1", limit=1).hits[0].note
    Ledger(mem.memory_dir).append_txn([{"op": "revoke", "note": note.id, "actor": "human", "reason": "checking"}])
    real_plan, renewed = index.plan, []

    def plan(reopen=True):
        found = real_plan(reopen)
        if not renewed:  # what another process does in that moment
            renewed.append(index_file.inode(str(_index_path(mem))))
            index_file.renew(str(_index_path(mem)), mem.memory_dir_str, renewed[0], "file")
        return found

    index.plan = plan  # type: ignore[method-assign]
    assert index.catch_up()["mode"] != "current"
    assert index_file.inode(str(_index_path(mem))) != renewed[0]
    assert index.stats()["notes"] == 3
    assert index.db.execute("SELECT count(*) FROM events WHERE note = ?", (note.id,)).fetchone()[0] == 2
