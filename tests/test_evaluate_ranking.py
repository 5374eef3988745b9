"""The ranker changes the recall harness earned, each through the real `recall` on a real ledger:
synonym expansion, path-anchored matching, the kind prior for directives, and safe MATCH text."""

from __future__ import annotations

import pytest

from memory_custodian.ledger.recall import ranking
from memory_custodian.memory import Memory


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    root = tmp_path_factory.mktemp("rank")
    m = Memory.open(root)
    m.init()
    ids = {}
    ids["deadlock"] = m.remember("RouteScheduler deadlocks inside an open transaction; call it after commit",
                                 kind="gotcha", paths=["src/dispatch/scheduler.py"]).id
    ids["latency"] = m.remember("ShipmentIndexer p95 latency doubled after the GIN index change",
                                kind="finding", paths=["src/search/indexer.py"]).id
    ids["anchored"] = m.remember("CheckoutForm loses its state when the intent is re-created",
                                 kind="gotcha", paths=["web/src/components/CheckoutForm.tsx"]).id
    ids["directive"] = m.remember("Never introduce SQLite for sessions: six pods share Redis",
                                  kind="directive", title="Never introduce SQLite for sessions").id
    ids["finding"] = m.remember("Sessions in SQLite were measured: slower than Redis for sessions",
                                kind="finding", title="SQLite for sessions measured").id
    for i in range(6):
        m.remember(f"Checkpoint {i}: refactor the session handling module", kind="task")
    return m, ids


def _ids(result):
    return [h.note.id for h in result.hits]


def test_synonyms_bridge_a_symptom_to_its_cause(memory):
    m, ids = memory
    # neither "slow" nor "hang" is in a note; their groups bring in "latency" and "freeze"
    assert _ids(m.recall("why is it so slow")) == [ids["latency"]]
    assert '"freeze"' in ranking.build_match("hang")


def test_synonym_expansion_is_capped_per_term():
    expr = ranking.build_match("slow")
    assert expr.count(" OR ") == ranking.SYNONYM_CAP
    assert expr.startswith('"slow"')
    assert ranking.synonyms("timeouts")  # looked up by a crude stem too


def test_paths_match_anchored_notes_without_a_shared_word(memory):
    m, ids = memory
    result = m.recall("add a feature to the payment page", paths=["web/src/components/CheckoutForm.tsx"])
    assert _ids(result) == [ids["anchored"]]
    assert 'paths_text : "web src components CheckoutForm tsx"' in ranking.build_match(
        "payment page", paths=["web/src/components/CheckoutForm.tsx"])


def test_directive_outranks_an_equally_worded_finding_and_tasks(memory):
    m, ids = memory
    ranked = _ids(m.recall("SQLite for sessions"))
    assert ranked.index(ids["directive"]) < ranked.index(ids["finding"])
    assert ranked[0] == ids["directive"]


@pytest.mark.parametrize("query", ['"unbalanced', "NEAR(a b) AND OR NOT", "col:thing *", "x-y/z.py)", "(((", "-"])
def test_query_syntax_never_leaks_into_match(memory, query):
    m, _ = memory
    m.recall(query)  # must not raise an FTS5 syntax error
    m.recall(query, paths=['web/"odd" path(1).ts'])
