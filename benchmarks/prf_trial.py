"""Pseudo-relevance feedback, measured and not kept: the trial, rerunnable.

RM3-style: the body words of the top R notes a query ranks (not the query's own words, nor stop
words), weighted by term frequency times IDF; the top T of them form a second MATCH whose BM25,
times W, is added to the notes the query itself matched (as the thesaurus's is). Printed: recall@10
on the held-out dev split (multi-hop and open-domain beside it) and the generated train splits, per
setting; `--test R,T,W ...` prints the test splits for the settings named.

    .venv/bin/python benchmarks/prf_trial.py
"""

from __future__ import annotations

import math
import re
import shutil
import sys
import tempfile
from pathlib import Path

from memory_custodian.ledger.recall import ranking, recall_scans
from memory_custodian.ledger.recall.evaluate import evaluate
from memory_custodian.memory import Memory

NOW = "2026-12-01T00:00:00.000Z"
HERE = Path(__file__).resolve().parent
DEV = [("held-out", "heldout", "dev"), ("conversation", "conversation", "train"), ("software", "recall", "train")]
TEST = [("held-out", "heldout", "test"), ("conversation", "conversation", "test"), ("software", "recall", "test")]
GRID = [(3, 5, 0.25), (3, 10, 0.25), (5, 10, 0.25), (3, 10, 0.1), (3, 10, 0.5), (1, 10, 0.25), (5, 20, 0.25)]
WORD = re.compile(r"[a-z]+")
CFG: dict = {"on": False, "R": 3, "T": 10, "W": 0.25}
_df: dict = {}
_index: list = [None]
_expanded, _memory_rows, _sql_rows = recall_scans.expanded, recall_scans.memory_rows, recall_scans.sql_rows


def feedback_words(db, top: list[str], taken: set[str]) -> list[str]:
    tf: dict[str, int] = {}
    for note_id in top:
        (body,) = db.execute("SELECT t.body FROM notes n JOIN note_text t ON t.rowid = n.rowid WHERE n.id = ?",
                             (note_id,)).fetchone()
        for w in WORD.findall(body.lower()):
            if len(w) >= 3 and w not in ranking.QUERY_STOPWORDS and w not in taken:
                tf[w] = tf.get(w, 0) + 1
    n = db.execute("SELECT count(*) FROM notes").fetchone()[0]

    def idf(w: str) -> float:
        if (id(db), w) not in _df:
            sql = "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?"
            _df[(id(db), w)] = db.execute(sql, ('"' + w + '"',)).fetchone()[0]
        df = _df[(id(db), w)]
        return math.log((n - df + 0.5) / (df + 0.5) + 1)
    return sorted(tf, key=lambda w: (-tf[w] * idf(w), w))[:CFG["T"]]


def with_feedback(plan, scan):
    base = _expanded(plan, scan)
    if not CFG["on"] or not plan.ask.text:
        return base

    def scan_feedback(match_expr):
        rows = base(match_expr)
        top = [r[0] for r in sorted(rows, key=lambda r: (-(r[1] or 0.0), r[0]))[:CFG["R"]]]
        taken = {w for w, _ in plan.ask.words} | set(plan.ask.expansion[2] if plan.ask.expansion else ())
        words = feedback_words(_index[0].db, top, taken) if top else []
        if not words:
            return rows
        by_id = {r[0]: r for r in rows}
        for r in scan(" OR ".join('"' + w + '"' for w in words), only=sorted(by_id)):
            own = by_id.get(r[0])
            if own is not None:
                by_id[r[0]] = (r[0], (own[1] or 0.0) + CFG["W"] * (r[1] or 0.0), *own[2:])
        return list(by_id.values())
    return scan_feedback


def _remember_index(rows_of):
    def rows(index, plan):
        _index[0] = index
        return rows_of(index, plan)
    return rows


def main() -> int:
    recall_scans.expanded = with_feedback
    recall_scans.memory_rows, recall_scans.sql_rows = _remember_index(_memory_rows), _remember_index(_sql_rows)
    test = "--test" in sys.argv
    sets = TEST if test else DEV
    grid = [tuple(float(x) for x in a.split(",")) for a in sys.argv[1:] if "," in a] if test else GRID
    tmp = Path(tempfile.mkdtemp(prefix="prf-trial-"))
    mems = {}
    for name, folder, _ in sets:
        shutil.copytree(HERE / folder / "project", tmp / name)
        mems[name] = Memory.open(tmp / name)

    def run(label: str) -> None:
        out = []
        for name, folder, split in sets:
            r = evaluate(mems[name], HERE / folder / f"truth-{split}.jsonl", k=10, limit=10, now=NOW)
            out.append(f"{name}/{split} {r['overall']['recall@10']:.3f}")
            if name == "held-out":
                cats = {c: g["recall@10"] for c, g in r["by_category"].items()}
                out.append(f"multi-hop {cats['multi-hop']:.3f} open-domain {cats['open-domain']:.3f}")
        print(f"{label:<26}", " | ".join(out), flush=True)
    run("lexical (committed)")
    CFG["on"] = True
    for top, words, weight in grid:
        CFG.update(R=int(top), T=int(words), W=weight)
        run(f"feedback R={int(top)} T={int(words)} W={weight}")
    shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
