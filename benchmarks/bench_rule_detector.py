"""Precision and recall of the standing-rule detector on its labelled set of real sentences.

Rules come from public AGENTS.md / CLAUDE.md / contributing guides, non-rules from public issue
threads, this project's commit subjects and ordinary prompts (`benchmarks/rules/labelled.jsonl`,
each line with its source). A false nudge costs the agent a line of reading on a prompt that
stated nothing; a miss costs a rule the next session never hears of.

    .venv/bin/python benchmarks/bench_rule_detector.py [--show]
"""

from __future__ import annotations

import json
import os
import sys

from memory_custodian.session.rule_prompts import standing_rule

LABELLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules", "labelled.jsonl")


def main(argv: list[str]) -> int:
    with open(LABELLED, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    tp = fp = fn = tn = 0
    for row in rows:
        caught = standing_rule(row["text"]) is not None
        if row["rule"]:
            tp, fn = tp + caught, fn + (not caught)
        else:
            fp, tn = fp + caught, tn + (not caught)
        if "--show" in argv and caught != row["rule"]:
            print(("MISS  " if row["rule"] else "FALSE ") + row["text"])
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(f"{len(rows)} sentences: {tp + fn} rules, {fp + tn} not rules")
    print(f"caught {tp} rules, missed {fn}; false nudges {fp} of {fp + tn} ({fp / max(1, fp + tn):.1%})")
    print(f"precision {precision:.2f}  recall {recall:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
