"""The recall-quality harness: metrics on hand-computed examples, truth parsing, and every miss class
on a real ledger (real files, real SQLite index, real git for the branch scope)."""

from __future__ import annotations

import json
import math
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_custodian.base.errors import InvalidInput, NotFound
from memory_custodian.ledger.recall.evaluate import (
    evaluate,
    load_truth,
    ndcg_at,
    recall_at,
    reciprocal_rank,
    render_text,
    shared_terms,
)
from memory_custodian.memory import Memory

# ---- metrics, computed by hand ------------------------------------------------------------------

RANKED = ["a", "b", "c", "d", "e"]
RELEVANT = ["b", "e", "z"]  # z is never ranked


def test_recall_at_k_by_hand():
    assert recall_at(RANKED, RELEVANT, 1) == 0.0
    assert recall_at(RANKED, RELEVANT, 2) == pytest.approx(1 / 3)
    assert recall_at(RANKED, RELEVANT, 5) == pytest.approx(2 / 3)
    assert recall_at(RANKED, RELEVANT, 50) == pytest.approx(2 / 3)
    assert recall_at(RANKED, ["a"], 1) == 1.0
    assert recall_at([], ["a"], 10) == 0.0


def test_reciprocal_rank_by_hand():
    assert reciprocal_rank(RANKED, RELEVANT) == 0.5
    assert reciprocal_rank(RANKED, ["e"]) == 0.2
    assert reciprocal_rank(RANKED, ["z"]) == 0.0


def test_ndcg_by_hand():
    # relevant at ranks 2 and 5; three relevant, so the ideal has hits at ranks 1, 2, 3
    dcg = 1 / math.log2(3) + 1 / math.log2(6)  # 0.6309 + 0.3869 = 1.0178
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)  # 1 + 0.6309 + 0.5 = 2.1309
    assert ndcg_at(RANKED, RELEVANT, 5) == pytest.approx(dcg / ideal)
    assert ndcg_at(RANKED, RELEVANT, 5) == pytest.approx(0.47762, abs=1e-5)
    # cut at 2: only rank 2 counts; ideal for k=2 is ranks 1 and 2
    assert ndcg_at(RANKED, RELEVANT, 2) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert ndcg_at(["b", "e"], ["b", "e"], 10) == pytest.approx(1.0)
    assert ndcg_at(RANKED, ["z"], 10) == 0.0


# ---- truth parsing ------------------------------------------------------------------------------

def _truth(tmp_path, rows, name="truth.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_load_truth_normalises_filters_and_ids(tmp_path):
    path = _truth(tmp_path, [{"query": "q", "relevant": ["#abcdefgh", "abcdefgh"], "kind": "gotcha",
                              "paths": "src/a.py", "tags": ["x"], "id": "q1", "category": "c"}, ""])
    (q,) = load_truth(path)
    assert q["relevant"] == ["abcdefgh"]
    assert q["kinds"] == ("gotcha",) and q["paths"] == ("src/a.py",) and q["tags"] == ("x",)
    assert q["id"] == "q1" and q["category"] == "c" and q["line"] == 1


@pytest.mark.parametrize("line, message", [
    ("{not json", "not a JSON object"),
    ('["a list"]', "not a JSON object"),
    ('{"query": "q"}', "`relevant` must list"),
    ('{"query": "q", "relevant": []}', "`relevant` must list"),
    ('{"query": 3, "relevant": ["abcdefgh"]}', "`query` must be a string"),
    ('{"query": "q", "relevant": ["abcdefgh"], "kind": ["gadget"]}', "unknown kind 'gadget'"),
    ('{"query": "q", "relevant": ["abcdefgh"], "paths": [1]}', "`paths` must be"),
])
def test_load_truth_names_file_and_line(tmp_path, line, message):
    path = _truth(tmp_path, ['{"query": "ok", "relevant": ["abcdefgh"]}', line])
    with pytest.raises(InvalidInput) as err:
        load_truth(path)
    assert message in str(err.value)
    assert f"{path}:2:" in str(err.value)


def test_load_truth_missing_and_empty(tmp_path):
    with pytest.raises(NotFound):
        load_truth(tmp_path / "nope.jsonl")
    with pytest.raises(InvalidInput, match="no queries"):
        load_truth(_truth(tmp_path, [""]))


# ---- every miss class on a real ledger ----------------------------------------------------------

def _project(tmp_path) -> Memory:
    root = tmp_path / "proj"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    memory = Memory.open(root)
    memory.init()
    return memory


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A small ledger with one note for each way a relevant note can go missing (read-only in tests)."""
    m = _project(tmp_path_factory.mktemp("lab"))
    ids = {}

    def note(name, text, **kw):
        ids[name] = m.remember(text, title=kw.pop("title", None), **kw).id
        return ids[name]

    note("found", "workspace lock released before daemon restart", kind="gotcha", priority="high",
         tags=["daemon"], paths=["src/daemon/lock.py"])
    note("revoked", "workspace lock is never released")
    m.revoke(ids["revoked"], reason="wrong")
    note("old", "workspace lock lives in /tmp")
    ids["new"] = m.supersede(ids["old"], "workspace lock lives in .cache/lock", reason="moved").id
    note("stale", "workspace lock timeout is 5 s")
    m.flag_stale(ids["stale"], reason="code changed")
    note("expired", "workspace lock task checkpoint", kind="task")
    m.expire(ids["expired"], reason="done")
    note("decision", "workspace lock is an flock, decided for NFS", kind="decision")
    note("tagged", "workspace lock fairness", tags=["other"])
    note("elsewhere", "workspace lock in the web client", paths=["web/lock.ts"])
    note("unrelated", "the invoice renderer rounds to cents")
    note("forgotten", "workspace lock scratch note")
    m.forget_note(ids["forgotten"])
    # a branch-scoped note written on `feat`, read back on `main`
    subprocess.run(["git", "-C", str(m.root), "symbolic-ref", "HEAD", "refs/heads/feat"], check=True)
    note("branch", "workspace lock experiment on this branch", scope="branch")
    subprocess.run(["git", "-C", str(m.root), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    # crowd: twelve better matches push the weakest one below a cutoff of 3
    for i in range(12):
        note(f"crowd{i}", f"daemon restart daemon restart note {i}", kind="gotcha", priority="high",
             title=f"daemon restart {i}")
    note("weak", "a long rambling note that mentions a daemon once among many other words " * 3, priority="low")
    return m, ids


def _run(m, tmp_path, rows, **kw):
    return evaluate(m, _truth(tmp_path, rows), **kw)


def _miss(report, note_id):
    (miss,) = [x for x in report["misses"] if x["note"] == note_id]
    return miss


def test_found_is_not_a_miss(lab, tmp_path):
    m, ids = lab
    report = _run(m, tmp_path, [{"query": "workspace lock daemon", "relevant": [ids["found"]]}])
    assert report["misses"] == [] and report["overall"]["recall@10"] == 1.0
    assert report["overall"]["miss_rate"] == 0.0 and report["recall"] == 1.0


@pytest.mark.parametrize("name, reason", [("revoked", "revoked"), ("old", "superseded"), ("stale", "stale"),
                                          ("expired", "expired"), ("branch", "scope")])
def test_excluded_by_state_or_scope(lab, tmp_path, name, reason):
    m, ids = lab
    report = _run(m, tmp_path, [{"query": "workspace lock", "relevant": [ids[name]]}])
    miss = _miss(report, ids[name])
    assert (miss["class"], miss["reason"]) == ("excluded", reason)
    assert report["miss_classes"] == {f"excluded:{reason}": 1}


@pytest.mark.parametrize("name, filters, reason", [
    ("decision", {"kind": ["gotcha"]}, "kind"),
    ("tagged", {"tags": ["daemon"]}, "tag"),
    ("elsewhere", {"paths": ["src/daemon/lock.py"]}, "path"),
])
def test_excluded_by_caller_filter(lab, tmp_path, name, filters, reason):
    m, ids = lab
    report = _run(m, tmp_path, [{"query": "workspace lock", "relevant": [ids[name]], **filters}])
    miss = _miss(report, ids[name])
    assert (miss["class"], miss["reason"]) == ("excluded", reason)


def test_ranked_below_cutoff_gives_the_rank(lab, tmp_path):
    m, ids = lab
    report = _run(m, tmp_path, [{"query": "daemon restart", "relevant": [ids["weak"]]}], limit=3)
    miss = _miss(report, ids["weak"])
    assert miss["class"] == "below_cutoff"
    assert miss["rank"] > 3
    assert report["overall"]["recall@20"] == 1.0  # found deeper than the cutoff, so it is a ranking miss
    assert report["overall"]["recall@1"] == 0.0


def test_never_matched_reports_no_shared_term(lab, tmp_path):
    m, ids = lab
    report = _run(m, tmp_path, [{"query": "workspace lock", "relevant": [ids["unrelated"]]}])
    miss = _miss(report, ids["unrelated"])
    assert miss["class"] == "unmatched" and miss["shared_terms"] == []
    text = render_text(report)
    assert "never matched (no shared term)" in text


def test_wrong_truth_is_flagged_not_scored(lab, tmp_path):
    m, ids = lab
    report = _run(m, tmp_path, [
        {"query": "workspace lock", "relevant": ["zzzzzzzz", ids["forgotten"]], "id": "bad"},
        {"query": "workspace lock daemon", "relevant": [ids["found"]], "id": "good"},
    ])
    assert [(e["query_id"], e["note"], e["problem"]) for e in report["truth_errors"]] == [
        ("bad", "zzzzzzzz", "unknown"), ("bad", ids["forgotten"], "forgotten")]
    assert report["overall"]["queries"] == 1 and report["overall"]["recall@10"] == 1.0
    assert "is unknown — fix the truth file" in render_text(report)


def test_superseded_answer_new_wins_and_old_is_not_shown(lab, tmp_path):
    m, ids = lab
    report = _run(m, tmp_path, [{"query": "where does the workspace lock live", "relevant": [ids["new"]],
                                 "forbidden": [ids["old"]]}])
    assert report["forbidden_shown"] == [] and report["overall"]["recall@10"] == 1.0


def test_breakdowns_by_kind_priority_and_category(lab, tmp_path):
    m, ids = lab
    report = _run(m, tmp_path, [
        {"query": "workspace lock daemon", "relevant": [ids["found"]], "category": "symbol"},
        {"query": "workspace lock", "relevant": [ids["revoked"]], "category": "paraphrase"},
    ], k=5)
    assert report["k"] == 5 and "recall@5" in report["overall"]
    assert report["by_kind"]["gotcha"]["recall@5"] == 1.0
    assert report["by_kind"]["finding"]["miss_rate"] == 1.0
    assert report["by_priority"]["high"]["pairs"] == 1 and report["by_priority"]["medium"]["pairs"] == 1
    assert set(report["by_category"]) == {"symbol", "paraphrase"}
    assert report["overall"]["mrr"] == 0.5 and report["overall"]["miss_rate"] == 0.5
    assert json.loads(json.dumps(report, sort_keys=True)) == report


def test_shared_terms_explains_vocabulary_overlap(lab):
    m, ids = lab
    note = m.note(ids["found"])
    assert shared_terms("restarting the daemon", note) == ["daemon", "restarting"]
    assert shared_terms("invoice totals", note) == []


def test_bad_options_are_invalid_input(lab, tmp_path):
    m, ids = lab
    path = _truth(tmp_path, [{"query": "x", "relevant": [ids["found"]]}])
    for kw in ({"k": 0}, {"limit": 0}, {"now": "yesterday"}):
        with pytest.raises(InvalidInput):
            evaluate(m, path, **kw)


# ---- metric invariants --------------------------------------------------------------------------

_ids = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10)


@settings(max_examples=150, deadline=None)
@given(ranked=_ids, relevant=_ids.filter(bool), k=st.integers(1, 12))
def test_metric_invariants(ranked, relevant, k):
    r = recall_at(ranked, relevant, k)
    assert 0.0 <= r <= 1.0
    assert recall_at(ranked, relevant, k) <= recall_at(ranked, relevant, k + 1)  # monotone in k
    assert 0.0 <= ndcg_at(ranked, relevant, k) <= 1.0 + 1e-12
    rr = reciprocal_rank(ranked, relevant)
    assert (rr > 0) == bool(set(ranked) & set(relevant))
    # a perfect ranking scores 1 everywhere it can
    perfect = list(relevant) + [x for x in ranked if x not in relevant]
    assert ndcg_at(perfect, relevant, k) == pytest.approx(1.0)
    assert reciprocal_rank(perfect, relevant) == 1.0
    assert recall_at(perfect, relevant, len(relevant)) == 1.0
