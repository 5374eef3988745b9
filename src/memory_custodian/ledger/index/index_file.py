"""The index file itself: opened, made and renewed safely while other processes use it.

Any process may hold `.cache/index.sqlite` open at any moment (a hook, the MCP server, a
teammate's `recall` in another terminal), and SQLite finds a database's `-wal` and `-shm` by
name. A file deleted or half-made under them is how concurrent processes broke it: an opener that
saw a schema still being created took it for a stale one and deleted it under its maker, and one
that opened the fresh path beside the old `-wal` read "database disk image is malformed". So:

- opening never creates the file (SQLite's `mode=rw`); a missing, stale or damaged one is made
  under the project lock, after a second look (another process may just have made it);
- a new file is built whole under a temporary name and renamed into place;
- a readable file with another schema is reset inside one transaction, which readers see whole;
- only a file SQLite cannot read at all is replaced, and only if it is still the file the caller
  found damaged (its inode), so processes that all hit the same damage replace it once.
"""

from __future__ import annotations

import os
import re
import sqlite3

from ...base import fsutil
from ..recall import ranking
from .index_rows import FIELD_SIGNATURE, PAGE_CACHE_KIB, SCHEMA, SCHEMA_VERSION

_SUFFIXES = ("-wal", "-shm")
_FILE_DAMAGE = ("malformed", "not a database", "disk image")
# every statement is ours, so a missing table or column is a damaged (or hand-edited) cache too
_SCHEMA_DAMAGE = ("no such table", "no such column")


def damage(exc: BaseException | None) -> str | None:
    """"file" when SQLite cannot trust the file's pages, "schema" when its tables are not ours, else
    None (locked, full, read-only: not damage, and never a reason to throw the cache away)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return None
    text = str(exc).lower()
    if any(w in text for w in _FILE_DAMAGE):
        return "file"
    return "schema" if any(w in text for w in _SCHEMA_DAMAGE) else None


def wanted_meta() -> dict[str, str]:
    return {"schema": SCHEMA_VERSION, "ranking": ranking.INDEX_SIGNATURE, "fields": FIELD_SIGNATURE}


def inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


def connect(path: str, memory_dir: str) -> tuple[sqlite3.Connection, int | None]:
    """A connection to a current index at `path`, and the inode it opened; made first if needed."""
    found = _open_current(path)
    if found is None:
        with fsutil.project_lock(memory_dir):
            found = _open_current(path)  # another process may have made it while this one waited
            if found is None:
                found = _make(path)
    return found


def renew(path: str, memory_dir: str, seen: int | None, kind: str | None) -> None:
    """Make the index at `path` usable again after the connection that had opened inode `seen`
    found it damaged (`kind` as `damage` says); nothing when another process already renewed it."""
    with fsutil.project_lock(memory_dir):
        if seen is None or inode(path) != seen:
            return  # removed or replaced since: the next connect opens or makes the new one
        if kind == "schema":
            try:
                db = open_rw(path)
                try:
                    _reset(db)
                    return
                finally:
                    db.close()
            except sqlite3.DatabaseError as exc:
                if damage(exc) is None:
                    raise
        _replace(path)


def open_rw(path: str) -> sqlite3.Connection:
    """A connection to the existing file at `path` (SQLite's `mode=rw`: never creates it)."""
    fsutil.owner_only(path, also=_SUFFIXES)  # every note's text is in it
    uri = "file:" + path.replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=rw"
    db = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None, check_same_thread=False)
    # A cache: WAL keeps it consistent through a crash; durability is not needed (a lost
    # commit is caught up again from the shards), so skip the fsyncs.
    db.execute("PRAGMA synchronous=OFF")
    db.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
    return db


def _open_current(path: str) -> tuple[sqlite3.Connection, int | None] | None:
    """A connection if the file is there with this version's schema; None if missing, stale or damaged."""
    seen = inode(path)
    if seen is None:
        return None
    try:
        db = open_rw(path)
    except sqlite3.DatabaseError as exc:
        if inode(path) is None or damage(exc):
            return None  # removed between the look and the open, or not a database: made anew
        raise
    try:
        if _is_current(db):
            return db, seen
    except sqlite3.DatabaseError as exc:
        if damage(exc) is None:
            db.close()
            raise
    db.close()
    return None


def _is_current(db: sqlite3.Connection) -> bool:
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
        return False
    meta = dict(db.execute("SELECT key, value FROM meta"))
    return all(meta.get(k) == v for k, v in wanted_meta().items()) and _tables_present(db)


def _make(path: str) -> tuple[sqlite3.Connection, int | None]:
    """Under the project lock: a current index at `path`, however it was found."""
    if inode(path) is not None:
        try:
            db = open_rw(path)
            try:
                _reset(db)
            except BaseException:
                db.close()
                raise
            return db, inode(path)
        except sqlite3.DatabaseError as exc:
            if damage(exc) is None:
                raise
    _replace(path)
    found = _open_current(path)
    if found is None:
        raise sqlite3.DatabaseError(f"the index made at {path} could not be opened")
    return found


def _reset(db: sqlite3.Connection) -> None:
    """Give a readable file this version's empty schema in one transaction (readers see it whole)."""
    if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        db.execute("PRAGMA journal_mode=WAL")  # persistent in the file; cannot change inside a transaction
    db.execute("BEGIN IMMEDIATE")
    try:
        rows = db.execute("SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view', 'trigger') "
                          "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
        # a virtual table first: dropping it drops its shadow tables with it
        rows.sort(key=lambda r: (not (r[2] or "").upper().startswith("CREATE VIRTUAL"), r[1]))
        for kind, name, _ in rows:
            quoted = '"' + name.replace('"', '""') + '"'
            db.execute(f"DROP {kind.upper()} IF EXISTS {quoted}")
        for statement in _statements(SCHEMA):
            db.execute(statement)
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", sorted(wanted_meta().items()))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _replace(path: str) -> None:
    """Build a fresh index beside `path` and rename it into place (the caller holds the lock)."""
    tmp = path + ".new"
    _unlink(tmp, *(tmp + s for s in _SUFFIXES))  # a crash's leftover
    fsutil.owner_only(tmp, create=True)
    db = sqlite3.connect(tmp, isolation_level=None)
    try:
        _reset(db)
    finally:
        db.close()  # the last connection: SQLite checkpoints and removes tmp's -wal and -shm
    # the old -wal and -shm go first: a new file must never meet them
    _unlink(*(path + s for s in _SUFFIXES))
    os.replace(tmp, path)


def _unlink(*paths: str) -> None:
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def _statements(script: str) -> list[str]:
    out, part = [], ""
    for line in script.splitlines(keepends=True):
        part += line
        if sqlite3.complete_statement(part):
            out.append(part.strip())
            part = ""
    return out


def _tables_present(db) -> bool:
    """Whether every table the schema creates is there: a table dropped by hand is a damaged cache."""
    wanted = set(re.findall(r"CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?(\w+)", SCHEMA))
    have = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return wanted <= have
