"""The secret detector's figures: caught/total per kind and false alarms/total, and its cost.

Corpora: a generated corpus of every kind the detector knows (`tests/secret_samples.py`, each
credential in three settings: alone, in a sentence, in an indented config line), the older
corpus of `tests/test_attacks_secrets.py`, and ordinary engineering text of both. Cost: the time
a prompt hook pays to scan a typical message, and the import and first-scan time in a fresh process.

    python benchmarks/bench_secrets.py [--per-kind 30]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import secret_samples  # noqa: E402
from test_attacks_secrets import CLEAN_CORPUS, secrets_corpus  # noqa: E402

from memory_custodian.secrets import scan  # noqa: E402


def figures(pairs: list[tuple[str, str]], clean: list[str]) -> dict:
    per_kind: dict[str, list[int]] = {}
    for kind, text in pairs:
        caught = per_kind.setdefault(kind, [0, 0])
        caught[1] += 1
        caught[0] += bool(scan(text))
    alarms = [t for t in clean if scan(t)]
    return {"per_kind": per_kind, "caught": sum(c for c, _ in per_kind.values()),
            "total": sum(t for _, t in per_kind.values()), "alarms": alarms, "clean": len(clean)}


def fresh_process_ms(runs: int) -> list[float]:
    code = ("import time; t=time.perf_counter(); from memory_custodian.secrets import scan; "
            "scan('deploy the refund webhook after the lock is released; see docs/ops.md'); "
            "print((time.perf_counter()-t)*1000)")
    return [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(runs)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-kind", type=int, default=30)
    args = ap.parse_args()
    clean = secret_samples.negatives() + [t for t in CLEAN_CORPUS if t not in secret_samples.negatives()]
    pairs = secret_samples.positives(seed=4242, per_kind=args.per_kind) + secrets_corpus(seed=4242, per_kind=args.per_kind)
    result = figures(pairs, clean)
    print(f"{'kind':<36} caught/total")
    for kind, (caught, total) in sorted(result["per_kind"].items()):
        print(f"{kind:<36} {caught}/{total}" + ("" if caught == total else "   <-- missed"))
    print(f"\nkinds: {len(result['per_kind'])}")
    print(f"caught: {result['caught']}/{result['total']} ({100 * result['caught'] / result['total']:.2f}%)")
    print(f"false alarms on ordinary engineering text: {len(result['alarms'])}/{result['clean']} "
          f"({100 * len(result['alarms']) / result['clean']:.2f}%)")
    for text in result["alarms"]:
        print(f"  false alarm: {text[:70]!r}")
    message = "please fix the flaky test in tests/test_store.py; the lock is released before the rename " * 3
    times = []
    for _ in range(200):
        t = time.perf_counter()
        scan(message)
        times.append((time.perf_counter() - t) * 1e6)
    print(f"\nscan of a {len(message)}-character prompt (warm): median {statistics.median(times):.0f} µs")
    cold = fresh_process_ms(9)
    print(f"fresh process, import + first scan: min {min(cold):.2f} ms, median {statistics.median(cold):.2f} ms")


if __name__ == "__main__":
    main()
