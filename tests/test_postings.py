"""The in-memory postings (ledger/postings.py) must score exactly as FTS5's bm25() does, and a warm
recall (metadata and postings in memory) must return exactly what the SQL path returns."""

from __future__ import annotations

import random

from memory_custodian import Memory
from memory_custodian.ledger.recall import context, ranking, recall_scans
from memory_custodian.ledger.recall import postings as postings_mod
from memory_custodian.ledger.recall import recall as recall_mod
from memory_custodian.ledger.recall.postings import Postings

WORDS = ["lock", "daemon", "cache", "retry", "budget", "queue", "parseConfig", "release_lock", "timeout", "timeouts",
         "crash", "error", "session", "login", "tenant", "invoice", "rounding", "café", "naïve", "Übergröße", "résumé",
         "src/api/handler.py", "worker", "deploy", "the", "a", "of", "to", "in", "is", "it", "and"]


def _ledger(mem, n=90, seed=11):
    rnd = random.Random(seed)
    made = []
    for i in range(n):
        body = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 40)))
        made.append(mem.remember(
            f"{rnd.choice(WORDS)} {rnd.choice(WORDS)} note {i}\n{body}",
            kind=rnd.choice(["gotcha", "finding", "task", "directive", "decision"]),
            priority=rnd.choice(["high", "medium", "low"]), tags=rnd.sample(["a", "b", "c"], rnd.randint(0, 2)),
            paths=rnd.sample(["src/api/**", "src/api/handler.py", "docs/*.md", "web/src/i18n/index.ts"],
                             rnd.randint(0, 2))))
    for note in made[::9]:
        mem.revoke(note.id, reason="x")
    for note in made[4::9]:
        mem.flag_stale(note.id, reason="x")
    mem.supersede(made[5].id, "retry budget raised to seven", reason="changed")
    mem.forget_note(made[7].id)  # hard delete: its text leaves the FTS table
    return made


QUERIES = ["lock", "retry budget", "cache crash timeouts", "café naive", "Übergröße", "parseConfig release lock",
           "handler.py", "the of", "session login tenant invoice rounding worker deploy", "nothing-here-xyz",
           "RESUME", "queue", "error", "deploy the worker to production"]


def _postings(mem):
    index = mem.index()
    rows = index.db.execute("SELECT rowid, id, state FROM notes").fetchall()
    return Postings(index.db, {r: i for r, i, _ in rows}, {r for r, _, st in rows if st == "forgotten"})


def _fts(db, match):
    weights = ", ".join(repr(w) for w in ranking.bm25_weights())
    return {r: -b for r, b in db.execute(
        f"SELECT rowid, bm25(notes_fts, {weights}) FROM notes_fts WHERE notes_fts MATCH ?", (match,))}


def test_scores_equal_fts5_bm25_to_the_last_bit(mem):
    _ledger(mem)
    db = mem.index().db
    post = _postings(mem)
    checked = 0
    for q in QUERIES:
        mine = post.scores(ranking.match_words(q))
        assert mine is not None, q
        assert mine == _fts(db, ranking.build_match(q)), q  # exact float equality, every matching note
        checked += bool(mine)
    assert checked >= 10


def test_a_term_listed_in_two_runs_is_merged_not_split(mem):
    _ledger(mem, n=10)
    post = _postings(mem)
    post._flush("zz", {1: 3.0, 2: 1.0})
    post._flush("zz", {2: 4.0, 3: 1.0})
    assert dict(zip(*post.terms["zz"])) == {1: 3.0, 2: 5.0, 3: 1.0}


def test_words_that_are_not_one_token_and_prefixes_fall_back_to_fts5(mem, monkeypatch):
    _ledger(mem, n=10)
    post = _postings(mem)
    assert post.stems(["lock", "two words"]) is None and post.stems(["...", "lock"]) is None
    assert post.stems(["Locks", "café"]) == ["lock", "cafe"]
    assert post.scores(ranking.match_words("retry 東京")) is None  # a word of a script without spaces is a prefix


def test_warm_recall_equals_the_sql_path_with_every_filter(mem, monkeypatch):
    # the SQL path past SINGLE_PASS_MAX ranks without the neighbours in time (`context.py`): compare the rest
    monkeypatch.setattr(context, "USE_CONTEXT", False)
    made = _ledger(mem)
    calls = [dict(query=q) for q in QUERIES] + [
        dict(query="lock retry", kinds=["gotcha", "task"]), dict(query="cache", tags=["a"]),
        dict(query="handler crash", paths=["src/api/handler.py"]), dict(query="lock", paths=["docs/readme.md"]),
        dict(query="retry", states=["revoked", "stale"]), dict(query="budget", include_all=True, limit=3),
        dict(query="error cache", limit=0), dict(query="lock", tags=["b"], kinds=["finding"], limit=2),
    ]

    def run_all(warm: bool):
        out = []
        for call in calls:
            if warm:
                mem.recall(**call)  # the first ask never loads the metadata; the second begins reading it
                mem.recall(**call)
                mem.index().warm(wait=True)
            out.append(mem.recall(**call).to_dict())
        index = mem.index()
        out.append(recall_mod.run_recall(index, query="lock crash", near_paths=("src/api/handler.py",),
                                         exclude_ids=(made[1].id, made[2].id), ids=False, now="2030-01-01").to_dict())
        out.append(recall_mod.run_recall(index, query="lock crash", near_paths=("src/api/handler.py",),
                                         exclude_ids=(made[1].id, made[2].id), ids=False, now="2030-01-01").to_dict())
        return out

    warm = run_all(True)
    assert mem.index().postings() is not None  # the warm path really ran from memory
    monkeypatch.setattr(recall_scans, "SINGLE_PASS_MAX", -1)  # the SQL path
    assert run_all(False) == warm


def _warm(mem):
    mem.recall("lock")
    mem.recall("lock")  # begins reading the metadata and postings in the background
    mem.index().warm(wait=True)
    return mem.index().postings()


def test_postings_catch_up_with_added_notes_and_rebuild_after_a_forget(mem):
    made = _ledger(mem, n=40)
    first = _warm(mem)
    mem.remember("zanzibar quokka lock café", tags=["new"])
    mem.remember("a note with the word budget budget budget", paths=["src/new/**"])
    mem.revoke(made[3].id, reason="state changes keep the text")
    again = _warm(mem)
    assert again is first  # caught up, not read anew
    db = mem.index().db
    for q in QUERIES + ["zanzibar quokka", "budget"]:
        assert again.scores(ranking.match_words(q)) == _fts(db, ranking.build_match(q)), q
    mem.forget_note(made[6].id)
    db = mem.index().db  # a hard delete drops the index file: its free pages kept the text
    rebuilt = _warm(mem)
    assert rebuilt is not first
    for q in QUERIES:
        assert rebuilt.scores(ranking.match_words(q)) == _fts(db, ranking.build_match(q)), q


def test_a_forget_that_keeps_every_rowid_still_rebuilds_the_postings(mem):
    """A forgotten note keeps its rowid, its text stripped: the postings must not keep its words."""
    for text in ("lock one zebra", "lock two", "lock three zebra"):
        mem.remember(text)
    first = _warm(mem)
    db = mem.index().db
    last = db.execute("SELECT id FROM notes ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    before = dict(db.execute("SELECT rowid, id FROM notes"))
    mem.forget_note(last)
    rebuilt = _warm(mem)
    db = mem.index().db
    assert dict(db.execute("SELECT rowid, id FROM notes")) == before  # same rowids: only its state says
    assert rebuilt is not first
    for q in ("zebra", "lock", "one two three"):
        assert rebuilt.scores(ranking.match_words(q)) == _fts(db, ranking.build_match(q)), q


def test_warm_recall_equals_the_sql_path_on_tiered_big_ledger_queries(mem, monkeypatch):
    """Past TIER_MIN_NOTES a broad query ranks a narrower tier; from memory it must rank, count and
    fall back exactly as the SQL path does (the tiers are forced small here)."""
    monkeypatch.setattr(context, "USE_CONTEXT", False)
    made = _ledger(mem, n=90)
    monkeypatch.setattr(ranking, "TIER_MIN_NOTES", 0)
    monkeypatch.setattr(ranking, "CANDIDATE_LIMIT", 8)
    monkeypatch.setattr(ranking, "FILTERED_CANDIDATE_LIMIT", 12)
    calls = [dict(query="lock retry budget"), dict(query="cache crash", limit=3), dict(query="lock", limit=40),
             dict(query="release_lock", kinds=["gotcha", "finding"]), dict(query="session login", tags=["a"]),
             dict(query="parseConfig deploy worker", include_all=True), dict(query="timeouts error", states=["revoked"])]

    def run_all(warm: bool):
        out = []
        for call in calls:
            if warm:
                mem.recall(**call)
                mem.recall(**call)
                mem.index().warm(wait=True)
            out.append(mem.recall(**call).to_dict())
        return out

    warm = run_all(True)
    assert mem.index().note_meta() is not None and any(r["partial"] for r in warm)  # tiers were used
    monkeypatch.setattr(recall_scans, "SINGLE_PASS_MAX", -1)
    assert run_all(False) == warm
    assert made


def test_postings_follow_writes_and_stay_off_on_big_ledgers(mem, monkeypatch):
    _ledger(mem, n=20)
    mem.recall("lock")
    mem.recall("lock")
    index = mem.index()
    index.warm(wait=True)
    assert index.postings() is not None
    new = mem.remember("zanzibar lock held")
    res = mem.recall("zanzibar")
    index.warm(wait=True)  # a caller that asked before asks again at once after a write
    res = mem.recall("zanzibar")
    assert [h.note.id for h in res.hits] == [new.id] and index.postings() is not None
    monkeypatch.setattr(postings_mod, "WARM_MAX", 5)
    mem.remember("another write resets the caches")
    mem.recall("lock")
    index.warm(wait=True)
    mem.recall("lock")
    assert index.note_meta() is not None and index.postings() is None


def test_postings_follow_a_reindex_by_another_process(mem, tmp_path):
    """Another connection's rebuild renumbers rowids (oldest note first, where a catch-up numbered a
    note merged in with an older time after the others): the postings must notice, not score the
    wrong notes."""
    import json
    import random

    rnd = random.Random(3)
    for i in range(40):
        mem.remember(" ".join(rnd.sample(WORDS, 6)) + f" note {i}")
        mem.index()  # caught up one note at a time: rowids follow creation
    (shard,) = (mem.memory_dir / "ledger").glob("*.jsonl")
    seed = json.loads(shard.read_text(encoding="utf-8").splitlines()[0])
    older = dict(seed, at="2020-01-01T00:00:00.000Z", id="01E0000000000000000000000A", txn="01E0000000000000000000000B",
                 note="aaaaaaaa", body="a teammate's older note, merged in", title="older note")
    with open(shard, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(older, sort_keys=True, separators=(",", ":")) + "\n")
    mem.index()  # read after the others: the highest rowid, though it is the oldest note
    first = _warm(mem)
    before = dict(mem.index().db.execute("SELECT rowid, id FROM notes"))
    other = Memory.open(tmp_path)
    other.reindex()
    other.remember("quokka lock written after the reindex")
    assert dict(mem.index().db.execute("SELECT rowid, id FROM notes WHERE rowid <= 40")) != before  # renumbered
    again = _warm(mem)
    assert again is not first
    db = mem.index().db
    for q in QUERIES + ["quokka"]:
        assert again.scores(ranking.match_words(q)) == _fts(db, ranking.build_match(q)), q


def test_no_call_reads_the_postings_itself(mem, monkeypatch):
    """What fast recall keeps in memory is read on a thread of its own: the call that asks for it
    answers from SQL meanwhile, with the same result (an MCP client's first `memory_context` after
    a `memory_recall` waited 742 ms for it at 7,490 notes)."""
    import threading

    _ledger(mem, n=20)
    readers: list[str] = []
    read = postings_mod.Postings.__init__

    def noted(self, *args, **kwargs):
        readers.append(threading.current_thread().name)
        read(self, *args, **kwargs)

    monkeypatch.setattr(postings_mod.Postings, "__init__", noted)
    first, second = mem.recall("lock retry").to_dict(), mem.recall("lock retry").to_dict()
    mem.index().warm(wait=True)
    third = mem.recall("lock retry").to_dict()
    assert mem.index().postings() is not None
    assert first == second == third and readers == ["memory-custodian-warm"]


def test_the_background_read_waits_while_a_call_runs_and_finishes_after(mem, monkeypatch):
    """Two threads sharing the interpreter's lock made each call during the read 2-4x slower than with
    none (7,490 notes: 404-531 ms, not 105-188): the read gives way while a call runs (`warm.py`)."""
    _ledger(mem, n=20)
    monkeypatch.setattr(postings_mod, "PAUSE_EVERY", 1)
    index = mem.index()
    index.warm()  # a long-lived caller at its start: the warmer exists, the read begins
    index._warm().wait()
    mem.remember("a write: the next read is for a new state")
    warmer = index._warm()
    with warmer.foreground():  # what `Index.guarded` enters for every call
        mem.index().warm()  # caught up with the write: a read for the new state begins
        warmer.wait(1.0)
        assert warmer.thread is not None and warmer.thread.is_alive()  # waiting for the call to end
        assert index.postings() is None
    warmer.wait(30)
    assert not warmer.thread.is_alive() and index.postings() is not None
    res = mem.recall("lock")  # a call through `guarded`: it ran (the read gave way), and the read is done
    assert res.hits and not warmer.thread.is_alive()
