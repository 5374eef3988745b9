"""How much of a broad question's matches an exact top-k (MaxScore) would still have to score, at 74,900 notes.

    python benchmarks/bench_prune.py [--root DIR] [--notes 74900]

Issue 26 asks for ranking whose work the top k bounds, with recall quality unchanged. The exact way
is MaxScore: with each term's upper bound (its IDF times its largest share of a note's BM25, read
from the postings in memory), the terms whose bounds sum below the k-th best score cannot put a note
into the top k alone, so only the notes holding another term ("essential") need a score. This prints,
per question, how many notes it matches, the k-th best score (k = 10, and 510: a full recall also
lists 500 ids below the cutoff) and how many notes hold an essential term: the notes MaxScore must
still score, and so what it saves.

The bound used is the most favourable to MaxScore: the k-th best score over every match (not only
the notes in the states asked for, whose k-th score is lower) and the priors' largest factor (1.5).
The questions: the two `bench_scale.py` times, and the test splits of the software and held-out
truth sets (their words, asked of the generated ledger). The project is `bench_scale.py`'s cached
`benchmarks/out/scale-N` (built if missing) unless --root names one.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "src"))
sys.path.insert(0, str(HERE))

from bench_scale import PROMPT, QUESTION, project  # noqa: E402

from memory_custodian.ledger.recall import ranking  # noqa: E402
from memory_custodian.ledger.recall.postings import Postings  # noqa: E402

PRIOR_MAX = 1.5  # 1 + the largest priority prior + the largest kind prior (ranking.py)
KS = (10, 510)


def questions() -> list[str]:
    out = [QUESTION, PROMPT]
    for truth in (HERE / "recall" / "truth-test.jsonl", HERE / "heldout" / "truth-test.jsonl"):
        out += [json.loads(line)["query"] for line in truth.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def prune(post: Postings, priors: dict, query: str) -> dict | None:
    words = ranking.match_words(query)
    stems = post.stems([w for w, _ in words]) if words else None
    if not stems:
        return None
    scores = post.scores(words)
    if not scores:
        return None
    final = sorted((bm25 * priors[r] for r, bm25 in scores.items()), reverse=True)
    bounds = []
    n = post.rows
    for stem in dict.fromkeys(stems):
        ids, shares = post._shares_of(stem) if stem in post.terms else ((), ())
        idf = math.log((n - len(ids) + 0.5) / (len(ids) + 0.5))
        idf = idf if idf > 0.0 else 1e-6
        bounds.append((idf * max(shares) * stems.count(stem) if len(ids) else 0.0, stem))
    bounds.sort()
    row = {"matched": len(scores)}
    for k in KS:
        theta = final[k - 1] if len(final) >= k else 0.0
        total, essential = 0.0, []
        for i, (bound, _stem) in enumerate(bounds):
            if (total + bound) * PRIOR_MAX >= theta:
                essential = [s for _, s in bounds[i:]]
                break
            total += bound
        held: set[int] = set()
        for stem in essential:
            if stem in post.terms:
                held.update(post.terms[stem][0])
        row[k] = len(held)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help="a project with an indexed ledger (default: bench_scale's)")
    parser.add_argument("--notes", type=int, default=74900)
    args = parser.parse_args(argv)
    root = args.root or project(HERE / "out", args.notes)
    db = sqlite3.connect(root / "docs" / "memory" / ".cache" / "index.sqlite")
    rows = db.execute("SELECT rowid, id, state, priority, kind FROM notes").fetchall()
    start = time.perf_counter()
    post = Postings(db, {r[0]: r[1] for r in rows}, {r[0] for r in rows if r[2] == "forgotten"})
    built = time.perf_counter() - start
    priors = {r[0]: ranking.prior(r[3], r[4]) for r in rows}
    found = [(q, prune(post, priors, q)) for q in questions()]
    found = [(q, r) for q, r in found if r]
    print(f"{len(rows):,} notes; postings read in {built:.1f} s; {len(found)} questions that match something\n")
    for q, r in found[:2]:
        print(f"{q[:70]!r}: matches {r['matched']:,}; MaxScore scores {r[10]:,} (k=10), {r[510]:,} (k=510)")
    for k in KS:
        share = [r[k] / r["matched"] for _, r in found]
        small = sum(1 for _, r in found if r[k] <= 5000)
        print(f"k={k}: notes MaxScore scores / notes matched, median {statistics.median(share):.2f}, "
              f"90th pct {sorted(share)[int(0.9 * (len(share) - 1))]:.2f}; questions left with at most 5,000 to score: "
              f"{small} of {len(found)}")
    print(f"matched per question: median {statistics.median(r['matched'] for _, r in found):,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
