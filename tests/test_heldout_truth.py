"""The held-out truth sets (benchmarks/heldout/, benchmarks/history/): test splits frozen, each ledger its corpus."""

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


HISTORY = REPO / "benchmarks" / "history"
HISTORY_FROZEN = {
    "truth-test.jsonl": "52c2cc9c08dde03e1d0113bae60ac4a056b05fca817189c1109436d527d64912",
    "corpus.jsonl": "1d175f98eb5c4a8bd4901bc1ec8164a5a2a7364b56f17f2a10afce319cfb9d29",
}


def _rows(name: str) -> list[dict]:
    return [json.loads(x) for x in (HELDOUT / name).read_text(encoding="utf-8").splitlines()]


def test_the_test_split_and_corpus_are_frozen():
    for folder, frozen in ((HELDOUT, FROZEN), (HISTORY, HISTORY_FROZEN)):
        for name, digest in frozen.items():
            assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, f"{folder.name}/{name} is frozen"


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
