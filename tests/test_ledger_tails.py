"""Shard edges every reader must agree on: a last event without its newline, hidden files, duplicate lines."""

from __future__ import annotations

import json
import shutil
from itertools import pairwise
from pathlib import Path

from conftest import run_cli, unfenced
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ledger_fold import histories, tmp_memory
from test_ledger_index import assert_equals_rebuild_and_replay, dump

from memory_custodian.ledger.index.index import Index
from memory_custodian.ledger.storage.store import Ledger, encode_event


def cli(root, *args):
    return run_cli(*args, "--project-root", str(root))


def drop_final_newline(path) -> None:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    path.write_bytes(data[:-1])


def drop_cache(mem) -> None:
    shutil.rmtree(mem.memory_dir / ".cache", ignore_errors=True)


# ---- a whole last event without its newline -----------------------------------------------------


def test_a_whole_last_event_without_its_newline_is_read_by_every_reader_and_kept_by_repair(memory):
    memory.remember("first note alpha")
    beta = memory.remember("second note beta", kind="directive")
    shard = Path(Ledger(memory.memory_dir).shards()[0])
    drop_final_newline(shard)
    before = shard.read_bytes()
    drop_cache(memory)
    root = memory.root
    r = cli(root, "recall", "beta")
    assert r.returncode == 0 and unfenced(r.stdout).startswith(f"[#{beta.id}] directive/medium · second note beta"), r.stdout
    r = cli(root, "read", "--task", "implementation")
    assert r.returncode == 0 and "## Ledger directives" in r.stdout and "second note beta" in r.stdout
    r = cli(root, "export", "--path", "out.md")
    assert r.returncode == 0 and "(2 notes" in r.stdout, r.stdout + r.stderr
    r = cli(root, "doctor", "--ledger-only")
    assert r.returncode == 0 and r.stdout.splitlines() == ["1 shard(s), 2 events, 2 notes", "ok"], r.stdout
    r = cli(root, "doctor", "--ledger-only", "--repair")
    assert r.returncode == 0 and "torn" not in r.stdout and r.stdout.endswith("ok\n"), r.stdout
    assert shard.read_bytes() == before  # nothing to repair: not even the newline is "fixed"
    assert {n.id for n in memory.notes()} >= {beta.id}


def test_only_a_last_line_that_is_not_a_whole_event_is_torn(mem):
    a = mem.remember("kept note")
    shard = Path(Ledger(mem.memory_dir).shards()[0])
    whole = shard.read_bytes()
    b_line = whole.replace(a.id.encode(), b"bbbbbbbb").replace(b'"id":"01', b'"id":"02', 1).rstrip(b"\n")
    shard.write_bytes(whole + b_line)  # a whole event: read, and left alone by repair
    drop_cache(mem)
    rep = Ledger(mem.memory_dir).load()
    assert not rep.problems and sorted(rep.notes) == sorted([a.id, "bbbbbbbb"])
    assert mem.doctor(repair=True).repaired is None and shard.read_bytes() == whole + b_line
    # a cut-off write, and a JSON object that is not a well-formed event: neither is a whole event
    for torn in (whole[:-40], b'{"v":1,"note":"x"}'):
        shard.write_bytes(whole + torn)
        drop_cache(mem)
        rep = Ledger(mem.memory_dir).load()
        assert [p.code for p in rep.problems] == ["torn-tail"] and list(rep.notes) == [a.id]
        report = mem.doctor(repair=True)
        assert report.repaired["trimmed_tails"] == 1 and report.ok
        assert shard.read_bytes() == whole
        assert (mem.memory_dir / report.repaired["backups"][0]).read_bytes().endswith(torn)


def test_the_next_write_keeps_a_whole_last_event_longer_than_a_mebibyte(mem):
    from memory_custodian.ledger.storage.ids import new_note_id

    # past what `remember` accepts, as a hand-written or merged line can be
    big_id = new_note_id()
    Ledger(mem.memory_dir).append_txn([{"op": "create", "note": big_id, "actor": "human", "kind": "finding",
                                        "priority": "medium", "title": "big note", "body": "x" * 1_200_000,
                                        "tags": [], "paths": [], "provenance": "human", "scope": "workspace"}])
    shard = Path(Ledger(mem.memory_dir).shards()[0])
    drop_final_newline(shard)
    other = mem.remember("after the big one")
    rep = Ledger(mem.memory_dir).load()
    # over the shard line limit: not a line a v1 writer makes, so it is skipped and named, and kept on disk
    assert set(rep.notes) == {other.id}
    assert [p.code for p in rep.problems] == ["bad-event"] and "over the limit" in rep.problems[0].message
    assert rep.problems[0].where.endswith(":1") and big_id in shard.read_text(encoding="utf-8")
    assert not (mem.memory_dir / ".cache" / "torn").exists()


def test_repair_strips_a_forgotten_notes_leftover_without_newline_and_backs_none_of_it_up(mem):
    a = mem.remember("secret text that must go")
    b = mem.remember("unrelated note")
    shard = Path(Ledger(mem.memory_dir).shards()[0])
    old_create = shard.read_text(encoding="utf-8").splitlines()[0]
    mem.forget_note(a.id)
    with open(shard, "a", encoding="utf-8") as fh:
        fh.write(old_create)  # a merge from an older branch, its last line without a newline
    assert [p["code"] for p in mem.doctor().problems] == ["forgotten-leftovers"]
    report = mem.doctor(repair=True, yes=True)
    assert report.ok and report.repaired["removed_lines"] == 1
    assert "secret text" not in shard.read_text(encoding="utf-8")
    backup_dir = mem.memory_dir / ".cache" / "backup"
    assert all("secret text" not in p.read_text(encoding="utf-8") for p in backup_dir.glob("*"))
    assert {n.id: n.state for n in mem.notes(include_forgotten=True)} == {a.id: "forgotten", b.id: "active"}


def test_incremental_index_reads_a_newline_less_last_event_once_and_then_what_follows(mem):
    a = mem.remember("alpha note")
    ledger = Ledger(mem.memory_dir)
    shard = Path(ledger.shards()[0])
    drop_final_newline(shard)
    drop_cache(mem)
    index = Index(ledger)
    index.catch_up()
    assert [n.id for n in index.all_notes()] == [a.id]
    b = mem.remember("beta note")  # the writer ends the line, then appends: a pure append
    assert index.catch_up() == {"mode": "incremental", "events": 1}
    assert {n.id for n in index.all_notes()} == {a.id, b.id}
    assert index.db.execute("SELECT count(*) FROM events").fetchone()[0] == 2
    fresh_dir = tmp_memory()
    try:
        shutil.copytree(ledger.dir, fresh_dir / "docs" / "memory" / "ledger")
        fresh = Index(Ledger(fresh_dir / "docs" / "memory"))
        fresh.rebuild()
        assert dump(index) == dump(fresh)
        fresh.close()
    finally:
        shutil.rmtree(fresh_dir)
    # bytes glued to an indexed line that had no newline make one bad line, for index and replay alike
    drop_final_newline(shard)
    index.catch_up()
    with open(shard, "ab") as fh:
        fh.write(shard.read_bytes().splitlines()[-1] + b"\n")
    problems = ledger.load().problems
    assert [(p.code, p.where.endswith(":2")) for p in problems] == [("bad-event", True)]
    index.catch_up()
    assert index.unread_lines() == (1, 0)
    index.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.lists(st.integers(0, 30), max_size=4), st.randoms(use_true_random=False))
def test_incremental_catch_up_equals_fresh_rebuild_when_newlines_arrive_late(events, cuts, rnd):
    """As `test_ledger_index`'s property, with the last line of any write lacking its newline until the
    next write to that shard (what the writer's tail fix does), or for good."""
    items = [(ev["at"][:7] + ".jsonl", encode_event(ev)) for ev in events]
    if items and rnd.random() < 0.3:
        items.append(rnd.choice(items))
    if rnd.random() < 0.5:
        rnd.shuffle(items)
    bounds = sorted({0, len(items), *[c % (len(items) + 1) for c in cuts]})
    a, b = tmp_memory(), tmp_memory()
    try:
        ledger = Ledger(a / "docs" / "memory")
        ledger.dir.mkdir(parents=True)
        index = Index(ledger)
        open_line: set[str] = set()  # shards whose last line lacks its newline
        for lo, hi in pairwise(bounds):
            chunk = items[lo:hi]
            for k, (shard, line) in enumerate(chunk):
                if shard in open_line:
                    line = "\n" + line
                    open_line.discard(shard)
                if k == len(chunk) - 1 and rnd.random() < 0.6:
                    line = line[:-1]
                    open_line.add(shard)
                with open(ledger.dir / shard, "a", encoding="utf-8") as fh:
                    fh.write(line)
            result = index.catch_up()
            assert result["mode"] in ("incremental", "current"), result
        problems = assert_equals_rebuild_and_replay(index, ledger, b)
        assert not [p for p in problems if p.code == "torn-tail"]
        index.close()
    finally:
        shutil.rmtree(a)
        shutil.rmtree(b)


# ---- one definition of a shard --------------------------------------------------------------------


def test_a_hidden_jsonl_file_is_no_shard_for_anyone_and_doctor_names_it(memory):
    memory.remember("main note")
    memory.remember("note in hidden shard")
    ledger = Ledger(memory.memory_dir)
    shard = Path(ledger.shards()[0])
    lines = shard.read_text(encoding="utf-8").splitlines(keepends=True)
    (ledger.dir / ".2026-10.jsonl").write_text(lines[1], encoding="utf-8")
    shard.write_text(lines[0], encoding="utf-8")
    drop_cache(memory)
    root = memory.root
    r = cli(root, "export", "--path", "a.md")  # no index yet: export replays the shards
    assert r.returncode == 0, r.stderr
    r = cli(root, "recall")
    assert "main note" in r.stdout and "hidden" not in r.stdout
    r = cli(root, "export", "--path", "b.md")  # the index exists now
    assert (root / "a.md").read_bytes() == (root / "b.md").read_bytes()
    assert b"main note" in (root / "a.md").read_bytes() and b"hidden shard" not in (root / "a.md").read_bytes()
    r = cli(root, "doctor", "--ledger-only")
    assert r.returncode == 0 and r.stdout.splitlines() == ["1 shard(s), 1 events, 1 notes", "ok"], r.stdout
    assert r.stderr == ("warning: ledger/.2026-10.jsonl: a hidden file, not read as a shard — rename it without "
                        "the leading dot if its events belong in the ledger, else delete it\n")
    assert json.loads(cli(root, "doctor", "--ledger-only", "--format", "json").stdout)["warnings"] == [r.stderr[9:-1]]


# ---- duplicate lines ------------------------------------------------------------------------------


def test_doctor_repair_removes_identical_copies_of_an_event_and_keeps_the_first(mem):
    mem.remember("dup me")
    shard = Path(Ledger(mem.memory_dir).shards()[0])
    original = shard.read_bytes()
    shard.write_bytes(original + original)  # a cherry-pick and a union merge
    root = mem.root
    r = cli(root, "doctor", "--ledger-only")
    assert r.returncode == 1
    problem = r.stdout.splitlines()[1]
    assert problem.startswith("ledger/") and "duplicate-event" in problem
    assert "identical lines (harmless: replay reads it once) — `doctor --repair` keeps the first" in problem
    assert r.stderr == "error: 1 ledger problem(s) found — run `memory-custodian doctor --repair`\n"
    assert shard.read_bytes() == original + original  # doctor alone changes nothing
    r = cli(root, "doctor", "--ledger-only", "--repair")
    assert r.returncode == 0, r.stdout + r.stderr
    assert shard.read_bytes() == original
    backups = list((mem.memory_dir / ".cache" / "backup").glob(shard.name + ".*"))
    assert [b.read_bytes() for b in backups] == [original + original]
    assert cli(root, "doctor", "--ledger-only").returncode == 0


def test_doctor_asks_a_person_to_choose_between_differing_copies_of_an_event(mem):
    mem.remember("dup me")
    shard = Path(Ledger(mem.memory_dir).shards()[0])
    ev = json.loads(shard.read_text(encoding="utf-8"))
    shard.write_text(encode_event(ev) + encode_event(dict(ev, body="changed on a branch")), encoding="utf-8")
    report = mem.doctor(repair=True)
    assert [p["code"] for p in report.remaining] == ["duplicate-event"] and not report.repairable
    assert "with different content" in report.remaining[0]["message"]
    assert "keep the right line, delete the others by hand" in report.remaining[0]["message"]
