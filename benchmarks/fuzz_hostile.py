"""Hostile inputs found by attack runs, each family drawn at random sizes and values.

Every case holds the harness contract (a result or one of the tool's one-line errors, nothing
changed after an error) and one more: after any refusal, an ordinary write still succeeds, so one
bad input can never block the writes that follow it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from fuzz_harness import Bug, expect_result_or_error, restore_shards
from hypothesis import strategies as st

# a shard line's numbers beyond what any real ledger holds (JSON has no integer limit)
NUMBER_FIELDS = ["txn_n", "v"]
INDEX_TABLES = ["notes", "notes_fts", "meta", "events"]
NAME_CHARS = st.sampled_from(["a", "é", "名", "🙂", "-", "_", "x"])


def hostile_inputs():
    huge = st.one_of(st.integers(-10**30, 10**30), st.sampled_from([0, -1, 2**63, 2**64, 10**6 + 1]))
    return st.one_of(
        st.tuples(st.just("shard_number"), st.sampled_from(NUMBER_FIELDS), huge),
        st.tuples(st.just("curated_name"), st.sampled_from(["rule", "profile", "area"]),
                  st.text(NAME_CHARS, min_size=60, max_size=300)),
        st.tuples(st.just("body_size"), st.sampled_from(["text", "title", "quote", "tag", "path"]),
                  st.integers(1_000, 1_200_000)),
        st.tuples(st.just("index_damage"), st.sampled_from(INDEX_TABLES), st.sampled_from(["drop", "empty"])),
        st.tuples(st.just("export_name"), st.integers(200, 400), st.sampled_from(["a", "é", "🙂"])),
    )


def _shard_number(memory, ctx, field, value):
    shard = sorted((Path(memory.memory_dir) / "ledger").glob("*.jsonl"))[0]
    lines = shard.read_bytes().decode("utf-8").splitlines()
    event = json.loads(lines[0])
    event[field] = value
    shard.write_text("\n".join([json.dumps(event, sort_keys=True)] + lines[1:]) + "\n", encoding="utf-8")
    try:
        for what, call in (("recall", lambda: memory.recall("rounding")), ("read", lambda: memory.read("implementation")),
                           ("expand", lambda: memory.expand(ctx["note_ids"][:1])), ("notes", memory.notes)):
            expect_result_or_error(f"{what} after {field}={value}", call)
    finally:
        restore_shards(memory, ctx)
        memory.reindex()


def _curated_name(memory, ctx, type_, name):
    kind, _ = expect_result_or_error(f"add --type {type_} --name <{len(name.encode())} bytes>", memory.add,
                                     "A rule with a long name", type=type_, name=name, memory_dir=memory.memory_dir)
    return kind


def _body_size(memory, ctx, field, size):
    value = "w" * size
    fields = {"text": {"text": value}, "title": {"title": value}, "quote": {"quote": value},
              "tag": {"tags": [value]}, "path": {"paths": [value]}}[field]
    text = fields.pop("text", "a note of ordinary size")
    kind, out = expect_result_or_error(f"remember with a {size}-character {field}", memory.remember, text,
                                       memory_dir=memory.memory_dir, **fields)
    if kind == "error" and len(out.one_line()) > 400:
        raise Bug(f"remember's error echoes {len(out.one_line())} characters of input")
    if kind == "ok":
        expect_result_or_error("forget --note", memory.forget_note, out.note.id if hasattr(out, "note") else out.id)
    return kind


def _index_damage(memory, ctx, table, how):
    index = Path(memory.memory_dir) / ".cache" / "index.sqlite"
    memory.recall("rounding")  # the index exists before it is damaged
    with sqlite3.connect(index) as db:
        present = {r[0] for r in db.execute("select name from sqlite_master where type in ('table', 'view')")}
        if table not in present:
            return "ok"
        try:
            db.execute(f"drop table {table}" if how == "drop" else f"delete from {table}")
        except sqlite3.OperationalError:  # SQLite refused this damage (a trigger needs the table): no case
            return "ok"
    for what, call in (("read", lambda: memory.read("implementation")), ("recall", lambda: memory.recall("rounding")),
                       ("reindex", memory.reindex)):
        expect_result_or_error(f"{what} after {how} {table}", call)
    kind, result = expect_result_or_error("recall after reindex", memory.recall, "rounding")
    if kind == "ok" and not result.hits:
        raise Bug(f"reindex after {how} {table} did not bring the notes back")


def _export_name(memory, ctx, length, char):
    path = Path(ctx["tmp"]) / (char * length)
    expect_result_or_error(f"export --path <{len(path.name.encode())} bytes>", memory.export, str(path),
                           memory_dir=memory.memory_dir)


FAMILIES = {"shard_number": _shard_number, "curated_name": _curated_name, "body_size": _body_size,
            "index_damage": _index_damage, "export_name": _export_name}


def check_hostile(value, ctx):
    family, *args = value
    memory = ctx["memory"]
    outcome = FAMILIES[family](memory, ctx, *args) or "ok"
    # one bad input never blocks the writes that follow it
    for what, call in (("add", lambda: memory.add("Keep the fuzz constraint", type="constraint")),
                       ("remember", lambda: memory.remember("a note after a hostile input"))):
        kind, out = expect_result_or_error(f"{what} after {family}", call)
        if kind == "error":
            raise Bug(f"after {family} {args!r:.80}, an ordinary {what} fails: {out.one_line()}")
    return outcome
