"""BM25 in memory for callers that query again and again (the MCP server, `eval`): the same scores,
to the last bit, as FTS5's bm25() over the index, without its per-row cost.

FTS5's bm25() spends ~3 µs on every matching note, so a broad query costs more than the rest of
recall together. Here the postings are read once from the index through `fts5vocab` (so the
terms are FTS5's own: same tokenizer, same stems, same counts); a term's share of each note's
score is computed the first time a query needs it, and a query only adds shares up, phrase by
phrase in the query's order, with FTS5's own formula (fts5_aux.c) — equal floats, so equal
ranks and ties. After a write the postings read in only the notes added (`refresh`).

Recall (`recall_scans.memory_rows`) uses them for a query's words on ledgers of at most WARM_MAX notes, from
the second query against an index state, like the note metadata (`Index.note_meta`); filters and
path phrases come from SQL there, and anything that is not an OR of single tokens goes to FTS5.
`tests/test_postings.py` holds the scores to FTS5's, bit for bit.
"""

from __future__ import annotations

import math
import sqlite3
from array import array

from ..index.index_rows import STORED_FTS, fts_row
from . import ranking

K1, B = 1.2, 0.75  # FTS5's bm25() constants
WARM_MAX = 10000  # notes up to which the postings are kept in memory (~2 s to read at this size, ~15 MB)
STEMS_MAX = 50000  # query words whose stems are remembered
PAUSE_EVERY = 4096  # tokens read between two calls of `pause` (a background read gives way to calls there)


class Postings:
    """term -> (rowids, weighted frequencies), each note's length, read from the index; each term's
    shares of the score (which depend on the average length) computed when first asked for."""

    def __init__(self, db: sqlite3.Connection, notes: dict[int, str], forgotten, pause=None):
        """`notes`: {rowid: note id} of every note the index holds, `forgotten` the rowids of the
        forgotten ones (see `refresh`); `pause()`, called between batches of tokens, may wait (`warm.py`)."""
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.notes_vocab USING fts5vocab(main, notes_fts, instance)")
        self.terms: dict[str, tuple[array, array]] = {}
        self.size: dict[int, int] = {}
        self._add(db.execute("SELECT term, doc, col FROM temp.notes_vocab"), pause)
        self.rows = db.execute("SELECT count(*) FROM note_text").fetchone()[0]
        self.avgdl = sum(self.size.values()) / self.rows if self.rows else 1.0
        self.notes, self.forgotten = dict(notes), set(forgotten)
        self._shares: dict[str, array] = {}
        self._stems: dict[str, str | None] = {}
        self._tokenizer: sqlite3.Connection | None = None

    def _add(self, tokens, pause=None) -> None:
        """Count (term, rowid, column) tokens in. fts5vocab lists a term's tokens together, so
        only the current term needs a dict. `pause()`: called every PAUSE_EVERY tokens."""
        weights = {c: float(w) for c, w in zip(ranking.FTS_COLUMNS, ranking.bm25_weights())}
        size = self.size
        term: str | None = None
        docs: dict[int, float] = {}
        for i, (tok_term, doc, col) in enumerate(tokens):
            if pause is not None and not i % PAUSE_EVERY:
                pause()
            if tok_term != term:
                self._flush(term, docs)
                term, docs = tok_term, {}
            docs[doc] = docs.get(doc, 0.0) + weights[col]
            size[doc] = size.get(doc, 0) + 1
        self._flush(term, docs)

    def _flush(self, term: str | None, docs: dict[int, float]) -> None:
        if term is None:
            return
        if term in self.terms:  # listed in two runs (or grown by `refresh`): merge, never split a count
            merged = dict(zip(*self.terms[term]))
            for doc, f in docs.items():
                merged[doc] = merged.get(doc, 0.0) + f
            docs = merged
        self.terms[term] = (array("q", docs.keys()), array("d", docs.values()))

    def refresh(self, db: sqlite3.Connection, notes: dict[int, str], forgotten, pause=None) -> bool:
        """Catch up with an index that changed: notes added since are read in (through a scratch
        FTS5 table with the same tokenizer: the same tokens); False when anything else changed a
        note's text (a note forgotten, rowids renumbered by a rebuild) — then build anew."""
        old, was_forgotten = self.notes, self.forgotten
        if any(notes.get(rowid) != note_id or (rowid in forgotten and rowid not in was_forgotten)
               for rowid, note_id in old.items()):
            return False
        added = sorted(set(notes) - set(old))
        if added:
            t = self._scratch()
            t.execute("DELETE FROM notes_text")
            for chunk in range(0, len(added), 500):
                ids = added[chunk:chunk + 500]
                rows = [fts_row(r) for r in db.execute(STORED_FTS + f" WHERE t.rowid IN ({','.join('?' * len(ids))})",
                                                       ids)]
                t.executemany("INSERT INTO notes_text(rowid, title, body, tags_text, paths_text, subtokens) "
                              "VALUES (?, ?, ?, ?, ?, ?)", rows)
            self._add(t.execute("SELECT term, doc, col FROM notes_text_vocab"), pause)
            t.execute("DELETE FROM notes_text")
            self.rows = db.execute("SELECT count(*) FROM note_text").fetchone()[0]
            self.avgdl = sum(self.size.values()) / self.rows if self.rows else 1.0
            self._shares.clear()  # the average length moved
        self.notes, self.forgotten = dict(notes), set(forgotten)
        return True

    def _shares_of(self, term: str) -> tuple[array, array]:
        """(rowids, each note's share of the term's score before IDF), FTS5's formula (fts5_aux.c)."""
        ids, freqs = self.terms[term]
        shares = self._shares.get(term)
        if shares is None:
            size, avgdl = self.size, self.avgdl
            shares = self._shares[term] = array("d", (
                (f * (K1 + 1.0)) / (f + K1 * (1 - B + B * size[doc] / avgdl)) for doc, f in zip(ids, freqs)))
        return ids, shares

    def stems(self, words: list[str]) -> list[str] | None:
        """Each word as FTS5 indexes it, or None when one of them is not exactly one token."""
        missing = [w for w in words if w not in self._stems]
        if missing:
            if len(self._stems) > STEMS_MAX:  # a long-lived server meets new words forever
                self._stems.clear()
            got = self._tokenize(missing)
            for i, word in enumerate(missing):
                toks = got.get(i, [])
                self._stems[word] = toks[0] if len(toks) == 1 else None
        out: list[str] = []
        for w in words:
            stem = self._stems[w]
            if stem is None:
                return None
            out.append(stem)
        return out

    def _scratch(self) -> sqlite3.Connection:
        """An in-memory FTS5 database with the index's tokenizer, for query words and new notes."""
        if self._tokenizer is None:
            t = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            t.execute(f"CREATE VIRTUAL TABLE words USING fts5(x, tokenize='{ranking.FTS_TOKENIZE}')")
            t.execute("CREATE VIRTUAL TABLE words_vocab USING fts5vocab(words, instance)")
            t.execute(f"CREATE VIRTUAL TABLE notes_text USING fts5({', '.join(ranking.FTS_COLUMNS)}, "
                      f"tokenize='{ranking.FTS_TOKENIZE}')")
            t.execute("CREATE VIRTUAL TABLE notes_text_vocab USING fts5vocab(notes_text, instance)")
            self._tokenizer = t
        return self._tokenizer

    def _tokenize(self, words: list[str]) -> dict[int, list[str]]:
        t = self._scratch()
        t.executemany("INSERT INTO words(rowid, x) VALUES (?, ?)", list(enumerate(words)))
        out: dict[int, list[str]] = {}
        for doc, term in t.execute("SELECT doc, term FROM words_vocab ORDER BY doc, offset"):
            out.setdefault(doc, []).append(term)
        t.execute("DELETE FROM words")
        return out

    def scores(self, words: list[tuple[str, bool]]) -> dict[int, float] | None:
        """{rowid: BM25} for the OR of `words` (`ranking.match_words`; positive: FTS5's bm25()
        negated), or None when that is not a plain OR of single tokens: FTS5 must rank it."""
        if not words or any(prefix for _, prefix in words):
            return None
        stems = self.stems([w for w, _ in words])
        if stems is None:
            return None
        acc: dict[int, float] = {}
        get = acc.get
        n = self.rows
        for stem in stems:  # phrase by phrase, in the query's order, as FTS5 sums them
            ids, parts = self._shares_of(stem) if stem in self.terms else ((), ())
            hits = len(ids)
            idf = math.log((n - hits + 0.5) / (hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            for doc, part in zip(ids, parts):
                acc[doc] = get(doc, 0.0) + idf * part
        return acc
