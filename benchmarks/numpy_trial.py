"""A trial, not shipped: exact full-account recall at 74,900 notes from postings held in numpy arrays.

    pip install numpy && python benchmarks/numpy_trial.py [--root DIR] [--notes 74900]

Issue 26 asks a long-lived caller (the MCP server, the viewer) to answer a broad question in 20-30 ms
at 74,900 notes; SQL takes 300-400 ms, and the same work in plain Python from the postings in memory
84-91 ms before it counts anything (`bench_prune.py`: MaxScore would still score half the matches).
This asks what a vectorised scorer would cost: the postings (`ledger/recall/postings.py`, the same
terms and counts FTS5 holds) as arrays, each question's BM25 summed term by term in the query's order
as FTS5 sums it, times each note's prior, the top 510 among the notes in the states asked for (a full
account lists 500 ids below the cutoff), and the counts by state and scope. Each result is compared
with the SQL path's (`recall_scans.scan_two_pass`): the same ids in the same order, the same counts.
numpy is not a dependency; this prints what it would buy, for a decision on adding it.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "src"))
sys.path.insert(0, str(HERE))

from bench_prune import questions  # noqa: E402
from bench_scale import project  # noqa: E402

from memory_custodian.ledger.index.index import Index  # noqa: E402
from memory_custodian.ledger.recall import ranking  # noqa: E402
from memory_custodian.ledger.recall.postings import K1, B, Postings  # noqa: E402
from memory_custodian.ledger.recall.recall import run_recall  # noqa: E402
from memory_custodian.ledger.storage.inputs import current_branch  # noqa: E402
from memory_custodian.ledger.storage.model import RECALL_DEFAULT_STATES  # noqa: E402
from memory_custodian.ledger.storage.store import Ledger  # noqa: E402

try:
    import numpy as np
except ImportError:  # not a dependency: the trial says so and stops
    np = None

NOW = "2026-12-03T00:00:00.000Z"
CAP = 10 + 500


class Arrays:
    """The postings and every note's ranking columns as arrays indexed by rowid."""

    def __init__(self, db: sqlite3.Connection, post: Postings, branch: str | None):
        rows = db.execute("SELECT rowid, id, priority, kind, state, expires, scope, branch, created_at, created_event "
                          "FROM notes").fetchall()
        n = max(r[0] for r in rows) + 1
        self.post = post
        self.ids = np.empty(n, dtype=object)
        self.prior = np.zeros(n)
        states = ["forgotten", *sorted({r[4] for r in rows} - {"forgotten"})]
        self.names = np.array(states + ["expired"], dtype=object)
        code = {st: i for i, st in enumerate(self.names)}
        self.state = np.zeros(n, dtype=np.int8)  # a rowid no note holds reads as forgotten
        self.expires = np.full(n, "~", dtype="U32")
        self.workspace = np.zeros(n, dtype=bool)
        self.dl = np.zeros(n, dtype=np.int64)
        for rowid, size in post.size.items():
            self.dl[rowid] = size
        for r in rows:
            self.ids[r[0]], self.prior[r[0]], self.state[r[0]] = r[1], ranking.prior(r[2], r[3]), code[r[4]]
            self.expires[r[0]] = r[5] or "~"
            self.workspace[r[0]] = r[6] == "workspace" or r[7] == branch  # in scope
        # the rank's tie-break as one integer: created_at DESC, created_event DESC, then id
        keyed = sorted(rows, key=lambda r: r[1])  # id ascending, then two stable sorts descending
        keyed.sort(key=lambda r: (r[8] or "", r[9] or ""), reverse=True)
        self.tie = np.zeros(n, dtype=np.int64)
        for rank, r in enumerate(keyed):
            self.tie[r[0]] = rank
        self.terms = {t: (np.frombuffer(ids, dtype=np.int64), np.frombuffer(fs, dtype=np.float64))
                      for t, (ids, fs) in post.terms.items()}
        self.shares: dict[str, np.ndarray] = {}
        self.n = n
        self.expiring = np.isin(self.state, [code[st] for st in ("active", "stale") if st in code])
        self.expired_code = code["expired"]
        self.wanted_codes = [code[st] for st in RECALL_DEFAULT_STATES if st in code]

    def recall(self, words) -> tuple[list[str], dict]:
        stems = self.post.stems([w for w, _ in words])
        acc = np.zeros(self.n)
        rows = self.post.rows
        for stem in stems:  # term by term in the query's order, as FTS5 sums phrases
            got = self.terms.get(stem)
            if got is None:
                continue
            ids, f = got
            shares = self.shares.get(stem)
            if shares is None:
                shares = self.shares[stem] = (f * (K1 + 1.0)) / (f + K1 * (1 - B + B * self.dl[ids] / self.post.avgdl))
            idf = np.log((rows - len(ids) + 0.5) / (len(ids) + 0.5))
            idf = idf if idf > 0.0 else 1e-6
            acc[ids] += idf * shares
        matched = acc > 0.0
        live = matched & (self.state != 0)
        effective = np.where(self.expiring & (self.expires <= NOW), self.expired_code, self.state)
        wanted = np.isin(effective, self.wanted_codes)
        included = np.nonzero(live & wanted & self.workspace)[0]
        score = acc[included] * self.prior[included]
        top = included[np.lexsort((self.tie[included], -score))[:CAP]]
        counts: dict = {}
        by = np.bincount(effective[live].astype(np.int64) * 2 + self.workspace[live], minlength=2 * len(self.names))
        for i in np.nonzero(by)[0]:
            counts[(self.names[i // 2], bool(i % 2))] = int(by[i])
        return list(self.ids[top]), counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path)
    ap.add_argument("--notes", type=int, default=74900)
    args = ap.parse_args(argv)
    if np is None:
        print("numpy_trial needs numpy, which memory-custodian does not depend on: pip install numpy", file=sys.stderr)
        return 2
    root = args.root or project(HERE / "out", args.notes)
    index = Index(Ledger(str(root / "docs" / "memory")))
    index.catch_up()
    db = index.db
    notes = dict(db.execute("SELECT rowid, id FROM notes"))
    forgotten = {r for (r,) in db.execute("SELECT rowid FROM notes WHERE state = 'forgotten'")}
    start = time.perf_counter()
    arrays = Arrays(db, Postings(db, notes, forgotten), current_branch(str(root)))
    print(f"{len(notes):,} notes: postings and arrays read in {time.perf_counter() - start:.1f} s")
    same, differ, fast, slow = 0, 0, [], []
    for q in questions():
        words = ranking.match_words(q)
        if not words or any(prefix for _, prefix in words) or arrays.post.stems([w for w, _ in words]) is None:
            continue
        t = time.perf_counter()
        top, counts = arrays.recall(words)
        fast.append((time.perf_counter() - t) * 1000)
        if len(slow) < 12:  # the SQL path for the first questions (it takes 0.3-0.4 s each)
            t = time.perf_counter()
            res = run_recall(index, query=q, limit=10, now=NOW, counts=True, ids=True)
            slow.append((time.perf_counter() - t) * 1000)
            sql_top = [h.note.id for h in res.hits] + list(res.below_ids)
            if res.partial or res.unranked:
                continue  # the SQL path ranked a narrower tier: not the same question
            matched = sum(c for (st, ok), c in counts.items() if ok and st in RECALL_DEFAULT_STATES)
            excluded: dict = {}
            for (st, ok), c in counts.items():
                if not (ok and st in RECALL_DEFAULT_STATES):
                    reason = st if st not in RECALL_DEFAULT_STATES else "other scope"
                    excluded[reason] = excluded.get(reason, 0) + c
            if sql_top == top[:len(sql_top)] and matched == res.matched and excluded == res.excluded_counts:
                same += 1
            else:
                differ += 1
    print(f"{len(fast)} questions: numpy p50 {statistics.median(fast):.1f} ms (max {max(fast):.1f}); "
          f"the SQL path p50 {statistics.median(slow):.1f} ms on the first {len(slow)}")
    print(f"the same ranked ids and counts as the SQL path: {same}; different: {differ}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
