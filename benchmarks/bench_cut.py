"""Recall quality with and without the candidate cut (`ranking.USE_CUT`), on both truth sets.

    python benchmarks/bench_cut.py [--extra 0,7490,74900] [--splits test,train]

For each truth set (software notes, dialogue turns) and each ledger size (the truth set alone, then
with N make_corpus distractor notes appended to its shards), every query of the split runs through
`Memory.recall` (`eval`'s harness) three ways: the broad tier in full on any ledger (no tiers), the
tiers without the cut (what a full recall does), and the tiers with the cut, which only the prompt
hook's recall uses (`ranking.CUT_ACCOUNTING`), forced on here. On the truth set alone the
tiers are forced on (`SMALL`), so the cut's effect shows on the held-out queries too.
Prints recall@10, MRR, nDCG@10 and ms per query; the distractor ledgers are cached under OUT.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "src"))
sys.path.insert(0, str(HERE))

from bench_recall import NOW, SETS, add_distractors, patched  # noqa: E402

from memory_custodian.ledger.recall.evaluate import evaluate  # noqa: E402
from memory_custodian.memory import Memory  # noqa: E402

WAYS = {"broad in full": {"TIER_MIN_NOTES": 10**9, "USE_CUT": False},
        "tiers, no cut": {"USE_CUT": False}, "tiers + cut": {"USE_CUT": True, "CUT_ACCOUNTING": ("matched", "full")}}


# On the truth set alone (about 1,000 notes) the tiers and the cut are forced on at a tenth of their
# thresholds, so that they change something there too.
SMALL = {"TIER_MIN_NOTES": 0, "CANDIDATE_LIMIT": 50, "CUT_MIN": 10}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extra", default="0,7490,74900")
    ap.add_argument("--splits", default="test,train")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{'set':<13} {'notes':>7} {'split':<6} {'way':<15} {'R@10':>6} {'MRR':>6} {'nDCG10':>6} {'ms/q':>6}")
    with tempfile.TemporaryDirectory(prefix="bench-cut-") as tmp:
        for set_name, truth in SETS.items():
            for extra in (int(x) for x in args.extra.split(",")):
                root = Path(tmp) / f"{set_name}-{extra}"
                shutil.copytree(truth / "project", root, ignore=shutil.ignore_patterns(".cache"))
                if extra:
                    add_distractors(root, extra, args.out)
                memory = Memory.open(root)
                notes = len(memory.notes())
                for split in args.splits.split(","):
                    for way, overrides in WAYS.items():
                        forced = dict(overrides) if extra or way == "broad in full" else {**overrides, **SMALL}
                        with patched(forced):
                            rep = evaluate(memory, truth / f"truth-{split}.jsonl", k=10, limit=10, now=NOW)
                        o = rep["overall"]
                        print(f"{set_name:<13} {notes:>7} {split:<6} {way:<15} {o['recall@10']:>6.3f} {o['mrr']:>6.3f} "
                              f"{o['ndcg@10']:>6.3f} {rep['ms_per_query']:>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
