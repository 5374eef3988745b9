"""The derived index: incremental catch-up equals a fresh rebuild; it is a disposable cache."""

from __future__ import annotations

import shutil
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ledger_fold import as_dicts, histories, tmp_memory

from memory_custodian.ledger.index.index import Index
from memory_custodian.ledger.storage.store import Ledger, encode_event

TERMS = ("body", "title", "snake", "camel", "camelcase", "newer", "src", "x.py")


def dump(index: Index) -> dict:
    db = index.db
    out = {
        "notes": db.execute("SELECT n.id, n.kind, n.priority, n.prio, n.state, n.scope, n.branch, n.created_at, "
                            "n.expires, t.title, t.body, t.tags_text, t.paths_text, t.json "
                            "FROM notes n JOIN note_text t ON t.rowid = n.rowid ORDER BY n.id").fetchall(),
        "tags": db.execute("SELECT tag, n.id FROM note_tags JOIN notes n ON n.rowid = note ORDER BY 1, 2").fetchall(),
        "paths": db.execute("SELECT prefix, n.id FROM note_paths JOIN notes n ON n.rowid = note ORDER BY 1, 2").fetchall(),
    }
    # the FTS index itself, token by token: a delete that gave FTS5 other text than it indexed leaves
    # tokens behind (the subtokens are indexed, not stored, and computed again for a delete)
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.dump_vocab USING fts5vocab(main, notes_fts, instance)")
    out["fts"] = db.execute("SELECT v.term, n.id, v.col, v.offset FROM temp.dump_vocab v "
                            "JOIN notes n ON n.rowid = v.doc ORDER BY 1, 2, 3, 4").fetchall()
    for term in TERMS:
        out[term] = db.execute("SELECT n.id FROM notes_fts JOIN notes n ON n.rowid = notes_fts.rowid "
                               "WHERE notes_fts MATCH ? ORDER BY n.id", (f'"{term}"',)).fetchall()
    return out


def assert_equals_rebuild_and_replay(index: Index, ledger: Ledger, scratch) -> list:
    """`index` (caught up incrementally) equals a fresh rebuild of the same shards in `scratch`, and
    both agree with a full replay. Returns the replay's problems."""
    fresh = Index(Ledger(scratch / "docs" / "memory"))
    shutil.copytree(ledger.dir, fresh.ledger.dir)
    fresh.rebuild()
    assert dump(index) == dump(fresh)
    fresh.close()
    rep = ledger.load()
    assert as_dicts(rep.notes) == {n.id: as_dicts({n.id: n})[n.id] for n in index.all_notes()}
    return rep.problems


def append(ledger: Ledger, lines_by_shard: list[tuple[str, str]]) -> None:
    ledger.dir.mkdir(parents=True, exist_ok=True)
    for shard, line in lines_by_shard:
        with open(ledger.dir / shard, "a", encoding="utf-8") as fh:
            fh.write(line)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.lists(st.integers(0, 30), max_size=4), st.randoms(use_true_random=False), st.booleans())
def test_incremental_catch_up_equals_fresh_rebuild(events, cuts, rnd, torn):
    items = [(ev["at"][:7] + ".jsonl", encode_event(ev)) for ev in events]
    if items and rnd.random() < 0.3:
        items.append(rnd.choice(items))  # the same event twice (a cherry-pick, a re-applied merge)
    if rnd.random() < 0.5:
        rnd.shuffle(items)  # a union merge can append lines older than what is there
    bounds = sorted({0, len(items), *[c % (len(items) + 1) for c in cuts]})
    a, b = tmp_memory(), tmp_memory()
    try:
        ledger = Ledger(a / "docs" / "memory")
        index = Index(ledger)
        for lo, hi in pairwise(bounds):
            chunk = items[lo:hi]
            if torn and chunk:
                # the last line arrives in two writes; the index must not consume the half line
                shard, line = chunk[-1]
                append(ledger, chunk[:-1] + [(shard, line[:7])])
                assert index.catch_up()["mode"] in ("incremental", "current")
                append(ledger, [(shard, line[7:])])
            else:
                append(ledger, chunk)
            result = index.catch_up()
            assert result["mode"] in ("incremental", "current"), result
        assert_equals_rebuild_and_replay(index, ledger, b)
        index.close()
    finally:
        shutil.rmtree(a)
        shutil.rmtree(b)


def test_rewrite_triggers_rebuild_and_deleting_is_safe(tmp_path):
    from memory_custodian import Memory

    (tmp_path / "docs" / "memory").mkdir(parents=True)
    (tmp_path / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
    mem = Memory.open(tmp_path)
    a = mem.remember("alpha note about sqlite locking")
    b = mem.remember("beta note")
    index = Index(Ledger(mem.memory_dir))
    index.catch_up()
    assert index.catch_up()["mode"] == "current"
    mem.remember("gamma")
    assert index.catch_up()["mode"] == "incremental"
    mem.forget_note(b.id)  # rewrites a shard: the other index sees a shrink or a changed prefix
    index2 = Index(Ledger(mem.memory_dir))
    assert index2.get_note(b.id).state == "forgotten"
    index.close()
    index2.close()
    for p in (mem.memory_dir / ".cache").glob("index.sqlite*"):
        p.unlink()
    assert [h.note.id for h in mem.recall("sqlite").hits] == [a.id]
    # a damaged cache is rebuilt, never trusted
    (mem.memory_dir / ".cache" / "index.sqlite").write_bytes(b"garbage" * 100)
    for p in (mem.memory_dir / ".cache").glob("index.sqlite-*"):
        p.unlink()
    assert [h.note.id for h in mem.recall("sqlite").hits] == [a.id]


def test_every_index_connection_has_the_page_cache_and_skips_fsync(tmp_path):
    """Recall's speed on big ledgers rests on the page cache (a third of its time at 74,900 notes
    with SQLite's default): every way of opening the index gets it, and keeps it after a rebuild,
    and the fsyncs stay off, also on an index re-created because it was stale or damaged."""
    from memory_custodian import Memory
    from memory_custodian.ledger.index.index_rows import PAGE_CACHE_KIB

    (tmp_path / "docs" / "memory").mkdir(parents=True)
    (tmp_path / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
    mem = Memory.open(tmp_path)
    mem.remember("alpha note about sqlite locking")

    def pragmas(index):
        return (index.db.execute("PRAGMA cache_size").fetchone()[0],
                index.db.execute("PRAGMA synchronous").fetchone()[0])

    want = (-PAGE_CACHE_KIB, 0)
    index = Index(Ledger(mem.memory_dir))
    assert pragmas(index) == want
    index.rebuild()
    assert pragmas(index) == want  # the bulk load's own cache size is undone
    index.db.execute("UPDATE meta SET value = 'stale' WHERE key = 'schema'")
    index.close()
    stale = Index(Ledger(mem.memory_dir))
    assert pragmas(stale) == want  # re-created from scratch on a new connection
    assert stale.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] != "stale"
    stale.close()
    cache = mem.memory_dir / ".cache"
    for p in cache.glob("index.sqlite-*"):
        p.unlink()
    (cache / "index.sqlite").write_bytes(b"garbage" * 100)
    damaged = Index(Ledger(mem.memory_dir))
    assert pragmas(damaged) == want
    damaged.close()


OLD_JSON_FIELDS = ("id", "kind", "priority", "provenance", "quote", "scope", "branch", "expires", "supersedes",
                   "created_at", "created_by", "state", "superseded_by", "state_reason", "updated_at", "last_event",
                   "event_count", "extra", "created_event")  # schema 6: one positional array per note


def test_an_index_of_another_schema_or_field_layout_is_rebuilt_not_misread(tmp_path, monkeypatch):
    import json

    from memory_custodian import Memory
    from memory_custodian.ledger.index import index_rows

    (tmp_path / "docs" / "memory").mkdir(parents=True)
    (tmp_path / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
    mem = Memory.open(tmp_path)
    for i in range(3):
        mem.remember(f"note {i} about sqlite", tags=("db",), paths=("src/db.py",))
    expected = {n.id: n for n in mem.ledger().load().notes.values()}
    index = Index(Ledger(mem.memory_dir))
    index.catch_up()
    # what schema 6 stored: the same rows, the JSON as an array in that version's field order
    for rowid, stored in index.db.execute("SELECT rowid, json FROM note_text").fetchall():
        note = index_rows.row_note((*index.db.execute(f"SELECT {index_rows.NOTE_COLS} FROM {index_rows.NOTE_FROM} "
                                                      "WHERE n.rowid = ?", (rowid,)).fetchone()[:-1], stored))
        old = json.dumps([note.__dict__[f] for f in OLD_JSON_FIELDS], separators=(",", ":"))
        index.db.execute("UPDATE note_text SET json = ? WHERE rowid = ?", (old, rowid))
    index.db.execute("UPDATE meta SET value = '6' WHERE key = 'schema'")
    index.db.execute("DELETE FROM meta WHERE key = 'fields'")
    index.close()
    reopened = Index(Ledger(mem.memory_dir))
    assert reopened.catch_up()["mode"] != "current"  # emptied and read again from the shards
    assert {n.id: n for n in reopened.all_notes()} == expected
    assert dict(reopened.db.execute("SELECT key, value FROM meta"))["schema"] == index_rows.SCHEMA_VERSION
    reopened.close()
    # a field layout other than the one the index was written with (a field added) rebuilds it too
    monkeypatch.setattr("memory_custodian.ledger.index.index_file.FIELD_SIGNATURE", index_rows.FIELD_SIGNATURE + ",new:json")
    again = Index(Ledger(mem.memory_dir))
    assert again.catch_up()["mode"] != "current"
    assert {n.id: n for n in again.all_notes()} == expected
    again.close()


def test_the_text_columns_are_the_full_text_columns_in_order():
    from memory_custodian.ledger.index import index_rows
    from memory_custodian.ledger.recall import ranking

    assert index_rows.TEXT_COLUMNS + ("subtokens",) == ranking.FTS_COLUMNS


import pytest  # noqa: E402


@pytest.mark.parametrize("table", ["notes", "events", "note_text", "notes_fts"])
def test_a_table_dropped_under_an_open_connection_is_rebuilt_by_every_reader(tmp_path, table):
    """A long-lived process (the MCP server, the viewer) keeps its connection while someone damages
    the file: each reader rebuilds the cache once instead of failing, and `reindex` repairs it."""
    import sqlite3

    from memory_custodian.memory import Memory

    memory = Memory.open(tmp_path)
    memory.init()
    note = memory.remember("Round refunds half-even in the payments module", kind="directive")
    readers = {"recall": lambda: [h.note.id for h in memory.recall("refunds").hits],
               "read": lambda: note.id in memory.read("implementation").rendered,
               "expand": lambda: bool(memory.expand([note.id])), "notes": lambda: [n.id for n in memory.notes()],
               "history": lambda: bool(memory.history(note.id)), "reindex": lambda: memory.reindex().notes}
    expected = {name: read() for name, read in readers.items()}
    for name, read in readers.items():
        with sqlite3.connect(tmp_path / "docs/memory/.cache/index.sqlite") as db:
            db.execute(f"DROP TABLE IF EXISTS {table}")
        assert read() == expected[name], name
