"""Rebuilding the index from the shards in one pass, in bounded memory.

Memory grows with the number of events, not with their bytes: the first pass parses every
shard, keeps one small key per unique event (note, time, id, txn, where its line is) and stores
the raw lines; the second folds each note from its lines read back from disk (in worker processes
on big ledgers, `rebuild_worker.py`) and inserts the rows in batches, in note order. Two copies of
one event id keep the smaller canonical line; a txn with events missing is left out unless a
`forget` waived it. See `Index.rebuild` for the transaction around it.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager

from ...base.fsutil import BINARY, read_at
from ..storage.store import parse_lines
from .index_rows import (
    PAGE_CACHE_KIB,
    UPSERT_EVENT,
    canonical,
    clear_index,
    insert_rows,
    note_skipped,
    rows_at,
)
from .rebuild_worker import Workers, fold_chunk
from .shard_span import read_span

CHUNK_NOTES = 2000  # notes folded per task, and inserted per batch
# Folding the notes and computing their rows (subtokens, note JSON) is most of a rebuild's Python
# time and needs nothing but the shard lines: on big ledgers worker processes do it while this
# process inserts (74,900 notes: see the README). Below this many events a rebuild takes a couple
# of seconds at most, less than starting the workers would save.
PARALLEL_MIN_EVENTS = 20000
MAX_WORKERS = 4
PARSE_LINES, PARSE_BYTES = 50_000, 32 * 1_048_576  # shard lines parsed at once: memory holds these, not the shard


def parallel_workers(events: int) -> int:
    """How many worker processes fold a rebuild of `events` events: 0 (fold here) on small
    ledgers or a machine with one CPU."""
    if events < PARALLEL_MIN_EVENTS:
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return min(cpus, MAX_WORKERS) if cpus > 1 else 0


def rebuild_locked(index, progress) -> dict:
    """Fill `index` from the shards; the caller holds the write transaction."""
    files: list[int] = []
    db = index.db
    # Bulk load: a page cache of 8 MB (the pages written are not read again: a larger one only
    # raises the rebuild's peak memory), and the secondary event indexes built once at the end.
    db.execute("PRAGMA cache_size=-8000")
    for name in ("events_note", "events_txn", "events_at"):
        db.execute(f"DROP INDEX IF EXISTS {name}")
    try:
        result = _rebuild_into(index, progress, files)
        db.execute("CREATE INDEX IF NOT EXISTS events_note ON events(note, at, id)")
        db.execute("CREATE INDEX IF NOT EXISTS events_txn ON events(txn)")
        db.execute("CREATE INDEX IF NOT EXISTS events_at ON events(at, id)")  # the activity timeline, newest first
        return result
    finally:
        for fd in files:
            os.close(fd)
        db.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")


def _rebuild_into(index, progress, files: list[int]) -> dict:
    db = index.db
    clear_index(db)
    shards = index.ledger.shards()
    keys, broken = _read_shards(index, shards, files, progress)
    total = len(keys)
    if progress:
        progress(0.5)
    chunks = _note_chunks(keys, broken)
    del keys
    n_notes = _insert_notes(db, chunks, shards, files, parallel_workers(total), progress)
    if progress:
        progress(0.8)
    if progress:
        progress(1.0)
    return {"mode": "rebuild", "events": total, "notes": n_notes, "shards": len(shards)}


def _read_shards(index, shards, files: list[int], progress) -> tuple[list[tuple], set[str]]:
    """The first pass: every shard's events stored, one small key per unique event kept, sorted:
    (note, at, id, txn, shard, offset, length). The lines stay on disk and are read back per note,
    so memory grows with the number of events, not bytes. Returns (keys, the broken txns)."""
    db = index.db
    total_bytes = sum(os.stat(p).st_size for p in shards) or 1
    done_bytes = 0
    keys: list[tuple] = []
    where: dict[str, int] = {}
    txn_count: dict[str, int] = {}
    txn_want: dict[str, int] = {}
    waived: set[str] = set()
    for shard_no, path in enumerate(shards):
        fd = os.open(path, os.O_RDONLY | BINARY)
        files.append(fd)
        st = os.fstat(fd)
        name = os.path.basename(path)
        consumed, digest, lines = 0, None, 0
        while True:  # a step at a time: memory holds one step of lines, never the shard
            span = read_span(path, consumed, digest, PARSE_LINES, PARSE_BYTES)
            if span is None:
                raise sqlite3.OperationalError(f"{index.ledger.rel(path)} was rewritten while the index read it; retry")
            evs, _, probs, _ = parse_lines(index.ledger.rel(path), span.data, start_line=lines + 1, raw=True)
            note_skipped(db, name, probs, reset=not consumed)
            for ev in evs:
                key = (ev["note"], ev["at"], ev["id"], ev["txn"], shard_no, consumed + ev["_off"],
                       len(ev["_line"].encode("utf-8")))
                seen = where.get(ev["id"])
                if seen is not None:
                    old = keys[seen]
                    if canonical(ev["_line"]) < canonical(read_at(files[old[4]], old[6], old[5]).decode("utf-8")):
                        txn_count[old[3]] -= 1
                        keys[seen] = key
                        txn_count[ev["txn"]] = txn_count.get(ev["txn"], 0) + 1
                        txn_want[ev["txn"]] = max(txn_want.get(ev["txn"], 0), ev["txn_n"])
                    continue
                where[ev["id"]] = len(keys)
                keys.append(key)
                txn_count[ev["txn"]] = txn_count.get(ev["txn"], 0) + 1
                txn_want[ev["txn"]] = max(txn_want.get(ev["txn"], 0), ev["txn_n"])
                if ev["op"] == "forget":
                    waived.update(ev.get("stripped", ()))
            db.executemany(UPSERT_EVENT, [(ev["id"], ev["note"], ev["at"], ev["txn"], ev["txn_n"], ev["_line"])
                                          for ev in evs])
            consumed, digest, lines = span.consumed, span.digest, lines + span.lines
            del evs
            if span.whole:
                break
        db.execute("INSERT INTO shards VALUES (?, ?, ?, ?, ?, ?)", (name, span.size, st.st_mtime_ns, consumed, digest, lines))
        done_bytes += st.st_size
        if progress:
            progress(done_bytes / total_bytes * 0.4)
    del where
    db.executemany("INSERT INTO waived VALUES (?)", ((t,) for t in sorted(waived)))
    broken = {t for t, n in txn_count.items() if n < txn_want[t] and t not in waived}
    keys.sort()
    return keys, broken


def _note_chunks(keys: list[tuple], broken: set[str]) -> list[list[list[tuple]]]:
    """Each note's events (shard, offset, length), without the broken txns, in chunks of CHUNK_NOTES
    notes, oldest note first (by its first event, then id): the rows are numbered in that order, so
    the highest rowids are the newest notes, which a recall past `limits.RANKED_NOTES` ranks."""
    groups: list[tuple[str, str, list[tuple]]] = []
    i, total = 0, len(keys)
    while i < total:
        note_id = keys[i][0]
        j = i
        while j < total and keys[j][0] == note_id:
            j += 1
        groups.append((keys[i][1], note_id, [(k[4], k[5], k[6]) for k in keys[i:j] if k[3] not in broken]))
        i = j
    groups.sort(key=lambda g: (g[0], g[1]))
    events = [g[2] for g in groups]
    return [events[c:c + CHUNK_NOTES] for c in range(0, len(events), CHUNK_NOTES)]


def _insert_notes(db, chunks, shards, files: list[int], workers: int, progress) -> int:
    """Fold the notes chunk by chunk and insert their rows; returns how many notes there are."""
    n_notes = 0
    with _folding(chunks, shards, files, workers) as folded:
        for done, parts_list in enumerate(folded, 1):
            # one chunk at a time: bounded memory on large ledgers
            insert_rows(db, [rows_at(n_notes + i, parts) for i, parts in enumerate(parts_list, 1)])
            n_notes += len(parts_list)
            if progress:
                progress(0.5 + 0.3 * done / len(chunks))
    return n_notes


@contextmanager
def _folding(chunks, shards, files: list[int], workers: int):
    """Each chunk's `note_row_parts`, in order: folded here, or by `workers` worker processes
    (`rebuild_worker.py`). Plain subprocesses over pipes rather than `multiprocessing`: its
    spawned children re-run the caller's main script, and a fork copies the MCP server's threads'
    locks. A worker that fails makes this raise, naming why; leaving the block ends the workers."""
    if not workers:
        yield (fold_chunk(chunk, files) for chunk in chunks)
        return

    # the workers open the shards by name: each must be the very file this process read
    expect = [(path, os.fstat(fd).st_dev, os.fstat(fd).st_ino) for path, fd in zip(shards, files)]
    with Workers(workers, expect) as pool:
        yield pool.map_in_order(chunks)
