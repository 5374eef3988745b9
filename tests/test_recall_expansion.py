"""The thesaurus expansion (`ledger/query_expand.py`), through the real `recall` on a real ledger:
it re-ranks what the query matched, never adds to it, never outranks the query's own words, and
serves the full-account callers only; the table it reads is sorted, complete and small."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memory_custodian.ledger.recall import query_expand, ranking
from memory_custodian.ledger.recall.recall import check_query
from memory_custodian.ledger.recall.recall_plan import plan_recall
from memory_custodian.ledger.recall.recall_scans import expanded, memory_rows, sql_rows
from memory_custodian.memory import Memory

CONVERSATION = Path(__file__).resolve().parents[1] / "benchmarks" / "conversation"
NOW = "2026-12-01T00:00:00.000Z"


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    m = Memory.open(tmp_path_factory.mktemp("expand"))
    m.init()
    # longer than Jonah's other notes: on his name alone it would rank last
    ids = {"synonym": m.remember("Jonah finally bought an automobile with the cash he saved over the years",
                                 kind="finding", title="Jonah news").id}
    for i in range(4):
        m.remember(f"Jonah said the weather was strange, story {i}", kind="finding", title="Jonah news")
    for i in range(4):
        m.remember(f"Priya watched a film, story {i}", kind="finding", title="Priya news")
    ids["stranger"] = m.remember("Priya bought an automobile last spring", kind="finding", title="Priya news").id
    return m, ids


def _ids(result):
    return [h.note.id for h in result.hits]


def test_a_thesaurus_word_lifts_the_note_it_describes(memory):
    m, ids = memory
    # every note of Jonah's matches his name; only the thesaurus ties "car" to "automobile"
    assert _ids(m.recall("Jonah car", limit=1)) == [ids["synonym"]]


def test_a_note_only_the_expansion_finds_is_not_matched(memory):
    m, ids = memory
    result = m.recall("a car for Jonah")
    assert ids["stranger"] not in _ids(result) + list(result.below_ids)
    assert result.matched == 5  # Jonah's notes: the query's own word, not the thesaurus, matched them


def test_the_query_word_outranks_the_word_it_stands_for(tmp_path):
    m = Memory.open(tmp_path)
    m.init()
    own = m.remember("Jonah parked the car outside", kind="finding", title="Jonah").id
    other = m.remember("Jonah parked the automobile outside", kind="finding", title="Jonah").id
    assert _ids(m.recall("Jonah car")) == [own, other]


def test_hooks_and_code_queries_are_not_expanded():
    assert check_query("Jonah car", counts="matched", expand=True).expansion is None
    assert check_query("Jonah car", counts=False, expand=True).expansion is None
    assert check_query("Jonah car", counts=True, expand=False).expansion is None  # the context pack
    assert check_query("Jonah car", counts=True, expand=True).expansion is not None
    assert query_expand.expansion_words("why does RouteScheduler hang", [])[0] == []


def test_names_inside_a_sentence_keep_their_word():
    assert "automobile" in query_expand.expansion_words("When did Mark get a car?", [])[0]
    assert query_expand.expansion_words("When did Mark arrive?", [])[0] == query_expand.expansion_words("arrive", [])[0]
    assert query_expand.lookup("mark")  # a common word, expanded when it is no name


def test_the_query_own_words_are_no_expansion():
    words = ranking.match_words("car automobile")
    assert "automobile" not in query_expand.expansion_words("car automobile", words)[0]


def test_base_forms_are_found_for_inflected_words():
    assert query_expand.lookup("weddings") == query_expand.lookup("wedding") != ()
    assert query_expand.lookup("marries") == query_expand.lookup("marry") != ()
    assert query_expand.lookup("qzxv") == ()


def test_both_scan_forms_score_the_expanded_rows_alike(tmp_path):
    root = tmp_path / "conversation"
    shutil.copytree(CONVERSATION / "project", root, ignore=shutil.ignore_patterns(".cache"))
    index = Memory.open(root).index()
    index.catch_up()
    compared = 0
    for line in (CONVERSATION / "truth-train.jsonl").read_text(encoding="utf-8").splitlines()[:60]:
        ask = check_query(json.loads(line)["query"], now=NOW, root=str(root), expand=True)
        if ask.expansion is None:
            continue
        plan = plan_recall(index, ask)
        index.note_meta()
        index.warm(wait=True)
        plan.meta = index.note_meta()
        plan.branch()
        assert index.postings() is not None  # the memory form scores the expansion from the postings
        in_sql, in_memory = expanded(plan, sql_rows(index, plan)), expanded(plan, memory_rows(index, plan))
        from_sql, from_memory = sorted(in_sql(ask.broad)), sorted(in_memory(ask.broad))
        assert from_sql == from_memory
        compared += len(from_sql)
    assert compared > 1000


def test_the_table_is_sorted_complete_and_small():
    assert os.path.getsize(query_expand.TABLE) < 1_600_000
    lines = Path(query_expand.TABLE).read_bytes().decode("utf-8").splitlines()
    keys = [line.split("\t")[0].encode("utf-8") for line in lines]
    assert keys == sorted(set(keys)) and len(keys) > 15000
    for line in lines[::97]:
        word, _, rest = line.partition("\t")
        assert query_expand.entry(word) == tuple(rest.split(" "))
    assert os.path.exists(os.path.join(os.path.dirname(query_expand.TABLE), "WORDNET-LICENSE"))


def test_the_context_pack_never_loads_the_table(tmp_path):
    script = (
        "import sys\n"
        "from memory_custodian.memory import Memory\n"
        "from memory_custodian.ledger.pack_sections import ledger_sections\n"
        f"m = Memory.open({str(tmp_path)!r}); m.init()\n"
        "m.remember('Jonah bought an automobile', kind='finding', title='Jonah news')\n"
        "sections = ledger_sections(m, task='default', query='Jonah car')\n"
        "assert sections\n"
        "print('memory_custodian.ledger.recall.query_expand' in sys.modules)\n"
        "m.recall('Jonah car')\n"
        "print('memory_custodian.ledger.recall.query_expand' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
