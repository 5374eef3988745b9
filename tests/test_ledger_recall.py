"""Ranked recall: filters inside the query, the cutoff, and the account of what was not shown."""

from __future__ import annotations

import pytest

from memory_custodian import Memory
from memory_custodian.base.errors import InvalidInput
from memory_custodian.cli.terms import CLI_TERMS


def ids(result):
    return [h.note.id for h in result.hits]


def test_line_format_and_footer(mem):
    note = mem.remember("workspace lock released before daemon restart", kind="gotcha", priority="high")
    res = mem.recall("daemon")
    assert res.render_text() == (
        f"[#{note.id}] gotcha/high · workspace lock released before daemon restart · {note.created_at[:10]}\n"
        "0 more matched below the cutoff; 0 excluded\n")


def test_filters_apply_before_the_cutoff(mem):
    findings = [mem.remember(f"cache lock contention in worker {i}", priority="high") for i in range(12)]
    gotchas = [mem.remember(f"the cache lock must be taken first, case {i}", kind="gotcha", priority="low")
               for i in range(4)]
    res = mem.recall("cache lock", kinds=["gotcha"], limit=3)
    assert len(res.hits) == 3 and set(ids(res)) <= {g.id for g in gotchas}
    assert res.below_cutoff == 1 and res.below_ids[0] in {g.id for g in gotchas}
    res = mem.recall("cache lock", limit=5)
    assert res.below_cutoff == 11 and res.matched == 16
    # the result names its hint; each caller's terms word it (the library's own words by default)
    assert res.hint == "more_lines" and res.to_dict()["hint"] == "more_lines"
    assert res.footer() == "11 more matched below the cutoff; 0 excluded — raise limit to see more"
    assert res.footer(CLI_TERMS) == "11 more matched below the cutoff; 0 excluded — raise --limit to see more"
    del findings


def test_excluded_are_counted_with_reasons_and_ids(mem):
    a = mem.remember("retry budget is five attempts")
    b = mem.remember("retry budget is three attempts")
    c = mem.remember("retry budget for uploads")
    mem.revoke(a.id, reason="wrong")
    new = mem.supersede(b.id, "retry budget is four attempts", reason="changed")
    mem.flag_stale(c.id, reason="maybe old")
    res = mem.recall("retry budget")
    assert ids(res) == [new.id]
    assert res.excluded == {"revoked": 1, "superseded": 1, "stale": 1}
    assert res.hint == "more_states"
    assert res.footer() == ("0 more matched below the cutoff; 3 excluded (1 revoked, 1 superseded, 1 stale) — "
                            "include_all=True to include")
    assert res.footer(CLI_TERMS).endswith(" — --all to include")
    d = res.to_dict()
    assert d["excluded"]["ids"] == {"revoked": [a.id], "stale": [c.id], "superseded": [b.id]}
    assert d["excluded"]["count"] == 3 and d["below_cutoff"]["count"] == 0
    everything = mem.recall("retry budget", include_all=True)
    assert set(ids(everything)) == {a.id, b.id, c.id, new.id} and everything.excluded == {}
    revoked_only = mem.recall("retry budget", states=["revoked"])
    assert ids(revoked_only) == [a.id] and revoked_only.excluded == {"active": 1, "superseded": 1, "stale": 1}


def test_no_query_orders_by_priority_then_recency(mem):
    low = mem.remember("l", priority="low")
    med1 = mem.remember("m1")
    high = mem.remember("h", priority="high")
    med2 = mem.remember("m2")
    assert ids(mem.recall()) == [high.id, med2.id, med1.id, low.id]


def test_tags_paths_and_code_aware_tokens(mem):
    a = mem.remember("parseConfigFile drops unknown keys", tags=["config"], paths=["src/config/loader.py"])
    b = mem.remember("release_lock must run in finally", tags=["locking"], paths=["src/daemon/"])
    assert ids(mem.recall("config file")) == [a.id]
    assert ids(mem.recall("parseConfigFile")) == [a.id]
    assert ids(mem.recall("releaseLock")) == [b.id]
    assert ids(mem.recall(tags=["locking"])) == [b.id]
    assert ids(mem.recall(paths=["src/daemon/server.py"])) == [b.id]
    assert ids(mem.recall(paths=["src/config"])) == [a.id]
    assert ids(mem.recall("loader")) == [a.id]


def test_expiry_is_derived_at_read_time(mem):
    task = mem.remember("checkpoint: halfway through the migration", kind="task")
    assert ids(mem.recall("migration")) == [task.id]
    res = mem.recall("migration", now="2099-01-01T00:00:00.000Z")
    assert ids(res) == [] and res.excluded == {"expired": 1}


def test_bad_filters_are_refused(mem):
    mem.remember("x")
    with pytest.raises(InvalidInput):
        mem.recall("x", kinds=["nope"])
    with pytest.raises(InvalidInput):
        mem.recall("x", states=["forgotten"])


def test_branch_scope_is_excluded_on_other_branches(mem, tmp_path):
    git = tmp_path / ".git"
    git.mkdir()
    (git / "HEAD").write_text("ref: refs/heads/feature-x\n", encoding="utf-8")
    note = mem.remember("only true on this feature branch", scope="branch")
    assert note.branch == "feature-x" and ids(mem.recall("feature branch")) == [note.id]
    (git / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    res = mem.recall("feature branch")
    assert ids(res) == [] and res.excluded == {"other scope": 1}


def test_expand_frames_and_chain(mem):
    a = mem.remember("use pool size 4", actor="agent")
    b = mem.supersede(a.id, "use pool size 8", reason="measured")
    mem.revoke(b.id, reason="pool removed")
    [xa, xb] = mem.expand([a.id, b.id]).notes
    assert xb["text"].splitlines()[1].startswith("WARNING: revoked")
    assert xa["chain"] == [a.id, b.id] and xb["chain"] == [a.id, b.id]
    assert "memory to verify, recorded by an AI session" in xa["text"]
    assert xa["text"].splitlines()[1].startswith("WARNING: superseded")


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SEGMENT = st.sampled_from(["src", "a", "b", "x.py", "y.py", "*", "**", "*.py", "a*", "?.py"])


@settings(max_examples=300, deadline=None)
@given(st.lists(SEGMENT, min_size=1, max_size=4), st.booleans(),
       st.lists(st.sampled_from(["src", "a", "b", "x.py", "y.py"]), min_size=1, max_size=4))
def test_indexed_path_prefilter_never_loses_a_match(glob_parts, slash, path_parts):
    """The prefix lookup recall uses before the exact glob match must keep every note that matches."""
    from memory_custodian.ledger.storage.paths import candidate_prefixes, path_matches, path_prefix

    glob = "/".join(glob_parts) + ("/" if slash else "")
    path = "/".join(path_parts)
    if path_matches(glob, path):
        ancestors, (lo, hi) = candidate_prefixes(path)
        prefix = path_prefix(glob)
        assert prefix in ancestors or lo <= prefix < hi, (glob, path, prefix)


def test_one_pass_and_sql_paths_agree(mem, monkeypatch):
    """Small candidate sets are ranked and counted in one scan; the result must equal the SQL path."""
    import random

    from memory_custodian.ledger.recall import context, recall_scans

    rnd = random.Random(5)
    words = ["lock", "daemon", "cache", "retry", "budget", "queue", "parseConfig", "release_lock"]
    made = []
    for i in range(60):
        note = mem.remember(" ".join(rnd.sample(words, 3)) + f" case {i}", kind=rnd.choice(["gotcha", "finding", "task"]),
                            priority=rnd.choice(["high", "medium", "low"]), tags=[rnd.choice(["a", "b"])])
        made.append(note)
    for note in made[::7]:
        mem.revoke(note.id, reason="x")
    for note in made[3::10]:
        mem.flag_stale(note.id, reason="x")
    queries = [dict(query="lock"), dict(query="daemon cache", limit=3), dict(query="release lock", kinds=["gotcha"]),
               dict(query="retry", tags=["a"], limit=2), dict(query="queue budget", include_all=True),
               dict(query="parseConfig", states=["revoked", "stale"])]
    # the one-pass scans re-rank by a note's neighbours in time (these notes are seconds apart); the
    # SQL path past SINGLE_PASS_MAX candidates ranks without them, like the thesaurus: compare the rest
    monkeypatch.setattr(context, "USE_CONTEXT", False)
    one = [mem.recall(**q).to_dict() for q in queries]
    monkeypatch.setattr(recall_scans, "SINGLE_PASS_MAX", -1)
    two = [mem.recall(**q).to_dict() for q in queries]
    assert one == two


def test_metadata_is_loaded_on_the_second_query_only_and_ranks_the_same(mem):
    """A one-shot process (a hook) must not pay for loading every note's metadata; a caller that
    asks again ranks from memory, with the same result as the join."""
    for i in range(12):
        note = mem.remember(f"lock daemon retry case {i}", priority=["high", "medium", "low"][i % 3])
        if i % 4 == 0:
            mem.revoke(note.id, reason="x")
    index = mem.index()
    first = mem.recall("lock retry", limit=3).to_dict()
    assert index._meta[1] == "asked once"
    mem.recall("lock retry", limit=3)  # the second ask begins reading it, in the background
    index.warm(wait=True)
    second = mem.recall("lock retry", limit=3).to_dict()
    assert isinstance(index._meta[1], dict) and len(index._meta[1]) == 12
    assert first == second
    mem.remember("lock retry again")  # a write: read again for the new state, in the background
    mem.recall("lock retry")
    assert index._meta[1] == "asked once"


def test_broad_queries_on_big_ledgers_rank_a_narrower_tier_and_say_so(mem, monkeypatch):
    """Past CANDIDATE_LIMIT matches, recall ranks the notes sharing every word; the rest are
    reported as `partial`, as a lower bound ("at least") when the broad tier was not counted in full."""
    from memory_custodian.ledger.recall import ranking

    both = [mem.remember(f"cache lock held across the restart, case {i}") for i in range(6)]
    for i in range(30):
        mem.remember(f"cache warming on deploy, variant {i}")
    monkeypatch.setattr(ranking, "TIER_MIN_NOTES", 0)
    monkeypatch.setattr(ranking, "CANDIDATE_LIMIT", 10)
    res = mem.recall("cache lock", limit=5)
    assert set(ids(res)) <= {n.id for n in both} and res.matched == 6
    assert res.partial == 11 - 6 and not res.partial_exact  # the broad count stopped at CANDIDATE_LIMIT + 1
    assert res.footer().endswith("; at least 5 more match loosely (not every word, or not in a title or tag), "
                                 "unranked — raise limit to see more")
    assert res.to_dict()["partial_exact"] is False
    monkeypatch.setattr(ranking, "BROAD_COUNT_CAP", 1000)
    exact = mem.recall("cache lock", limit=5)
    assert exact.partial == 30 and exact.partial_exact
    assert "; 30 more match loosely (not every word, or not in a title or tag), unranked" in exact.footer()
    # a narrow tier too small for the page falls back to the broad one, counted in full
    wide = mem.recall("cache lock", limit=8)
    assert len(wide.hits) == 8 and wide.matched == 36 and wide.partial == 0


def test_counts_matched_gives_the_hits_and_matched_count_of_a_full_recall(mem, monkeypatch):
    """The prompt hook's mode: the same hits and matched count as a full recall, the exclusions
    left uncounted and said to be; also on a tiered big-ledger query and with filters. (A full recall
    also re-ranks by each note's neighbours in time, which the hooks never do: compare without it.)"""
    from memory_custodian.ledger.recall import context, ranking

    monkeypatch.setattr(context, "USE_CONTEXT", False)

    made = [mem.remember(f"cache lock held across the restart, case {i}", kind="gotcha" if i % 2 else "finding")
            for i in range(8)]
    for i in range(30):
        mem.remember(f"cache warming on deploy, variant {i}")
    for note in made[:3]:
        mem.revoke(note.id, reason="wrong")
    queries = [dict(query="cache lock", limit=3), dict(query="cache", limit=50), dict(query="lock", kinds=["gotcha"]),
               dict(query="nothing matches this", limit=3)]

    def same(full, matched):
        assert [h.note.id for h in matched.hits] == [h.note.id for h in full.hits]
        assert [h.score for h in matched.hits] == [h.score for h in full.hits]
        assert (matched.matched, matched.partial, matched.partial_exact) == (full.matched, full.partial,
                                                                            full.partial_exact)
        assert matched.excluded_counts == {} and not matched.excluded_counted
        assert "excluded notes (revoked, superseded, ...) not counted" in matched.footer()

    for q in queries:
        same(mem.recall(**q), mem.recall(**q, counts="matched"))
    monkeypatch.setattr(ranking, "TIER_MIN_NOTES", 0)
    monkeypatch.setattr(ranking, "CANDIDATE_LIMIT", 10)
    monkeypatch.setattr(ranking, "BROAD_COUNT_CAP", 1000)
    tiered = mem.recall("cache lock", limit=3, counts="matched")
    assert tiered.matched == 5 and tiered.partial == 30
    same(mem.recall("cache lock", limit=3), tiered)
    with pytest.raises(InvalidInput):
        mem.recall("cache", counts="some")


def test_identifier_parts_give_a_narrower_tier():
    from memory_custodian.ledger.recall.tiers import match_tiers

    tiers = match_tiers("get_server_page_mailerV2")
    assert tiers[0].startswith('"get" OR "server"')
    # the single letters and digits are left out of the narrower tiers; the joined form always qualifies
    assert tiers[2] == '("get") AND ("server") AND ("page") AND ("mailer") OR "getserverpagemailerv2"'
    assert tiers[-1].startswith("{title tags_text} : ")


def test_cached_notes_and_metadata_follow_writes_elsewhere(mem, tmp_path):
    """Recall keeps note metadata and recently read notes in memory; a write through another
    Memory (its own connection, as another process) or a change to a returned note must not leak."""
    note = mem.remember("the retry budget is five attempts")
    first = mem.recall("retry budget")
    first.hits[0].note.title = "changed by a caller"
    first.hits[0].note.extra["x"] = 1
    again = mem.recall("retry budget")
    assert again.hits[0].note.title == "the retry budget is five attempts" and again.hits[0].note.extra == {}
    other = Memory.open(tmp_path)
    other.revoke(note.id, reason="wrong")
    other.index()  # the other connection catches the index up
    res = mem.recall("retry budget")
    assert res.hits == [] and res.excluded == {"revoked": 1}
    other.reindex()  # renumbers rowids under the first connection's caches
    newer = other.remember("retry budget raised to seven attempts")
    assert ids(mem.recall("retry budget")) == [newer.id]


def test_the_candidate_cut_scores_its_notes_as_the_full_ranking_does_and_counts_no_doclist_in_full(mem, monkeypatch):
    """When no tier is both small and full, only the notes holding all the query's words but one
    (then two, ...) are ranked, each with the score ranking every match gives it; the rest are a
    lower bound, and no count reads the broad match to its end."""
    from memory_custodian.ledger.recall import ranking

    for i in range(8):
        mem.remember(f"retry budget worker timeout note {i}")  # three of the four words, or all four
        mem.remember(f"retry budget worker queue note {i}")
    for i in range(60):
        mem.remember(f"the retry of case {i}")  # one word only
    query = "retry budget worker timeout"
    full = {h.note.id: h.score for h in mem.recall(query, limit=10, counts="matched").hits}
    monkeypatch.setattr(ranking, "TIER_MIN_NOTES", 0)
    monkeypatch.setattr(ranking, "CANDIDATE_LIMIT", 10)
    monkeypatch.setattr(ranking, "CUT_MIN", 12)
    monkeypatch.setattr(ranking, "CUT_RARE_MAX", 10)  # "timeout" (8 notes) is the one rare word
    statements: list[str] = []
    db = mem.index().db
    db.set_trace_callback(statements.append)
    try:
        cut = mem.recall(query, limit=10, counts="matched")
    finally:
        db.set_trace_callback(None)
    assert {h.note.id: h.score for h in cut.hits} == full
    assert cut.matched == 16 and cut.partial == 2 * 16 + 1 - 16 and not cut.partial_exact  # counted to 2 x 16 + 1
    uncapped = [s for s in statements if "count(*) FROM notes_fts WHERE notes_fts MATCH" in s and "LIMIT" not in s]
    assert uncapped == []
