"""The held-out conversational truth set (benchmarks/heldout/): its test split is frozen, its ledger is its corpus."""

from __future__ import annotations

import hashlib
import json

from conftest import REPO

HELDOUT = REPO / "benchmarks" / "heldout"
# Frozen: no ranking knob is tuned on this split, and it never changes under a ranker change. A new
# question or note goes to a new set; regenerating these files (build.py) must leave them byte-identical.
FROZEN = {
    "truth-test.jsonl": "24d8dac291257c0f448ec4e2944bf07ed3f22390458214f660497944251bbfc6",
    "corpus.jsonl": "222c16afd748ae6a57467798a2a4e2a0f54279a47c1c431166f91d409c72669a",
}


def _rows(name: str) -> list[dict]:
    return [json.loads(x) for x in (HELDOUT / name).read_text(encoding="utf-8").splitlines()]


def test_the_test_split_and_corpus_are_frozen():
    for name, digest in FROZEN.items():
        assert hashlib.sha256((HELDOUT / name).read_bytes()).hexdigest() == digest, f"{name} changed: it is frozen"


def test_splits_hold_different_chats_and_cite_real_turns():
    from memory_custodian.ledger.storage.store import Ledger

    dev, test = _rows("truth-dev.jsonl"), _rows("truth-test.jsonl")
    assert len(dev) >= 75 and len(test) >= 75
    english = {s: {q["pair"] for q in rows if q["category"] != "cjk"} for s, rows in (("dev", dev), ("test", test))}
    assert not english["dev"] & english["test"]
    assert {q["category"] for q in test} == {"single-hop", "multi-hop", "temporal", "open-domain", "cjk"}
    notes = Ledger(HELDOUT / "project" / "docs" / "memory").load().notes
    corpus = {n["id"]: n for n in _rows("corpus.jsonl")}
    assert len(notes) == len(corpus) >= 4000
    for note_id, rec in corpus.items():
        assert (notes[note_id].title, notes[note_id].body) == (rec["title"], rec["body"])
    assert all(r in corpus for q in dev + test for r in q["relevant"])
