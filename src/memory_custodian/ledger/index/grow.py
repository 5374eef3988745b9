"""Reading the shards' new lines into the index: appended events, and the notes they touch folded again.

`grow` reads what each shard gained since the index last read it, at most one step of it when it
is given a budget (`shard_span.py`); the detached process (`detached_build.py`) takes step after
step until none is left. Each note touched is folded again from all its events
the index keeps, with the same pure function replay uses, so an index grown step by step equals
a rebuild. The SQL runs per batch, not per event: a step of 10,000 lines is a few dozen statements.
"""

from __future__ import annotations

import json
import os

from ..storage.fold import fold_note_events
from ..storage.model import Note
from ..storage.store import parse_lines
from .index_rows import (
    FTS_COLUMN_LIST,
    STORED_FTS,
    UPSERT_EVENT,
    fts_row,
    insert_rows,
    no_text_row,
    note_row_parts,
    note_skipped,
    rows_at,
)

BATCH = 2000  # ids per `json_each` list in one statement


def fits(ledger, budget: tuple[int, int]) -> bool:
    """Whether the whole ledger is within one step's `budget` (lines, bytes)."""
    max_lines, max_bytes = budget
    paths = ledger.shards()
    if sum(os.path.getsize(p) for p in paths) > max_bytes:
        return False
    lines = 0
    for path in paths:
        with open(path, "rb") as fh:
            lines += fh.read().count(b"\n")
    return lines <= max_lines


def grow(index, work, budget: tuple[int, int] | None = None) -> tuple[dict, tuple[int, int]] | None:
    """Read the shards' new lines (`Index.plan`'s work; at most `budget`: lines, bytes) and fold the
    notes they touch. Returns (the result, (bytes, shards) left unread), or None when a shard is not a
    pure append (the caller rebuilds)."""
    from .shard_span import read_span  # only when shards grew: hashlib's OpenSSL is a hook's start-up cost

    db = index.db
    max_lines, max_bytes = budget if budget is not None else (None, None)
    new_events: list[dict] = []
    shard_rows = []
    unread = shards_left = 0
    for item in work:
        name, path, st, consumed, lines = item[:5]
        if max_lines is not None and max_bytes is not None and (max_lines <= 0 or max_bytes <= 0):
            unread += st.st_size - consumed
            shards_left += 1
            continue
        span = read_span(path, consumed, item[5] if consumed else None, max_lines, max_bytes)
        if span is None:
            return None
        evs, _, probs, _ = parse_lines(index.ledger.rel(path), span.data, start_line=lines + 1, raw=True)
        note_skipped(db, name, probs, reset=not consumed)
        new_events.extend(evs)
        # a shard read only part way is stored as if it ended there, so the next plan reads on
        size = span.size if span.whole else span.consumed
        shard_rows.append((name, size, st.st_mtime_ns, span.consumed, span.digest, lines + span.lines))
        if max_lines is not None and max_bytes is not None:
            max_lines -= span.lines
            max_bytes -= span.consumed - consumed
        if not span.whole:
            unread += span.size - span.consumed
            shards_left += 1
    refold(db, insert_events(db, new_events))
    db.executemany("INSERT OR REPLACE INTO shards VALUES (?, ?, ?, ?, ?, ?)", shard_rows)
    return {"mode": "incremental", "events": len(new_events)}, (unread, shards_left)


def _batches(values: list[str]):
    for start in range(0, len(values), BATCH):
        yield json.dumps(values[start:start + BATCH])


def insert_events(db, events: list[dict]) -> set[str]:
    """Store `events` (of two copies of one id the smaller canonical line stays); the notes to fold
    again: theirs, and every note of a txn they belong to or waive."""
    db.executemany(UPSERT_EVENT, [(ev["id"], ev["note"], ev["at"], ev["txn"], ev["txn_n"], ev["_line"])
                                  for ev in events])
    affected = {ev["note"] for ev in events}
    txns = {ev["txn"] for ev in events}
    waived = sorted({t for ev in events if ev["op"] == "forget" for t in ev.get("stripped", ())})
    db.executemany("INSERT OR IGNORE INTO waived VALUES (?)", [(t,) for t in waived])
    txns.update(waived)
    for batch in _batches(sorted(txns)):
        affected.update(r[0] for r in db.execute(
            "SELECT DISTINCT note FROM events WHERE txn IN (SELECT value FROM json_each(?))", (batch,)))
    return affected


def broken_txns(db, notes: list[str] | None) -> set[str]:
    """The txns with events missing (not waived by a `forget`): of `notes`, or of every note (None)."""
    having = "GROUP BY txn HAVING count(*) < max(txn_n) AND txn NOT IN (SELECT txn FROM waived)"
    if notes is None:
        return {r[0] for r in db.execute(f"SELECT txn FROM events {having}")}
    out: set[str] = set()
    for batch in _batches(notes):
        out.update(r[0] for r in db.execute(
            "SELECT txn FROM events WHERE txn IN (SELECT DISTINCT txn FROM events WHERE note IN "
            f"(SELECT value FROM json_each(?))) {having}", (batch,)))
    return out


def refold(db, notes) -> None:
    """Fold `notes` again from the events kept, and store them (a note with no event left is removed)."""
    notes = sorted(notes)
    broken = broken_txns(db, notes)
    for batch in _batches(notes):
        lines: dict[str, list[dict]] = {}
        for note_id, line in db.execute("SELECT note, line FROM events WHERE note IN (SELECT value FROM json_each(?)) "
                                        "ORDER BY note, at, id", (batch,)):
            ev = json.loads(line)
            if ev["txn"] not in broken:
                lines.setdefault(note_id, []).append(ev)
        stored = dict(db.execute("SELECT id, rowid FROM notes WHERE id IN (SELECT value FROM json_each(?))", (batch,)))
        _remove(db, stored)
        again, fresh = [], []
        for note_id in json.loads(batch):
            evs = lines.get(note_id, [])
            note, _ = fold_note_events(evs)
            if note is None:
                continue  # a note with no event left stays removed
            if note_id in stored:
                again.append((stored[note_id], note))
            else:
                fresh.append((evs[0]["at"], note_id, note))
        # a note new to the index is numbered on from its last row, oldest first (by its first event,
        # then id, as a rebuild numbers them), so the highest rowids are the newest notes read
        fresh.sort(key=lambda f: (f[0], f[1]))
        _store(db, again)  # first: one of them may hold the last rowid
        last = db.execute("SELECT max(rowid) FROM notes").fetchone()[0] or 0
        _store(db, [(last + i, note) for i, (*_, note) in enumerate(fresh, 1)])


def _remove(db, stored: dict[str, int]) -> None:
    """Take the stored rows of notes about to be stored again out of every table, in one statement a
    table: tags and paths are keyed by tag and prefix, so a delete by note reads the whole table, and
    one a note made a catch-up of 20,000 lines quadratic (28 s a step at 74,900 notes)."""
    if not stored:
        return
    for note_id, rowid in stored.items():
        row = db.execute(STORED_FTS + " WHERE t.rowid = ?", (rowid,)).fetchone()
        if row is None:  # a note row without its text: pages that were never written together
            raise no_text_row(note_id)
        text = fts_row(row)
        marks = ", ".join("?" * len(text))
        db.execute(f"INSERT INTO notes_fts(notes_fts, rowid, {FTS_COLUMN_LIST}) VALUES ('delete', {marks})", text)
    rowids = json.dumps(sorted(stored.values()))
    for table in ("notes", "note_text"):
        db.execute(f"DELETE FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))", (rowids,))
    for table in ("note_tags", "note_paths"):
        db.execute(f"DELETE FROM {table} WHERE note IN (SELECT value FROM json_each(?))", (rowids,))


def _store(db, rows: list[tuple[int, Note]]) -> None:
    """Store each (rowid, note) in every table."""
    insert_rows(db, [rows_at(rowid, note_row_parts(note)) for rowid, note in rows])
