"""What a long-lived caller keeps in memory for fast recall, read in the background so no call waits for it.

A caller that asks again (the MCP server, the viewer, `eval`) ranks faster from every note's
metadata in memory and, on ledgers of at most `postings.WARM_MAX` notes, from the BM25 postings
(`postings.py`). Reading them costs more than a query (the postings of 7,490 notes took 0.65 s,
and an MCP client's first `memory_context` after a `memory_recall` waited 742 ms for them), so one
thread reads them on a connection of its own, labelled with the index state it read
(`Index._caches`); until they are there for the current state, recall answers from SQL, with the
same scores. After a write the last postings catch up with the notes added (`Postings.refresh`),
in that thread too.

That thread gives way to the calls it serves: while a call runs (`Warmer.foreground`, entered by
`Index.guarded`), it waits between batches of the rows it reads, so a call made during the read costs
what it costs without one (two threads sharing the interpreter's lock made each call at 7,490 notes
2-4x slower than with none: 404-531 ms, not 105-188), and the read goes on between calls.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager

from ..recall import postings

META_CACHE_MAX = 20000  # notes up to which recall keeps their metadata in memory (~1 MB per 5,000)
META_SQL = ("SELECT rowid, id, priority, kind, state, expires, scope, branch, created_at, created_event FROM notes "
            "LIMIT ?")


def read_meta(db: sqlite3.Connection) -> dict | None:
    """{rowid: (id, (priority, kind), state, expires, scope, branch, created_at, created_event)} of
    every note, or None past META_CACHE_MAX notes; created_at and created_event as "" when NULL
    (recall sorts on them as plain keys)."""
    rows = db.execute(META_SQL, (META_CACHE_MAX + 1,)).fetchall()
    if len(rows) > META_CACHE_MAX:
        return None
    return {r[0]: (r[1], (r[2], r[3]), r[4], r[5], r[6], r[7], r[8] or "", r[9] or "") for r in rows}


class Warmer:
    """One background read at a time of (metadata, postings) for an index state (`sig`)."""

    def __init__(self, connect):
        self.connect = connect  # () -> a new connection to the index
        self.ready: tuple | None = None  # (sig, meta or None, postings or None), the last read done
        self.started = None  # the sig of the read under way or done
        self.kept = None  # the last postings, caught up rather than read anew after a write
        self.thread: threading.Thread | None = None
        self._calls = 0  # calls running now (`foreground`)
        self._lock = threading.Lock()
        self._idle = threading.Event()  # set while no call runs
        self._idle.set()

    @contextmanager
    def foreground(self):
        """A call runs: the background read waits (`pause`) until no call does."""
        with self._lock:
            self._calls += 1
            self._idle.clear()
        try:
            yield
        finally:
            with self._lock:
                self._calls -= 1
                if not self._calls:
                    self._idle.set()

    def pause(self) -> None:
        """Wait while a call runs (the background read, between its batches)."""
        self._idle.wait()

    def get(self, sig) -> tuple | None:
        """(meta, postings) read for `sig`, or None while they are not (yet)."""
        ready = self.ready
        return ready[1:] if ready is not None and ready[0] == sig else None

    def start(self, sig) -> None:
        """Begin reading for `sig`, unless a read for it was begun already."""
        if self.started == sig:
            return
        busy = self.thread
        if busy is not None and busy.is_alive():
            return  # one at a time: the next ask after it finishes begins the read for the state then
        self.started = sig
        self.thread = threading.Thread(target=self._read, args=(sig,), name="memory-custodian-warm", daemon=True)
        self.thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Until the read under way is done (tests, benchmarks)."""
        if self.thread is not None:
            self.thread.join(timeout)

    def _read(self, sig) -> None:
        meta, post = None, None
        try:
            db = self.connect()
        except sqlite3.Error:
            self.ready = (sig, None, None)
            return
        try:
            meta = read_meta(db)
            if meta is not None and len(meta) <= postings.WARM_MAX:
                notes = {rowid: m[0] for rowid, m in meta.items()}
                forgotten = {rowid for rowid, m in meta.items() if m[2] == "forgotten"}
                post = self.kept
                if post is None or not post.refresh(db, notes, forgotten, pause=self.pause):
                    post = postings.Postings(db, notes, forgotten, pause=self.pause)
                self.kept = post
        except sqlite3.Error:
            meta, post = None, None  # a failed read leaves recall on SQL, which reports its own faults
        finally:
            db.close()
        self.ready = (sig, meta, post)
