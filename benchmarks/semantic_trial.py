"""Why recall has no semantic channel: the trial that removed the `semantic` extra, rerunnable.

For each question, the committed lexical ranker (`Memory.recall`, 100 deep) and a static-embedding
ranking (wordllama's l2_supercat 256-dimension model, MIT, weights inside its wheel: cosine of the
query's vector with each note's) are fused the ways the literature supports, and recall@10 printed
for each: reciprocal-rank fusion (k = 60, and k = 5 as the removed extra shipped; the semantic side
at weight 1 and 0.5), min-max score normalisation (convex mixes 0.3 and 0.5), the semantic ranking
only where lexical found fewer than 10 notes, and the semantic channel's top 3 after lexical's top 7.
Unfiltered questions only (filters apply to both channels alike). Then what any such channel costs a
fresh `recall`: a process that loads the model and embeds one query, against a fresh lexical recall.

Keeping a channel needs, on held-out data, +5 points of recall@10 and a fresh recall within twice the
lexical one (docs/recall-benchmarks.md, decision in docs/memory).

    .venv/bin/pip install 'wordllama>=0.4,<0.5'     # the trial only: no extra of the package
    .venv/bin/python benchmarks/semantic_trial.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOW = "2026-12-01T00:00:00.000Z"
SETS = {"held-out/dev": (HERE / "heldout", "dev"), "held-out/test": (HERE / "heldout", "test"),
        "conversation/test": (HERE / "conversation", "test"), "software/test": (HERE / "recall", "test")}
LOAD = ("import os, wordllama; from wordllama import WordLlama; m = WordLlama.load(cache_dir=os.path.dirname("
        "wordllama.__file__), disable_download=True); m.embed(['Is Tom a natural runner?'], norm=True)")


def encoder():
    import numpy
    import wordllama
    from wordllama import WordLlama

    model = WordLlama.load(cache_dir=os.path.dirname(wordllama.__file__), disable_download=True)

    def embed(texts: list[str]):
        return numpy.vstack([model.embed(texts[i:i + 512], norm=True) for i in range(0, len(texts), 512)])
    return embed


def rrf(lex: list[str], sem: list[str], k: int, weight: float = 1.0) -> list[str]:
    s: dict[str, float] = {}
    for i, n in enumerate(lex, 1):
        s[n] = s.get(n, 0.0) + 1.0 / (k + i)
    for i, n in enumerate(sem, 1):
        s[n] = s.get(n, 0.0) + weight / (k + i)
    return sorted(s, key=lambda n: (-s[n], n))


def minmax(lex: dict[str, float], sem: dict[str, float], w: float) -> list[str]:
    def norm(d: dict[str, float]) -> dict[str, float]:
        lo, hi = (min(d.values()), max(d.values())) if d else (0.0, 0.0)
        return {k: (x - lo) / (hi - lo or 1.0) for k, x in d.items()}
    a, b = norm(lex), norm(sem)
    s = {n: (1 - w) * a.get(n, 0.0) + w * b.get(n, 0.0) for n in set(a) | set(b)}
    return sorted(s, key=lambda n: (-s[n], n))


def fusions(lex, lex_scores, sem, sem_scores) -> dict[str, list[str]]:
    return {"lexical": lex, "semantic alone": sem, "rrf k=60": rrf(lex, sem, 60), "rrf k=5 (shipped)": rrf(lex, sem, 5),
            "rrf k=5, semantic 0.5": rrf(lex, sem, 5, 0.5), "min-max 0.3": minmax(lex_scores, sem_scores, 0.3),
            "min-max 0.5": minmax(lex_scores, sem_scores, 0.5),
            "semantic for misses": lex + [n for n in sem if n not in lex] if len(lex) < 10 else lex,
            "lexical 7 + semantic 3": lex[:7] + [n for n in sem if n not in lex[:7]][:3]}


def trial(embed, label: str, folder: Path, split: str, tmp: Path) -> dict[str, float]:
    import numpy

    from memory_custodian.ledger.recall.evaluate import load_truth, recall_at
    from memory_custodian.memory import Memory

    root = tmp / label.replace("/", "-")
    shutil.copytree(folder / "project", root, ignore=shutil.ignore_patterns(".cache"))
    memory = Memory.open(root)
    notes = [n for n in memory.notes() if n.state_at(NOW) == "active" and n.scope == "workspace"]
    ids = [n.id for n in notes]
    mat = embed(["\n".join(x for x in (n.title, n.body, " ".join(n.tags), " ".join(n.paths)) if x) for n in notes])
    queries = [q for q in load_truth(folder / f"truth-{split}.jsonl") if not (q["kinds"] or q["tags"] or q["paths"])]
    vectors = embed([q["query"] for q in queries])
    got: dict[str, list[float]] = {}
    for q, v in zip(queries, vectors, strict=True):
        hits = memory.recall(q["query"], limit=100, now=NOW).hits
        sims = mat @ v
        top = numpy.argsort(-sims, kind="stable")[:100].tolist()
        ranked = fusions([h.note.id for h in hits], {h.note.id: h.score for h in hits},
                         [ids[i] for i in top], {ids[i]: float(sims[i]) for i in top})
        for name, order in ranked.items():
            got.setdefault(name, []).append(recall_at(order, q["relevant"], 10))
    print(f"{label}: {len(queries)} unfiltered questions, {len(notes)} notes")
    return {name: statistics.mean(v) for name, v in got.items()}


def fresh_ms(rounds: int = 7) -> tuple[float, float]:
    """Median ms of a fresh lexical `recall` and of a fresh process that loads the model and embeds a query."""
    exe = Path(sys.executable).with_name("memory-custodian")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "p"
        shutil.copytree(HERE / "heldout" / "project", root)
        warm = [str(exe), "recall", "warm", "--project-root", str(root)]
        subprocess.run(warm, stdout=subprocess.DEVNULL, check=True)
        lex, sem = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            subprocess.run([str(exe), "recall", "Is Tom a natural runner?", "--project-root", str(root)],
                           stdout=subprocess.DEVNULL, check=True)
            lex.append(1000 * (time.perf_counter() - started))
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", LOAD], check=True, capture_output=True)
            sem.append(1000 * (time.perf_counter() - started))
    return statistics.median(lex), statistics.median(sem)


def main() -> int:
    try:
        embed = encoder()
    except ImportError:
        print("wordllama is not installed: .venv/bin/pip install 'wordllama>=0.4,<0.5'", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="semantic-trial-") as tmp:
        results = {label: trial(embed, label, folder, split, Path(tmp)) for label, (folder, split) in SETS.items()}
    labels = list(results)
    print(f"\n{'recall@10 (points vs lexical)':<26}" + "".join(f"{lb:>22}" for lb in labels))
    for name in results[labels[0]]:
        got = [(results[lb][name], results[lb]["lexical"]) for lb in labels]
        cells = [f"{r:.3f} ({100 * (r - base):+.1f})" for r, base in got]
        print(f"{name:<26}" + "".join(f"{c:>22}" for c in cells))
    lex, sem = fresh_ms()
    print(f"\nfresh process, median of 7: lexical recall {lex:.0f} ms; loading the model and embedding one query "
          f"{sem:.0f} ms ({sem / lex:.1f}x the whole lexical recall, before any note is ranked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
