"""Recall quality benchmark: ranker variants x truth split, and a PyPI BM25 side by side.

For each variant of the ranking knobs (`ledger/ranking.py`), the truth set's ledger is copied to a
temp dir, indexed, and every query of the train and the test split is run through
`memory.recall` by the `eval` harness. Printed per variant and split: recall@5/10, MRR,
nDCG@10, the misses by stage, and ms per query (a default `recall`, limit 10, in process).
The last row ranks the same notes (those recall would consider: active as of NOW, same filters)
with `rank_bm25.BM25Okapi` from PyPI.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/bench_recall.py              # every variant
    .venv/bin/python benchmarks/bench_recall.py --variant current --json out.json
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRUTH = HERE / "recall"
NOW = "2026-12-01T00:00:00.000Z"
SPLITS = ("train", "test")

from memory_custodian.ledger import ranking  # noqa: E402
from memory_custodian.ledger.evaluate import evaluate, load_truth, ndcg_at, recall_at, reciprocal_rank  # noqa: E402
from memory_custodian.memory import Memory  # noqa: E402

_PLAIN_RE = re.compile(r"[A-Za-z0-9]+")


def _plain_terms(query: str) -> list[str]:
    out: list[str] = []
    for m in _PLAIN_RE.finditer(query or ""):
        t = m.group(0).lower()
        if t not in out:
            out.append(t)
    return out


# Each variant is a set of overrides of `ranking` attributes, applied on top of the committed module.
# They retrace the ranker's history (each kept step was tuned on train and kept only because test
# recall@10 rose), then the steps that were measured and rejected, so each effect can be read off.
INITIAL = {  # the ranker as the ledger issue first shipped it
    "COLUMN_WEIGHTS": {"title": 6.0, "body": 1.0, "tags_text": 4.0, "paths_text": 3.0, "subtokens": 1.5},
    "MATCH_PATHS": False, "USE_SYNONYMS": False,
}
VARIANTS: dict[str, dict] = {
    "fts5-plain": {  # stock FTS5: unicode61, no stemming, no code-aware tokens, equal weights, no priors
        **INITIAL, "FTS_TOKENIZE": "unicode61", "INDEX_SIGNATURE": "bench-plain",
        "subtokens": lambda title, body, tags, paths: "",
        "query_terms": _plain_terms, "STOPWORDS": frozenset(),
        "COLUMN_WEIGHTS": dict.fromkeys(ranking.FTS_COLUMNS, 1.0),
        "PRIORITY_PRIOR": dict.fromkeys(ranking.PRIORITY_PRIOR, 0.0), "KIND_PRIOR": dict.fromkeys(ranking.KIND_PRIOR, 0.0),
    },
    "ledger-initial": INITIAL,
    "+match-paths": {**INITIAL, "MATCH_PATHS": True},
    "+synonyms": {**INITIAL, "MATCH_PATHS": True, "USE_SYNONYMS": True, "SYNONYM_CAP": 0},
    "+column-weights": {"SYNONYM_CAP": 0},
    "current": {},  # + synonym cap 3: the committed ranking.py
    "x task-words": {"USE_TASK_WORDS": True},
    "x prefix>=4": {"PREFIX_MIN": 4},
    "x kind/priority priors": {
        "KIND_PRIOR": {**ranking.KIND_PRIOR, "directive": 0.4, "task": -0.25},
        "PRIORITY_PRIOR": {**ranking.PRIORITY_PRIOR, "high": 0.1},
    },
}


@contextmanager
def patched(overrides: dict):
    saved = {name: getattr(ranking, name) for name in overrides}
    try:
        for name, value in overrides.items():
            setattr(ranking, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(ranking, name, value)


def fresh_memory(workdir: Path, name: str) -> Memory:
    root = workdir / name
    shutil.copytree(TRUTH / "project", root, ignore=shutil.ignore_patterns(".cache"))
    memory = Memory.open(root)
    memory.notes()  # build the index outside the timings
    return memory


def time_recall(memory: Memory, queries: list[dict]) -> float:
    """Median over three passes of the mean ms of a default recall (limit 10), in process."""
    passes = []
    for _ in range(3):
        started = time.perf_counter()
        for q in queries:
            memory.recall(q["query"], kinds=q["kinds"], tags=q["tags"], paths=q["paths"], limit=10, now=NOW)
        passes.append(1000.0 * (time.perf_counter() - started) / len(queries))
    return statistics.median(passes)


def run_variant(name: str, overrides: dict, workdir: Path) -> list[dict]:
    rows = []
    with patched(overrides):
        memory = fresh_memory(workdir, name)
        for split in SPLITS:
            path = TRUTH / f"truth-{split}.jsonl"
            report = evaluate(memory, path, k=10, limit=10, now=NOW)
            o = report["overall"]
            rows.append({"variant": name, "split": split, "recall@5": o["recall@5"], "recall@10": o["recall@10"],
                         "mrr": o["mrr"], "ndcg@10": o["ndcg@10"], "miss_rate": o["miss_rate"],
                         "misses": report["miss_classes"], "ms": time_recall(memory, load_truth(path)),
                         "by_category": {c: g["recall@10"] for c, g in report.get("by_category", {}).items()}})
    return rows


def run_rank_bm25(workdir: Path) -> list[dict]:
    try:
        import numpy
        from rank_bm25 import BM25Okapi
    except ImportError:
        print("rank-bm25 is not installed: pip install -e '.[bench]' to print the side-by-side row", file=sys.stderr)
        return []
    from memory_custodian.ledger.paths import any_match

    memory = fresh_memory(workdir, "rank-bm25")
    notes = [n for n in memory.notes() if n.state_at(NOW) == "active" and n.scope == "workspace"]
    docs = [_plain_terms(" ".join([n.title, n.body, *n.tags, *n.paths])) for n in notes]
    bm25 = BM25Okapi(docs)
    def keep(i, q):
        n = notes[i]
        return ((not q["kinds"] or n.kind in q["kinds"]) and (not q["tags"] or set(q["tags"]) & set(n.tags))
                and (not q["paths"] or any_match(n.paths, q["paths"])))

    def top10(q):
        """What a default recall returns: the top 10 that pass the filters (this is what is timed)."""
        scores = bm25.get_scores(_plain_terms(q["query"] or ""))
        top = []
        for i in numpy.argsort(-scores, kind="stable"):
            if scores[i] <= 0 or len(top) == 10:
                break
            if keep(i, q):
                top.append(notes[i].id)
        return top, scores

    rows = []
    for split in SPLITS:
        queries = load_truth(TRUTH / f"truth-{split}.jsonl")
        per, classes = [], {}
        passes = []
        for _ in range(3):
            started = time.perf_counter()
            for q in queries:
                top10(q)
            passes.append(1000.0 * (time.perf_counter() - started) / len(queries))
        for q in queries:
            _, scores = top10(q)
            order = numpy.argsort(-scores, kind="stable")
            ranked = [notes[i].id for i in order if scores[i] > 0 and keep(i, q)]
            rel = q["relevant"]
            per.append((recall_at(ranked, rel, 5), recall_at(ranked, rel, 10), reciprocal_rank(ranked[:20], rel),
                        ndcg_at(ranked, rel, 10)))
            for r in rel:
                if r not in ranked[:10]:
                    c = "below_cutoff" if r in ranked else "unmatched"
                    classes[c] = classes.get(c, 0) + 1
        n = len(per)
        pairs = sum(len(q["relevant"]) for q in queries)
        rows.append({"variant": "rank-bm25 (PyPI)", "split": split,
                     "recall@5": round(sum(p[0] for p in per) / n, 4), "recall@10": round(sum(p[1] for p in per) / n, 4),
                     "mrr": round(sum(p[2] for p in per) / n, 4), "ndcg@10": round(sum(p[3] for p in per) / n, 4),
                     "miss_rate": round(sum(classes.values()) / pairs, 4), "misses": dict(sorted(classes.items())),
                     "ms": statistics.median(passes), "by_category": {}})
    return rows


def fmt_misses(m: dict) -> str:
    short = {"below_cutoff": "below", "unmatched": "unmatched"}
    return ", ".join(f"{n} {short.get(c, c)}" for c, n in sorted(m.items())) or "-"


def print_table(rows: list[dict]) -> None:
    head = f"{'variant':<22} {'split':<6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'nDCG10':>6} {'ms/q':>6}  misses at limit 10"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['variant']:<22} {r['split']:<6} {r['recall@5']:>6.3f} {r['recall@10']:>6.3f} {r['mrr']:>6.3f} "
              f"{r['ndcg@10']:>6.3f} {r['ms']:>6.2f}  {fmt_misses(r['misses'])}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", action="append", choices=list(VARIANTS), help="only these variants (repeatable)")
    ap.add_argument("--no-pypi", action="store_true", help="skip the rank-bm25 row")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    ap.add_argument("--categories", action="store_true", help="also print recall@10 per query category")
    args = ap.parse_args(argv)
    names = args.variant or list(VARIANTS)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        for name in names:
            rows.extend(run_variant(name, VARIANTS[name], Path(tmp)))
        if not args.no_pypi:
            rows.extend(run_rank_bm25(Path(tmp)))
    notes = sum(1 for _ in (TRUTH / "corpus.jsonl").open())
    queries = {s: sum(1 for _ in (TRUTH / f"truth-{s}.jsonl").open()) for s in SPLITS}
    print(f"truth set: {notes} notes, {queries['train']} train + {queries['test']} test queries, as of {NOW}")
    print_table(rows)
    if args.categories:
        cats = sorted({c for r in rows for c in r["by_category"]})
        print("\nrecall@10 by category:")
        print(f"{'variant':<22} {'split':<6} " + " ".join(f"{c[:10]:>10}" for c in cats))
        for r in rows:
            if r["by_category"]:
                print(f"{r['variant']:<22} {r['split']:<6} " + " ".join(f"{r['by_category'].get(c, 0):>10.3f}" for c in cats))
    ours = {r["split"]: r for r in rows if r["variant"] == "current"}
    theirs = {r["split"]: r for r in rows if r["variant"].startswith("rank-bm25")}
    for split in SPLITS:
        if split in ours and split in theirs:
            a, b = ours[split], theirs[split]
            print(f"{split}: ours recall@10 {a['recall@10']:.3f} vs rank-bm25 {b['recall@10']:.3f} "
                  f"({'>=' if a['recall@10'] >= b['recall@10'] else '<'}); {a['ms']:.2f} vs {b['ms']:.2f} ms/query "
                  f"({'faster' if a['ms'] < b['ms'] else 'slower'})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0

if __name__ == "__main__":
    sys.exit(main())
