"""Precision and recall of the standing-rule detector on labelled real sentences, and its false nudges
on whole real messages (issue reports with pasted errors and logs, and messages that state a rule
among other sentences, where the nudge must quote exactly the rule's sentence).

Every sentence and message names its source (`benchmarks/rules/*.jsonl`; docs/rule-detector.md).
The data is split by source: `dev` is what the detector was built and tuned on; `test` (its hashes
pinned in tests/test_rule_detector.py) was written before the detector and is only ever measured.

    .venv/bin/python benchmarks/bench_rule_detector.py [--split dev|test|both] [--show]
    .venv/bin/python benchmarks/bench_rule_detector.py --fresh BEFORE_PYTHON AFTER_PYTHON [--runs 25]

`--fresh` times the detector's first call in fresh processes of two trees' interpreters, interleaved,
with `json` and `re` loaded first as they are in the hook: what a prompt pays for it at start-up.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

from memory_custodian.session.rule_prompts import standing_rule

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules")


def _rows(name: str) -> list[dict]:
    with open(os.path.join(HERE, name), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def sentences(split: str, show: bool) -> dict:
    rows = _rows(f"{split}.jsonl")
    tp = fp = fn = 0
    for row in rows:
        caught = standing_rule(row["text"]) is not None
        tp += caught and row["rule"]
        fp += caught and not row["rule"]
        fn += row["rule"] and not caught
        if show and caught != row["rule"]:
            print(("  MISS  " if row["rule"] else "  FALSE ") + row["text"] + f"   [{row['source']}]")
    rules = sum(1 for r in rows if r["rule"])
    return {"sentences": len(rows), "rules": rules, "caught": tp, "false": fp, "missed": fn,
            "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / rules if rules else 1.0}


def messages(split: str, show: bool) -> dict:
    rows = _rows(f"prompts-{split}.jsonl")
    false = wrong_quote = found = 0
    for row in rows:
        quote = standing_rule(row["text"])
        want = row["rule_sentence"]
        if want is None:
            false += quote is not None
            if show and quote is not None:
                print(f"  FALSE NUDGE on a message [{row['source']}]: {quote}")
        elif quote is not None and " ".join(quote.split()) == " ".join(want.split()):
            found += 1
        else:
            wrong_quote += 1
            if show:
                print(f"  RULE MESSAGE [{row['source']}]: quoted {quote!r}, expected {want!r}")
    ordinary = sum(1 for r in rows if r["rule_sentence"] is None)
    return {"messages": len(rows), "ordinary": ordinary, "false_nudges": false,
            "rule_messages": len(rows) - ordinary, "quoted_right": found, "quoted_wrong_or_missed": wrong_quote}


def speed() -> float:
    """Microseconds per sentence over every dev sentence (the hook runs once per prompt)."""
    texts = [r["text"] for r in _rows("dev.jsonl")]
    standing_rule(texts[0])
    start = time.perf_counter()
    for _ in range(5):
        for text in texts:
            standing_rule(text)
    return (time.perf_counter() - start) / (5 * len(texts)) * 1e6


FRESH_CODE = """
import json, re, sys, time
start = time.perf_counter()
from memory_custodian.session.rule_prompts import standing_rule
standing_rule(sys.argv[1])
print((time.perf_counter() - start) * 1000)
"""
FRESH_PROMPTS = {
    "a question": "why is the cache invalidation slow?",
    "a task": "Fix the failing test in tests/test_api.py and rename the config loader.",
    "a stated rule": "Thanks. From now on, run the linter before every commit.",
    "a pasted log": "npm install fails:\n" + "".join(f"npm ERR! {i} timing reify:loadTrees Completed in {i}ms\n"
                                                   for i in range(120))
    + "Traceback (most recent call last):\n  File \"manage.py\", line 22\nKeyError: 'protocol'\n"
    "Can you find out why the install fails on a clean checkout?",
}


def fresh(before: str, after: str, runs: int) -> None:
    """Import and first call of the detector in fresh processes, min and median ms, interleaved."""
    times: dict = {(tree, name): [] for tree in ("before", "after") for name in FRESH_PROMPTS}
    for _ in range(runs):
        for name, prompt in FRESH_PROMPTS.items():
            for tree, python in (("before", before), ("after", after)):
                out = subprocess.run([python, "-c", FRESH_CODE, prompt], capture_output=True, text=True, check=True)
                times[(tree, name)].append(float(out.stdout))
    print(f"import + first call, {runs} fresh processes each (ms, min / median)")
    for name in FRESH_PROMPTS:
        cells = [f"{min(times[(t, name)]):.2f} / {statistics.median(times[(t, name)]):.2f}"
                 for t in ("before", "after")]
        print(f"  {name:<14} before {cells[0]:>14}   after {cells[1]:>14}")


def main(argv: list[str]) -> int:
    if "--fresh" in argv:
        at = argv.index("--fresh")
        fresh(argv[at + 1], argv[at + 2], int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 25)
        return 0
    split = argv[argv.index("--split") + 1] if "--split" in argv else "dev"
    show = "--show" in argv
    for name in (("dev", "test") if split == "both" else (split,)):
        s = sentences(name, show)
        m = messages(name, show)
        print(f"{name}: {s['sentences']} sentences ({s['rules']} rules): caught {s['caught']}, missed {s['missed']}, "
              f"false {s['false']} · precision {s['precision']:.3f} recall {s['recall']:.3f}")
        print(f"{name}: {m['messages']} whole messages: {m['false_nudges']} false nudges on {m['ordinary']} "
              f"ordinary ones; rule quoted exactly in {m['quoted_right']} of {m['rule_messages']}")
    print(f"detector: {speed():.0f} µs a sentence (mean over the dev set)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
