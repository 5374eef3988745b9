"""What the optional semantic channel (`ledger/semantic.py`, the `semantic` extra) costs.

Printed: the install size of the extra (the packages it adds, measured on disk), the import and
model-load time in a fresh process, the time to embed and store the vectors per 1,000 notes (at
1,062 and 8,541 notes: the software truth set, then with 7,490 make_corpus distractors), and the
query latency of `Memory.recall` with and without the channel, timed in interleaved passes (min
of 5) over the software test queries. Recall figures are `bench_recall.py`'s.

    .venv/bin/pip install -e '.[semantic,bench]'
    .venv/bin/python benchmarks/bench_semantic.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_recall as B  # noqa: E402

from memory_custodian.ledger.recall import semantic  # noqa: E402
from memory_custodian.memory import Memory  # noqa: E402

# what `pip install 'memory-custodian[semantic]'` adds to a plain install (wordllama and what it pulls in)
EXTRA_PACKAGES = ("wordllama", "numpy", "numpy.libs", "tokenizers", "safetensors", "pydantic", "pydantic_core",
                  "toml")


def install_size_mb() -> float:
    import numpy

    site = os.path.dirname(os.path.dirname(numpy.__file__))
    total = 0
    for name in EXTRA_PACKAGES:
        for root, _, files in os.walk(os.path.join(site, name)):
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total / 1e6


def fresh_load_s() -> tuple[float, float]:
    """(import, import + model load) seconds in a fresh process, best of 3."""
    code = ("import time; t=time.perf_counter(); import wordllama; i=time.perf_counter()-t; "
            "from memory_custodian.ledger.recall import semantic; semantic.encoder(); print(i, time.perf_counter()-t)")
    best = None
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
        pair = (float(out[0]), float(out[1]))
        best = pair if best is None or pair[1] < best[1] else best
    return best


def index_cost(root: Path) -> tuple[int, float]:
    """(notes embedded, ms per 1,000 notes) for a cold vector table (the model already loaded)."""
    import sqlite3

    db = sqlite3.connect(root / "docs" / "memory" / ".cache" / "index.sqlite", isolation_level=None)
    try:
        db.execute("DELETE FROM note_vectors")
        started = time.perf_counter()
        done = semantic.sync(db)["embedded"]
        return done, (time.perf_counter() - started) * 1000.0 / max(done, 1) * 1000.0
    finally:
        db.close()


def latency(memory: Memory, queries: list[dict], rounds: int = 5) -> tuple[float, float]:
    """(lexical, fused) ms per query, interleaved passes, min of `rounds`."""
    out = {"0": [], "1": []}
    for _ in range(rounds):
        for flag in ("0", "1"):
            os.environ[semantic.ENV] = flag
            started = time.perf_counter()
            for q in queries:
                memory.recall(q["query"], kinds=q["kinds"], tags=q["tags"], paths=q["paths"], limit=10, now=B.NOW)
            out[flag].append(1000.0 * (time.perf_counter() - started) / len(queries))
    return min(out["0"]), min(out["1"])


def main() -> int:
    if not semantic.installed():
        print("the semantic extra is not installed: pip install -e '.[semantic]'", file=sys.stderr)
        return 2
    imp, load = fresh_load_s()
    print(f"install: {install_size_mb():.0f} MB on disk for the packages the extra adds ({', '.join(EXTRA_PACKAGES)})")
    print(f"fresh process: import wordllama {1000 * imp:.0f} ms, import + model load {1000 * load:.0f} ms "
          f"(a hook's budget is 120 ms: the channel serves recall, the MCP server and eval only)")
    queries = B.load_truth(B.TRUTH / "truth-test.jsonl")
    with tempfile.TemporaryDirectory(prefix="bench-semantic-") as tmp:
        for extra in (0, 7490):
            root = Path(tmp) / f"p{extra}"
            shutil.copytree(B.TRUTH / "project", root, ignore=shutil.ignore_patterns(".cache"))
            if extra:
                B.add_distractors(root, extra, Path(tmp))
            memory = Memory.open(root)
            count = len(memory.notes())
            os.environ[semantic.ENV] = "1"
            memory.recall("warm up the model and the vectors", now=B.NOW)
            done, per_k = index_cost(root)
            memory.recall("warm up again", now=B.NOW)
            lex, fused = latency(memory, queries)
            print(f"{count:,} notes: vectors {per_k:.0f} ms per 1,000 notes ({done:,} embedded and stored); "
                  f"recall {lex:.2f} ms/query lexical, {fused:.2f} ms/query fused (+{fused - lex:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
