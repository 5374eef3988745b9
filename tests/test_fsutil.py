"""The write primitives every tier relies on: atomic replace, the project lock, loud UTF-8 reads."""

from __future__ import annotations

import os
import stat
import threading
import time

import pytest

from memory_custodian.base.errors import Corrupt, InvalidInput
from memory_custodian.base.fsutil import atomic_write, cache_dir, project_lock, read_utf8


def test_lock_serialises_threads_of_one_process(tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    counter = {"value": 0}

    def worker():
        for _ in range(40):
            with project_lock(memory), project_lock(memory):  # re-entrant inside one thread
                seen = counter["value"]
                time.sleep(0.0002)
                counter["value"] = seen + 1

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter["value"] == 240


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    target = tmp_path / "a.md"
    target.write_text("old\n")
    atomic_write(target, "new\n")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"]


def test_cache_is_owner_only_and_ignored(tmp_path):
    cache = cache_dir(tmp_path)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert (tmp_path / ".cache" / ".gitignore").read_text() == "*\n"


def test_symlinked_cache_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / ".cache").symlink_to(outside)
    with pytest.raises(Corrupt, match="symlink"):
        cache_dir(memory)
    assert list(outside.iterdir()) == []


def test_read_utf8_names_the_line_of_a_bad_byte(tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"ok\nstill ok\n\xff broken\n")
    with pytest.raises(InvalidInput) as info:
        read_utf8(bad)
    assert info.value.line == 3
    assert "UTF-8" in str(info.value)


def test_atomic_write_for_caches_skips_only_the_fsyncs(tmp_path, monkeypatch):
    """`durable=False` (session caches on every prompt) still replaces atomically, without fsync."""
    import os

    from memory_custodian.base import fsutil

    target = tmp_path / "state.json"
    target.write_text("old")

    def no_fsync(fd):
        raise AssertionError("fsync called")

    monkeypatch.setattr(os, "fsync", no_fsync)
    fsutil.atomic_write(target, '{"v": 1}', mode=0o600, durable=False)
    assert target.read_text() == '{"v": 1}' and (target.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no temporary file left
    with pytest.raises(AssertionError, match="fsync called"):
        fsutil.atomic_write(target, "durable by default")


def test_a_file_where_the_cache_folder_goes_is_a_loud_error(tmp_path):
    from memory_custodian.base import fsutil

    (tmp_path / ".cache").write_text("not a folder")
    with pytest.raises(Exception) as info:
        fsutil.cache_dir(tmp_path)
    assert ".cache" in str(info.value) and (tmp_path / ".cache").read_text() == "not a folder"


def test_seek_read_answers_as_pread_does(tmp_path):
    """Windows has no os.pread: the ledger's reads at an offset fall back to a seek and a read."""
    import os

    from memory_custodian.base import fsutil

    path = tmp_path / "shard.jsonl"
    path.write_bytes(b"".join(b'{"n": %d}\n' % i for i in range(200)))
    fd = os.open(path, os.O_RDONLY)
    try:
        for offset, length in [(0, 1), (5, 40), (1000, 3000), (len(path.read_bytes()) - 1, 1), (10**6, 5)]:
            assert fsutil.seek_read(fd, length, offset) == os.pread(fd, length, offset)
    finally:
        os.close(fd)


def test_the_ledger_works_without_pread(tmp_path, monkeypatch):
    from memory_custodian import Memory
    from memory_custodian.base import fsutil
    from memory_custodian.ledger.index import rebuild, rebuild_worker

    for module in (fsutil, rebuild, rebuild_worker):
        monkeypatch.setattr(module, "read_at", fsutil.seek_read)
    memory = Memory.open(tmp_path)
    memory.init()
    ids = [memory.remember(f"retry budget note {i}", kind="gotcha").id for i in range(30)]
    with open(next((tmp_path / "docs/memory/ledger").glob("*.jsonl")), "ab") as fh:
        fh.write(b'{"torn')  # a torn tail: the writer's repair reads back from the end
    memory.remember("after the torn tail", kind="finding")
    memory.reindex()
    assert {hit.note.id for hit in memory.recall("retry budget", limit=50).hits} == set(ids)
