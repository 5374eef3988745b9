"""Recall's score has two forms, `ranking.score` (Python, for scans that rank in memory) and
`ranking.score_sql` (for SQLite to rank inside a query), and BM25 two sources (FTS5's bm25() and
the in-memory postings). Each candidate row must come out of both scans with the same bits: on
every query of the truth set, on the suite's recall corpus, and on random small corpora."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_postings import QUERIES, _ledger

from memory_custodian import Memory
from memory_custodian.ledger.recall import ranking
from memory_custodian.ledger.recall.recall import check_query
from memory_custodian.ledger.recall.recall_plan import plan_recall
from memory_custodian.ledger.recall.recall_scans import memory_rows, sql_rows

TRUTH = Path(__file__).resolve().parents[1] / "benchmarks" / "recall"
NOW = "2026-12-01T00:00:00.000Z"


def assert_both_forms_equal(memory: Memory, query: str, **filters) -> int:
    """Every candidate of every tier the plan holds, scored both ways; returns how many were compared."""
    index = memory.index()
    index.catch_up()
    ask = check_query(query, now=NOW, root=memory.root_str, **filters)
    if ask.broad is None:
        return 0
    plan = plan_recall(index, ask)
    index.note_meta()
    index.warm(wait=True)
    plan.meta = index.note_meta()  # loaded on the second ask
    assert plan.meta is not None
    in_sql, in_memory = sql_rows(index, plan), memory_rows(index, plan)
    plan.branch()
    compared = 0
    for tier in plan.tiers:
        from_sql, from_memory = sorted(in_sql(tier)), sorted(in_memory(tier))
        assert from_memory == from_sql, (query, filters, tier)
        compared += len(from_sql)
    return compared


def _truth_memory(tmp_path) -> Memory:
    root = tmp_path / "truth"
    shutil.copytree(TRUTH / "project", root, ignore=shutil.ignore_patterns(".cache"))
    return Memory.open(root)


def _truth_queries() -> list[str]:
    return [json.loads(line)["query"] for split in ("train", "test")
            for line in (TRUTH / f"truth-{split}.jsonl").read_text(encoding="utf-8").splitlines()]


def test_both_forms_score_every_truth_query_alike(tmp_path):
    memory = _truth_memory(tmp_path)
    queries = _truth_queries()
    assert len(queries) > 300
    compared = sum(assert_both_forms_equal(memory, q) for q in queries)
    compared += sum(assert_both_forms_equal(memory, q, near_paths=("src/billing/**",), kinds=("gotcha", "finding"))
                    for q in queries[::4])
    assert compared > 10000


def test_both_forms_score_every_tier_alike(tmp_path, monkeypatch):
    """The narrower tiers of big ledgers, forced on the truth set."""
    monkeypatch.setattr(ranking, "TIER_MIN_NOTES", 0)
    monkeypatch.setattr(ranking, "CANDIDATE_LIMIT", 20)
    monkeypatch.setattr(ranking, "FILTERED_CANDIDATE_LIMIT", 40)
    memory = _truth_memory(tmp_path)
    for q in _truth_queries()[::5]:
        assert_both_forms_equal(memory, q)
        assert_both_forms_equal(memory, q, tags=("billing",))


def test_both_forms_score_the_recall_corpus_alike(mem):
    _ledger(mem)
    for q in QUERIES:
        for filters in ({}, {"paths": ("src/api/handler.py",)}, {"near_paths": ("src/api/**",)}, {"tags": ("a",)},
                        {"include_all": True}, {"states": ("revoked", "stale")}):
            assert_both_forms_equal(mem, q, **filters)


WORDS = ("lock", "locks", "cache", "retry", "budget", "parseConfig", "café", "src/api/handler.py", "the", "deploy")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
                          st.sampled_from(("gotcha", "finding", "task", "directive", "decision")),
                          st.sampled_from(("high", "medium", "low")),
                          st.lists(st.sampled_from(("src/api/**", "docs/*.md", "src/api/handler.py")), max_size=2)),
                min_size=1, max_size=12),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), st.booleans())
def test_both_forms_score_random_small_corpora_alike(notes, query_words, near):
    root = Path(tempfile.mkdtemp(prefix="mc-score-"))
    try:
        (root / "docs" / "memory").mkdir(parents=True)
        (root / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
        memory = Memory.open(root)
        for i, (words, kind, priority, paths) in enumerate(notes):
            memory.remember(f"note {i} " + " ".join(words), kind=kind, priority=priority, paths=paths)
        filters = {"near_paths": ("src/api/handler.py",)} if near else {}
        assert_both_forms_equal(memory, " ".join(query_words), **filters)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("bm25, priority, kind, near", [(2.5, "high", "directive", True), (0.1, "low", "task", False),
                                                         (7.0, "medium", "finding", None), (1e-6, "odd", "odd", True)])
def test_the_python_form_is_the_sql_form(tmp_path, bm25, priority, kind, near):
    """The formula alone, one SQLite row: both forms, the same bits."""
    import sqlite3

    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE n(priority TEXT, kind TEXT, bm25 REAL, near INTEGER)")
    db.execute("INSERT INTO n VALUES (?, ?, ?, ?)", (priority, kind, -bm25, int(bool(near))))
    sql = ranking.score_sql("n.bm25", None if near is None else "n.near")
    (in_sql,) = db.execute(f"SELECT {sql} FROM n").fetchone()
    assert in_sql == ranking.score(bm25, ranking.prior(priority, kind), near)
