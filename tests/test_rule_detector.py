"""The standing-rule detector behind the prompt hook's nudge, on real sentences.

The labelled sets live in `benchmarks/rules/` (docs/rule-detector.md says where each sentence comes
from). The test splits are frozen: their hashes are pinned here, so no one can tune the detector on
them and quietly edit a label; `benchmarks/bench_rule_detector.py` prints the figures on both splits.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

RULES = Path(__file__).resolve().parents[1] / "benchmarks" / "rules"
FROZEN = {  # sha256 of each held-out file, taken when it was written, before the detector was tuned
    "test.jsonl": "38045c51833b099fce37a985ad7f0d67072353210baf517c63137fd4f58293e9",
    "prompts-test.jsonl": "2c4e10f2977125494d4c0f3ec9772fed2ce35988d56ab79988788d72edcca9d3",
}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (RULES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_held_out_splits_are_frozen():
    for name, digest in FROZEN.items():
        assert hashlib.sha256((RULES / name).read_bytes()).hexdigest() == digest, f"{name} changed"


def test_no_source_is_in_both_splits():
    def repos(name: str) -> set[str]:
        return {row["source"].split(" ")[0].split("#")[0] for row in rows(name)}

    assert not repos("dev.jsonl") & repos("test.jsonl")
    assert not repos("prompts-dev.jsonl") & repos("prompts-test.jsonl") - {"examples"}
    assert all(row["source"] and row["text"] for name in ("dev.jsonl", "test.jsonl") for row in rows(name))
