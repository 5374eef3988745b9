"""Recall reaches every note it should: words in any script, and paths matched both ways
(`.` for the whole project, a query glob covering anchors, a folder holding what an anchor names)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_custodian import Memory
from memory_custodian.ledger.recall import ranking
from memory_custodian.ledger.recall.tiers import match_tiers
from memory_custodian.ledger.storage.paths import candidate_prefixes, path_matches, path_prefix


def ids(result):
    return {h.note.id for h in result.hits}


def _open(root) -> Memory:
    (root / "docs" / "memory").mkdir(parents=True)
    (root / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
    return Memory.open(root)


# ---- words in any script -------------------------------------------------------------------

@pytest.fixture
def scripts(mem):
    notes = {
        "ru": mem.remember("Кэш сбрасывается при перезапуске демона"),
        "zh": mem.remember("数据库连接池必须在关闭前释放"),
        "fr": mem.remember("Le café du serveur est froid"),
        "ja": mem.remember("設定ファイル、再起動が必要"),
        "el": mem.remember("Η ΟΔΟΣ είναι κλειστή"),
        "en": mem.remember("workspace lock released before daemon restart"),
    }
    return mem, notes


@pytest.mark.parametrize("query, key", [
    ("кэш", "ru"), ("Кэш сбрасывается", "ru"), ("КЭШ", "ru"), ("«перезапуске»", "ru"),
    ("café", "fr"), ("CAFÉ", "fr"), ("cafe\u0301", "fr"),
    ("数据库连接池必须在关闭前释放", "zh"),  # a whole run, as unicode61 indexes it
    ("数据库", "zh"),  # the beginning of a run (scripts without spaces match as a prefix)
    ("設定ファイル", "ja"), ("再起動が必要", "ja"),
    ("连接池", "zh"), ("释放", "zh"), ("连接池释放", "zh"),  # words inside a run, through its bigrams
    ("ファイル", "ja"), ("起動", "ja"), ("放", "zh"),  # and a run's last character alone
    ("οδος", "el"),
])
def test_words_in_any_script_are_found(scripts, query, key):
    mem, notes = scripts
    for _ in range(2):  # the first recall ranks with FTS5, the next from the in-memory postings
        res = mem.recall(query)
        assert notes[key].id in ids(res), (query, res.render_text())


def test_a_word_inside_a_run_ranks_the_note_that_holds_it_first(mem):
    """Bigrams find a word wherever a run holds it, and rank by how much of the query a note holds."""
    car = mem.remember("我昨天在北京买了一辆新自行车")
    mem.remember("我昨天在北京吃了烤鸭")
    mem.remember("自行")
    res = mem.recall("自行车")
    assert res.hits[0].note.id == car.id, res.render_text()


def test_cjk_bigrams_cost_nothing_for_other_scripts():
    assert ranking.subtokens("workspaceLock", "plain words, café", [], []) == "workspace lock workspacelock"
    assert ranking.cjk_grams("東京で", index=True) == ["東京", "京で", "で"]
    assert ranking.cjk_grams("東京で") == ["東京", "京で"]


def test_a_mixed_query_keeps_both_scripts(scripts):
    mem, notes = scripts
    res = mem.recall("кэш daemon")
    assert {notes["ru"].id, notes["en"].id} <= ids(res)


def test_non_ascii_terms_reach_the_match_and_the_tiers():
    assert ranking.query_terms("Кэш сбрасывается") == ["Кэш", "сбрасывается"]
    assert ranking.query_terms("le café") == ["le", "café"]
    words = dict(ranking.match_words("数据库，连接 lock"))
    assert words["数据库"] and words["连接"] and not words["lock"]  # prefix only where words run together
    tiers = match_tiers("数据库 кэш")
    assert '"数据库"*' in tiers[-1] and '"кэш"' in tiers[-1]


def test_non_ascii_path_matches_through_the_paths_column(mem):
    note = mem.remember("unrelated words", kind="gotcha", paths=["docs/café/menü.md"])
    res = mem.recall("nothing in common", paths=["docs/café/menü.md"])
    assert note.id in ids(res)


# ---- paths -----------------------------------------------------------------------------------

@pytest.fixture
def anchored(mem):
    notes = {
        "root": mem.remember("whole project gotcha", kind="gotcha", paths=["."]),
        "a.py": mem.remember("anchored a.py", kind="gotcha", paths=["lib/a.py"]),
        "star": mem.remember("middle star", kind="gotcha", paths=["src/*/engine.py"]),
        "md": mem.remember("markdown files", kind="gotcha", paths=["*.md"]),
        "other": mem.remember("other file", kind="gotcha", paths=["tools/run.sh"]),
    }
    return mem, notes


@pytest.mark.parametrize("path, want", [
    ("src/store/engine.py", {"root", "star"}),
    ("lib/a.py", {"root", "a.py"}),
    ("lib/*.py", {"root", "a.py"}),
    ("lib/**", {"root", "a.py", "md"}),  # lib/** names lib/x.md too
    ("lib/", {"root", "a.py", "md"}),
    ("src/store", {"root", "star", "md"}),
    ("docs/*.md", {"root", "md"}),
    (".", {"root", "a.py", "star", "md", "other"}),
    ("tools/run.sh", {"root", "other"}),
])
def test_paths_match_both_ways(anchored, path, want):
    mem, notes = anchored
    for _ in range(2):
        res = mem.recall(paths=[path], limit=50)
        assert ids(res) == {notes[k].id for k in want}, (path, res.render_text())
        res = mem.recall("gotcha anchored star markdown file", paths=[path], limit=50)
        assert ids(res) == {notes[k].id for k in want}, (path, res.render_text())


def test_context_pack_loads_a_whole_project_gotcha(anchored):
    mem, notes = anchored
    import json

    text = json.dumps(mem.read(task="implementation", paths=["src/store/engine.py"]).to_dict())
    assert f"#{notes['root'].id}" in text and f"#{notes['star'].id}" in text


SEGMENTS = ["src", "a", "b", "x.py", "y.md", "*", "**", "*.py", "a*", "?.py", "[ab]", "[!a]*", "."]
PATH = st.builds(lambda parts, slash: "/".join(parts) + ("/" if slash else ""),
                 st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4), st.booleans())


# Every concrete path of up to four parts: a brute-force reading of "some path named by both".
UNIVERSE = [u for n in range(1, 5) for u in
            ("/".join(p) for p in __import__("itertools").product(["src", "a", "b", "x.py", "y.md"], repeat=n))]


def _names(pattern: str, concrete: str) -> bool:
    """`pattern` (file, folder, glob or `.`) names `concrete`: matches it, or may be a folder
    (ends in `/`, or its last part has no extension) and matches a folder above it."""
    from fnmatch import fnmatchcase

    p = pattern[2:] if pattern.startswith("./") else pattern
    if p.rstrip("/") in ("", "."):
        return True
    last = p.rstrip("/").rsplit("/", 1)[-1]
    folder = p.endswith("/") or "." not in last[1:]
    p = p.rstrip("/")
    parts = concrete.split("/")
    heads = [concrete] + (["/".join(parts[:i]) for i in range(1, len(parts))] if folder else [])
    return any(fnmatchcase(h, v) for h in heads for v in {p, p.replace("**/", "")})


def _oracle(anchor: str, query: str) -> bool:
    return any(_names(anchor, u) and _names(query, u) for u in UNIVERSE)


@settings(max_examples=600, deadline=None)
@given(PATH, PATH)
def test_prefix_lookup_never_loses_a_match(anchor, query):
    """Whatever both sides are (files, folders, globs, `.`): an anchor and a touched path that
    name a common path match, and the matching anchor's prefix is one the SQL pre-filter looks
    up (an ancestor of the query's literal folder or a prefix below it)."""
    if _oracle(anchor, query):
        assert path_matches(anchor, query), (anchor, query)
    if path_matches(anchor, query):
        ancestors, (lo, hi) = candidate_prefixes(query)
        prefix = path_prefix(anchor)
        assert prefix in ancestors or lo <= prefix < hi, (anchor, query, prefix)


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    rnd = random.Random(7)
    mem = _open(tmp_path_factory.mktemp("reach"))
    anchors = {}
    for i in range(150):
        paths = sorted({"/".join(rnd.choice(SEGMENTS) for _ in range(rnd.randint(1, 4))) + rnd.choice(["", "/"])
                        for _ in range(rnd.randint(1, 2))})
        from memory_custodian.ledger.storage.inputs import clean_paths

        note = mem.remember(f"note {i} about paths", kind="gotcha", paths=paths)
        anchors[note.id] = clean_paths(paths)
    return mem, anchors


@settings(max_examples=100, deadline=None)
@given(PATH)
def test_sql_path_filter_equals_brute_force(many, query):
    """The path filter recall runs in SQL (prefix lookup, then `path_match`) keeps exactly the
    notes a check of every anchor keeps. (That check never misses what the brute-force oracle
    finds: `test_prefix_lookup_never_loses_a_match`; checking it here too cost two minutes.)"""
    from memory_custodian.ledger.storage.inputs import clean_paths

    mem, anchors = many
    (query,) = clean_paths([query]) or ["."]
    want = {n for n, globs in anchors.items() if any(path_matches(g, query) for g in globs)}
    assert ids(mem.recall(paths=[query], limit=500)) == want
    assert ids(mem.recall("paths", paths=[query], limit=500)) == want
