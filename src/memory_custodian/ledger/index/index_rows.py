"""The index's tables, and how a note is stored in their rows and read back.

The columns come from the note's one declaration (`model.NOTE_FIELDS`): a "column" field is a
column of `notes`, a "text" field a column of `note_text` that FTS5 searches, and the rest one
JSON object per note, keyed by field name and holding only what differs from the default. The
field layout is part of the index's signature, so an index written with another one is rebuilt,
never misread.
"""

from __future__ import annotations

import json
import sqlite3

from ...base.records import Factory
from ..recall import ranking
from ..storage.model import NOTE_FIELDS, Note, encode_event
from ..storage.paths import any_match, path_prefix

SCHEMA_VERSION = "11"  # 11: events_at, the activity timeline's order
# SQLite's page cache for a connection, in KiB. Recall reads the FTS index, the notes and their
# sizes (~45 MB at 74,900 notes); SQLite's default 2 MB re-reads them from the OS on every query,
# which cost a third of recall's time there (p50 11.4 -> 7.6 ms, measured). SQLite fills the cache
# as pages are read, so a small ledger, or a one-shot process, holds only what it touched.
PAGE_CACHE_KIB = 65536

COLUMN_FIELDS = tuple(f.name for f in NOTE_FIELDS if f.stored == "column")
TEXT_FIELDS = tuple(f.name for f in NOTE_FIELDS if f.stored == "text")
JSON_FIELDS = tuple(f for f in NOTE_FIELDS if f.stored == "json")
# a tuple field's column holds it newline-joined, under the name FTS5 knows it by
TUPLE_FIELDS = frozenset(f.name for f in NOTE_FIELDS if f.stored == "text" and f.default == ())
TEXT_COLUMNS = tuple(f"{name}_text" if name in TUPLE_FIELDS else name for name in TEXT_FIELDS)
FIELD_SIGNATURE = ",".join(f"{f.name}:{f.stored}" for f in NOTE_FIELDS)
# the plain value of each JSON field's default (a `Factory`'s made once, to compare against)
_JSON_DEFAULTS = {f.name: f.default.make() if isinstance(f.default, Factory) else f.default for f in JSON_FIELDS}
_FACTORIES = {f.name: f.default.make for f in JSON_FIELDS if isinstance(f.default, Factory)}

_META_COLUMNS = ", ".join(f"{name} TEXT" for name in COLUMN_FIELDS if name != "id")
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shards(name TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    consumed INTEGER NOT NULL, hash TEXT NOT NULL, lines INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events(rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, note TEXT NOT NULL,
    at TEXT NOT NULL, txn TEXT NOT NULL, txn_n INTEGER NOT NULL, line TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_note ON events(note, at, id);
CREATE INDEX IF NOT EXISTS events_txn ON events(txn);
CREATE INDEX IF NOT EXISTS events_at ON events(at, id);
CREATE TABLE IF NOT EXISTS waived(txn TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notes(rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, prio INTEGER, {_META_COLUMNS});
CREATE INDEX IF NOT EXISTS notes_order ON notes(prio, created_at DESC, created_event DESC);
CREATE INDEX IF NOT EXISTS notes_kind ON notes(kind, prio, created_at DESC, created_event DESC);
CREATE TABLE IF NOT EXISTS note_text(rowid INTEGER PRIMARY KEY, {", ".join(f"{c} TEXT" for c in TEXT_COLUMNS)},
    json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS note_tags(tag TEXT NOT NULL, note INTEGER NOT NULL, PRIMARY KEY(tag, note)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS note_paths(prefix TEXT NOT NULL, note INTEGER NOT NULL, PRIMARY KEY(prefix, note))
    WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5({", ".join(ranking.FTS_COLUMNS)},
    content='note_text', content_rowid='rowid', tokenize='{ranking.FTS_TOKENIZE}');
"""

FTS_COLUMN_LIST = ", ".join(ranking.FTS_COLUMNS)
NOTE_COLS = ", ".join([*(f"n.{c}" for c in COLUMN_FIELDS), *(f"t.{c}" for c in TEXT_COLUMNS), "t.json"])
NOTE_FROM = "notes n JOIN note_text t ON t.rowid = n.rowid"
INSERT_META = (f"INSERT INTO notes(rowid, prio, {', '.join(COLUMN_FIELDS)}) "
               f"VALUES ({', '.join('?' * (len(COLUMN_FIELDS) + 2))})")
# The subtokens are indexed, never stored: they follow from the stored text (`fts_row`), and FTS5
# reads no content for a query (bm25 needs the index and the column sizes only), so keeping them in
# `note_text` too cost 13.7 MB at 74,900 notes for nothing.
INSERT_TEXT = (f"INSERT INTO note_text(rowid, {', '.join(TEXT_COLUMNS)}, json) "
               f"VALUES ({', '.join('?' * (len(TEXT_COLUMNS) + 2))})")
INSERT_FTS = (f"INSERT INTO notes_fts(rowid, {FTS_COLUMN_LIST}) "
              f"VALUES ({', '.join('?' * (len(ranking.FTS_COLUMNS) + 1))})")
STORED_FTS = (f"SELECT t.rowid, {', '.join(f't.{c}' for c in TEXT_COLUMNS)}, n.state "
              "FROM note_text t JOIN notes n ON n.rowid = t.rowid")
UPSERT_EVENT = ("INSERT INTO events(id, note, at, txn, txn_n, line) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET note=excluded.note, "
                "at=excluded.at, txn=excluded.txn, txn_n=excluded.txn_n, line=excluded.line "
                "WHERE canonical(excluded.line) < canonical(events.line)")
_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_N_COLUMNS, _N_TEXT = len(COLUMN_FIELDS), len(TEXT_FIELDS)


def canonical(line: str) -> str:
    """An event line as the writer would encode it: two copies of one event keep the smaller."""
    return encode_event(json.loads(line))


def note_json(note: Note) -> str:
    """The note's JSON-stored fields that differ from their defaults, as one compact object."""
    d = note.__dict__
    return _encode({name: d[name] for name, default in _JSON_DEFAULTS.items() if d[name] != default})


def _text_value(note: Note, name: str) -> str:
    value = note.__dict__[name]
    return "\n".join(value) if name in TUPLE_FIELDS else value


def note_row_parts(note: Note) -> tuple:
    """A note's index rows without their rowid: (meta, text, tags, path prefixes). Pure, so a
    rebuild can compute them in worker processes (the subtokens and the note JSON are most of a
    rebuild's Python time); `rows_at` gives them their rowid."""
    forgotten = note.state == "forgotten"
    sub = "" if forgotten else ranking.subtokens(note.title, note.body, note.tags, note.paths)
    d = note.__dict__
    meta = (ranking.PRIORITY_ORDER.get(note.priority, 9), *(d[name] for name in COLUMN_FIELDS))
    text = (*(_text_value(note, name) for name in TEXT_FIELDS), sub, note_json(note))
    return meta, text, list(note.tags), [path_prefix(p) for p in note.paths]


def rows_at(rowid: int, parts: tuple) -> tuple:
    """`note_row_parts` as the rows INSERT_META, INSERT_TEXT, INSERT_FTS, note_tags and note_paths take."""
    meta, text, tags, prefixes = parts
    return ((rowid, *meta), (rowid, *text[:-2], text[-1]), (rowid, *text[:-1]), [(t, rowid) for t in tags],
            [(p, rowid) for p in prefixes])


def fts_row(row) -> tuple:
    """A STORED_FTS row `(rowid, title, body, tags_text, paths_text, state)` as FTS5 indexed it:
    its subtokens computed again, as `note_row_parts` did."""
    rowid, title, body, tags_text, paths_text, state = row
    sub = "" if state == "forgotten" else ranking.subtokens(
        title, body, tags_text.split("\n") if tags_text else (), paths_text.split("\n") if paths_text else ())
    return rowid, title, body, tags_text, paths_text, sub


def row_fields(row) -> dict:
    """{field: value} of every field of a NOTE_COLS row: the export renders these, `row_note`
    makes them a `Note` (a made default, such as `extra`'s dict, is fresh for each)."""
    values = dict(_JSON_DEFAULTS)
    for name, make in _FACTORIES.items():
        values[name] = make()
    values.update(zip(COLUMN_FIELDS, row))
    for name, text in zip(TEXT_FIELDS, row[_N_COLUMNS:]):
        values[name] = (tuple(text.split("\n")) if text else ()) if name in TUPLE_FIELDS else text
    stored = row[_N_COLUMNS + _N_TEXT]
    if stored != "{}":
        values.update(json.loads(stored))
    return values


def row_note(row) -> Note:
    """The note a NOTE_COLS row holds."""
    note = object.__new__(Note)
    note.__dict__.update(row_fields(row))
    return note


def insert_rows(db, rows: list[tuple]) -> None:
    """Store notes' rows, each as `rows_at` makes them, in one statement a table."""
    db.executemany(INSERT_META, [r[0] for r in rows])
    db.executemany(INSERT_TEXT, [r[1] for r in rows])
    db.executemany(INSERT_FTS, [r[2] for r in rows])
    db.executemany("INSERT OR IGNORE INTO note_tags VALUES (?, ?)", [t for r in rows for t in r[3]])
    db.executemany("INSERT OR IGNORE INTO note_paths VALUES (?, ?)", [q for r in rows for q in r[4]])


def no_text_row(note_id: str) -> sqlite3.DatabaseError:
    """A note listed without its text row: pages never written together, which `Index.guarded` repairs as
    damage (the words are SQLite's own for a bad page, so `index_file.damage` takes it as one)."""
    return sqlite3.DatabaseError(f"database disk image is malformed (note {note_id} has no text row)")


def clear_index(db) -> None:
    """Empty every table the shards fill, for a rebuild from their first line."""
    for table in ("events", "waived", "note_tags", "note_paths", "shards", "notes", "note_text"):
        db.execute(f"DELETE FROM {table}")
    db.execute("INSERT INTO notes_fts(notes_fts) VALUES ('delete-all')")
    db.execute("DELETE FROM meta WHERE key LIKE 'skipped:%'")


def note_skipped(db, shard: str, problems, *, reset: bool) -> None:
    """Count in `meta` the lines of `shard` that were skipped as unreadable (a torn tail is not
    counted here: the shards table shows it as bytes not consumed). `reset`: the shard was read
    from its start."""
    n = sum(1 for p in problems if p.code != "torn-tail")
    key = f"skipped:{shard}"
    if reset:
        db.execute("DELETE FROM meta WHERE key = ?", (key,))
    if n:
        db.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + ?",
                   (key, str(n), n))


def path_match_sql(paths_text, query_paths_json):
    """SQL `path_match(paths_text, json)`: memoised per anchor, because many notes share their
    anchors and the glob matching is the costly part of a path-filtered recall."""
    if not paths_text:
        return 0
    paths, seen = _query_paths(query_paths_json)
    for glob in paths_text.split("\n"):
        hit = seen.get(glob)
        if hit is None:
            if len(seen) > 4096:
                seen.clear()
            hit = seen[glob] = any_match((glob,), paths)
        if hit:
            return 1
    return 0


_QP: dict[str, tuple] = {}


def _query_paths(text: str) -> tuple:
    """(paths, {anchor: matches}) for the query's paths (one entry: the current query)."""
    got = _QP.get(text)
    if got is None:
        _QP.clear()
        got = _QP[text] = (json.loads(text), {})
    return got
