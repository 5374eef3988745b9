"""The derived index: `.cache/index.sqlite`, a disposable cache of the folded ledger with FTS5.

It remembers, per shard, how many bytes it has read and a hash of them. When shards only grew it
reads just the new lines and re-folds the notes they touch from the events it keeps; anything
else (a rewrite, a removed shard, a merge that inserted lines) rebuilds it. Deleting it is
always safe. Both paths fold each note with the same pure function replay uses, so an index
caught up incrementally equals a fresh rebuild. A command reads at most one step of what it has
not read (`catch_up`'s budget, `limits.INDEX_LINES_PER_COMMAND`) and a detached process reads the
rest (`background.py`); `unread` says what is left, and every answer says it too.
"""

from __future__ import annotations

import json
import os
import sqlite3

from ...base import fsutil
from ...base.errors import Refused
from ..storage.fold import fold_note_events
from ..storage.model import INDEX_FILE, Note, copy_note
from ..storage.store import Ledger
from . import index_file
from .background import STEP_BYTES, STEP_LINES, building, failed, unread_phrase
from .background import start as start_building
from .grow import broken_txns, fits, grow
from .index_rows import (
    NOTE_COLS,
    NOTE_FROM,
    canonical,
    clear_index,
    no_text_row,
    path_match_sql,
    row_fields,
    row_note,
)

TYPE_CHECKING = False  # not `typing`'s: importing it costs every fresh `recall`
if TYPE_CHECKING:
    from .warm import Warmer  # imported when first used: a one-shot process never starts it

NOTE_CACHE_MAX = 2000  # notes read recently, kept in memory per Index
_ASKED_ONCE = "asked once"  # note_meta's state between the first ask and the load


RENEWED_RETRIES = 5  # times a catch-up plans again when another process renewed the file under it
# Past this many bytes of shards a rebuild reads them a step per transaction (`_rebuild_in_steps`):
# one pass keeps a key per event (55.7 MB of shards: 16 s with worker processes, well under 500 MB).
BULK_REBUILD_BYTES = 128 * 1_048_576
STEP_BUDGET = (STEP_LINES, STEP_BYTES)


class Index:
    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self.path = os.path.join(ledger.memory_dir_str, fsutil.CACHE_DIR, INDEX_FILE)  # a str: see fsutil
        self._db: sqlite3.Connection | None = None
        self._inode: int | None = None  # the file the connection opened (`index_file.renew`)
        self._disk_sig: frozenset | None = None  # the shards as last planned (name, size, mtime)
        # (shards, data_version) as last found caught up: skips the shards query
        self._current_sig: tuple | None = None
        # (signature, {rowid: meta} or None, note cache, Postings or None) — see note_meta, postings
        self._meta: tuple | None = None
        self._warmer: Warmer | None = None  # reads the metadata and postings in the background (`warm.py`)
        self._unread = (0, 0)  # (bytes, shards) the last catch-up left unread (`unread`)
        self._budget: tuple[int, int] | None = None  # the last catch-up's (`catch_up`)
        self._background = True

    # ---- connection ---------------------------------------------------------------------------

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                self._db = self._connect()
            except (sqlite3.Error, OSError) as exc:
                raise self._error(exc) from exc
        return self._db

    def _error(self, exc: BaseException):
        """A SQLite or OS failure as one clear line (the index is a cache: deleting it is safe)."""
        if isinstance(exc, OSError):
            return fsutil.disk_error(self.path, exc)
        return Refused(f"the index cache failed ({exc}); nothing in the ledger was changed — free disk space or "
                       "check permissions, or delete .cache/index.sqlite and retry", path=self.path)

    def _connect(self) -> sqlite3.Connection:
        fsutil.cache_dir(self.ledger.memory_dir_str)
        db, self._inode = index_file.connect(self.path, self.ledger.memory_dir_str)
        db.create_function("path_match", 2, path_match_sql, deterministic=True)
        db.create_function("canonical", 1, canonical, deterministic=True)
        return db

    def close(self) -> None:
        self._current_sig = None
        if self._db is not None:
            self._db.close()
            self._db = None

    # ---- keeping up with the shards -----------------------------------------------------------

    def plan(self, reopen: bool = True):
        """What changed since the index last read the shards: (mode, work) with mode current/grow/rebuild.
        `reopen=False` inside a transaction, which must stay on the connection that began it."""
        if reopen and self._db is not None and index_file.inode(self.path) != self._inode:
            self.close()  # another process renewed (or a hard forget removed) the file: open the one there now
            self._meta = None
        on_disk = self.ledger.shard_stats()
        self._disk_sig = frozenset((name, st.st_size, st.st_mtime_ns) for name, st in on_disk.items())
        # `data_version` moves when another connection commits: one that reset the file in place
        # (`index_file`) left it empty, which the shards' sizes alone would not show
        seen = (self._disk_sig, self.db.execute("PRAGMA data_version").fetchone()[0])
        if seen == self._current_sig:
            return "current", []  # the shards are as this connection last found the index caught up with them
        stored = {row[0]: row for row in self.db.execute("SELECT name, size, mtime_ns, consumed, hash, lines FROM shards")}
        if set(stored) - set(on_disk):
            return "rebuild", None
        work: list[tuple] = []
        for name, st in sorted(on_disk.items()):
            row = stored.get(name)
            if row is not None and row[1] == st.st_size and row[2] == st.st_mtime_ns:
                continue
            path = os.path.join(self.ledger.dir_str, name)
            if row is None:
                work.append((name, path, st, 0, 0))
                continue
            if st.st_size < row[3]:
                return "rebuild", None
            work.append((name, path, st, row[3], row[5], row[4]))
        if not work:
            self._current_sig = seen
        return ("grow" if work else "current"), work

    def catch_up(self, budget: tuple[int, int] | None = None, background: bool = True) -> dict:
        """Bring the index up to the shards; returns {"mode": current|incremental|rebuild|building, "events": n}.

        `budget`: (lines, bytes), at most this much of the shards not indexed yet is read (a step), and
        the rest is left to a detached build (`background.py`; `background=False`: that build itself).
        While one runs a command reads nothing and answers from what it has committed. `unread()` says
        what is left; None: read everything (a write that checks a note's state, `reindex`)."""
        self._unread = (0, 0)
        self._budget, self._background = budget, background  # a damaged file is read again the same way
        if budget is not None and background and building(self.ledger.memory_dir_str):
            found = self.guarded(self._while_building)
            if found is not None:
                return found
        return self.guarded(self._catch_up_once)

    def _catch_up_once(self) -> dict:
        result = self._catch_up(self._budget)
        if self._unread[0] and self._background:
            start_building(self.ledger.memory_dir_str, self.ledger.memory_dir_str)
        return result

    def unread(self) -> tuple[int, int]:
        """(bytes, shards) of the ledger the index had not read as of the last catch-up: a budget's rest."""
        return self._unread

    def unread_failure(self) -> str | None:
        """Why the detached build that reads the rest stopped, when it failed and a rest remains."""
        return failed(self.ledger.memory_dir_str) if self._unread[0] else None

    def unread_said(self) -> str:
        """`unread` (and `unread_failure`) in words, for a message or a pack line."""
        return unread_phrase(self._unread, self.unread_failure())

    def _while_building(self) -> dict | None:
        """What the index lacks while the detached build reads on: the shards only grew, so what it holds
        is a prefix of them. None when they did not (a merge under the build, a build that died): what
        it holds may be older than the shards, so the caller reads a step itself, from the start."""
        mode, work = self.plan()
        if mode == "current":
            return {"mode": "current", "events": 0}
        if mode == "rebuild":
            return None
        self._unread = (sum(item[2].st_size - item[3] for item in work), len(work))
        return {"mode": "building", "events": 0}

    def guarded(self, work):
        """Run `work()`; a damaged cache is discarded, rebuilt from the shards and `work` retried once.

        The index is a cache (deleting it is always safe), so a bad page must cost one rebuild, not
        every command until someone deletes the file by hand. Other failures become one clear line.
        While it runs, the background read of a long-lived caller (`warm.py`) gives way.
        """
        warmer = self._warmer
        if warmer is None:  # a one-shot process: nothing reads in the background
            return self._guarded(work)
        with warmer.foreground():
            return self._guarded(work)

    def _guarded(self, work):
        try:
            return work()
        except (sqlite3.Error, OSError) as exc:
            kind = index_file.damage(exc)
            if kind is None:
                raise self._error(exc) from exc
        self.discard(kind)
        try:
            if work not in (self._catch_up_once, self._while_building):
                self._catch_up_once()
            return work()
        except (sqlite3.Error, OSError) as exc:
            raise self._error(exc) from exc

    def discard(self, kind: str | None = "file") -> None:
        """Close the connection and renew the damaged file (`index_file.renew`: once, whichever process
        finds it first); the next use rebuilds the notes from the shards."""
        seen = self._inode
        self.close()
        self._disk_sig = None
        self._meta = None
        self._current_sig = None
        self._warmer = None
        index_file.renew(self.path, self.ledger.memory_dir_str, seen, kind)

    def _catch_up(self, budget: tuple[int, int] | None = None) -> dict:
        for _attempt in range(RENEWED_RETRIES):
            mode, _ = self.plan()
            if mode == "current":
                return {"mode": "current", "events": 0}
            self._meta = None
            self._current_sig = None
            self.db.execute("BEGIN IMMEDIATE")
            if index_file.inode(self.path) == self._inode:
                return self._catch_up_locked(budget)
            # renewed by another process while this one waited for the write lock: plan on the file there now
            self.db.execute("ROLLBACK")
        raise sqlite3.OperationalError("the index file was renewed by other processes again and again; retry")

    def _catch_up_locked(self, budget: tuple[int, int] | None = None) -> dict:
        try:
            mode, work = self.plan(reopen=False)  # again, now that no one else can write the index
            if mode == "current":
                self.db.execute("COMMIT")
                return {"mode": "current", "events": 0}
            if mode == "grow":
                result = self._grow(work, budget)
                if result is not None:
                    self.db.execute("COMMIT")
                    return result
            if budget is not None and not fits(self.ledger, budget):
                # a rebuild past the budget: start afresh, read the first step, leave the rest to the
                # detached build; what is indexed is then always a prefix of the shards as they are
                clear_index(self.db)
                mode, work = self.plan(reopen=False)
                result = self._grow(work, budget)
                assert result is not None  # nothing read yet: every shard is new
                self.db.execute("COMMIT")
                return result
            from .rebuild import rebuild_locked

            result = rebuild_locked(self, None)
            self.db.execute("COMMIT")
            return result
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise

    def _grow(self, work, budget: tuple[int, int] | None) -> dict | None:
        grown = grow(self, work, budget)
        if grown is None:
            return None
        result, self._unread = grown
        return result

    def unread_lines(self) -> tuple[int, int]:
        """(lines skipped because this version cannot read them, torn last lines) as of the last
        catch-up: each costs only its own line, and `doctor` names them."""
        skipped = sum(int(v) for (v,) in self.db.execute("SELECT value FROM meta WHERE key LIKE 'skipped:%'"))
        torn = self.db.execute("SELECT count(*) FROM shards WHERE size > consumed").fetchone()[0]
        return skipped, torn

    def rebuild(self, progress=None) -> dict:
        """Rebuild from the shards (readers keep the old state until commit); a damaged file is built afresh."""
        try:
            return self._rebuild(progress)
        except Refused as exc:
            kind = index_file.damage(exc.__cause__)
            if kind is None:
                raise
        self.discard(kind)
        return self._rebuild(progress)

    def _rebuild(self, progress) -> dict:
        self._meta = None
        self._current_sig = None
        stats = self.ledger.shard_stats()
        if sum(st.st_size for st in stats.values()) > BULK_REBUILD_BYTES:
            return self.guarded(lambda: self._rebuild_in_steps(progress, stats))
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                from .rebuild import rebuild_locked

                result = rebuild_locked(self, progress)
                self.db.execute("COMMIT")
                self._unread = (0, 0)
            except BaseException:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise
        except (sqlite3.Error, OSError) as exc:
            raise self._error(exc) from exc
        return result

    def _rebuild_in_steps(self, progress, stats) -> dict:
        """A rebuild of a ledger past BULK_REBUILD_BYTES: emptied, then read one step per transaction, as
        the detached build reads (a single pass keeps a key per event in memory: 839 MB at 1,000,000)."""
        total = sum(st.st_size for st in stats.values()) or 1
        self.db.execute("BEGIN IMMEDIATE")
        try:
            clear_index(self.db)
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        while True:
            self._catch_up(STEP_BUDGET)
            if progress:
                progress(1.0 - min(self._unread[0], total) / total)
            if not self._unread[0]:
                break
        count = self.db.execute
        return {"mode": "rebuild", "events": count("SELECT count(*) FROM events").fetchone()[0],
                "notes": count("SELECT count(*) FROM notes").fetchone()[0], "shards": len(stats)}

    # ---- reads --------------------------------------------------------------------------------

    def _caches(self) -> tuple:
        """(signature, note metadata, note cache, postings), valid for the index as it is now: reset
        when this connection changed the index, when the shards differ from when they were read,
        or when another connection committed to it (`PRAGMA data_version`: a `reindex` elsewhere
        renumbers rowids). Call after catch_up. A caller that had asked for the metadata before
        (a long-lived one) keeps asking: its reset state asks at once."""
        sig = (self._disk_sig, self.db.execute("PRAGMA data_version").fetchone()[0])
        if self._meta is None or self._meta[0] != sig or sig[0] is None:
            again = self._meta is not None and self._meta[1] is not False
            self._meta = (sig, _ASKED_ONCE if again else False, {}, False)
        return self._meta

    def note_meta(self) -> dict | None:
        """{rowid: (id, (priority, kind), state, expires, scope, branch, created_at, created_event)}
        of every note (`warm.read_meta`) on ledgers of at most META_CACHE_MAX notes, so recall can
        rank without a join per match; None while it is not in memory.

        Never read on the first ask against an index state: a one-shot process (a hook, a CLI
        `recall`) never pays for it. The second ask (a caller asking again: the MCP server, `eval`)
        begins reading it, with the postings, in the background (`warm.py`), and answers None until
        they are there: no call waits for them."""
        caches = self._caches()
        if caches[1] is False:  # never asked: note the ask, answer without
            self._meta = (caches[0], _ASKED_ONCE, caches[2], False)
            return None
        caches = self._adopt(caches)
        if caches[1] is _ASKED_ONCE:
            self._warm().start(caches[0])
            return None
        return caches[1]

    def _adopt(self, caches: tuple) -> tuple:
        """`caches` with what the background read for their state, once it is there."""
        if caches[1] is _ASKED_ONCE:
            ready = self._warm().get(caches[0])
            if ready is not None:
                caches = self._meta = (caches[0], ready[0], caches[2], ready[1] or False)
        return caches

    def warm(self, wait: bool = False) -> None:
        """Begin reading the metadata and postings now (a long-lived caller at its start); `wait`:
        until they are read."""
        caches = self._caches()
        if caches[1] is False:
            self._meta = (caches[0], _ASKED_ONCE, caches[2], False)
        assert self._meta is not None  # `_caches()` set it
        if self._meta[1] is _ASKED_ONCE:
            self._warm().start(caches[0])
            if wait:
                self._warm().wait()

    def _warm(self) -> Warmer:
        if self._warmer is None:
            from .warm import Warmer

            self._warmer = Warmer(self._reader)
        return self._warmer

    def _reader(self) -> sqlite3.Connection:
        return index_file.open_rw(self.path)

    def postings(self):
        """BM25 postings in memory (`postings.py`), read with the metadata (see note_meta) on ledgers
        of at most WARM_MAX notes; None otherwise."""
        caches = self._adopt(self._caches())
        return caches[3] if isinstance(caches[1], dict) and caches[3] is not False else None

    def get_note(self, note_id: str) -> Note | None:
        row = self.db.execute(f"SELECT {NOTE_COLS} FROM {NOTE_FROM} WHERE n.id = ?", (note_id,)).fetchone()
        if row is None and self.db.execute("SELECT 1 FROM notes WHERE id = ?", (note_id,)).fetchone():
            # listed but without its text: a torn cache, which must be rebuilt, not read as "no such note"
            raise no_text_row(note_id)
        return row_note(row) if row else None

    def get_notes(self, ids) -> dict[str, Note]:
        """Notes by id. Recently read ones come from memory (as copies: callers may change them),
        which is what a long-running caller (the MCP server, `eval`) asking again and again needs."""
        cache = self._caches()[2]
        out = {}
        missing = []
        for note_id in ids:
            note = cache.get(note_id)
            if note is None:
                missing.append(note_id)
            else:
                out[note_id] = copy_note(note)
        if len(cache) + len(missing) > NOTE_CACHE_MAX:
            cache.clear()
        for start in range(0, len(missing), 500):
            chunk = missing[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(f"SELECT n.id, {NOTE_COLS} FROM {NOTE_FROM} WHERE n.id IN ({marks})", chunk):
                note = row_note(row[1:])
                cache[row[0]] = note
                out[row[0]] = copy_note(note)
        return out

    def ids_with_prefix(self, prefix: str) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT id FROM notes WHERE id >= ? AND id < ? ORDER BY id LIMIT 6", (prefix, prefix + "~"))]

    def all_notes(self) -> list[Note]:
        query = f"SELECT {NOTE_COLS} FROM {NOTE_FROM} ORDER BY n.created_at, n.created_event, n.id"
        return [row_note(r) for r in self.db.execute(query)]

    def export_rows(self) -> list[dict]:
        """The non-forgotten notes as the export renderer's rows (`export.note_row`), read with one
        query and no `Note` per row."""
        try:
            rows = self.db.execute(f"SELECT {NOTE_COLS} FROM {NOTE_FROM} WHERE n.state IS NOT 'forgotten'").fetchall()
        except (sqlite3.Error, OSError) as exc:
            raise self._error(exc) from exc
        return [row_fields(r) for r in rows]

    def note_events(self, note_id: str) -> list[dict]:
        """The note's applied events, as replay applies them."""
        broken = broken_txns(self.db, [note_id])
        evs = [json.loads(r[0]) for r in self.db.execute(
            "SELECT line FROM events WHERE note = ? ORDER BY at, id", (note_id,))]
        _, applied = fold_note_events([e for e in evs if e["txn"] not in broken])
        return applied

    def stats(self) -> dict:
        notes = self.db.execute("SELECT count(*) FROM notes").fetchone()[0]
        events = self.db.execute("SELECT count(*) FROM events").fetchone()[0]
        return {"notes": notes, "events": events, "path": self.path}

