"""doctor: every problem a merge or a crash can leave, reported; the safe ones repaired with a backup."""

from __future__ import annotations

import json
from pathlib import Path

from memory_custodian.ledger.storage.store import Ledger, encode_event


def test_doctor_reports_each_kind_of_problem_and_repairs_the_safe_ones(mem):
    a = mem.remember("first note")
    mem.revoke(a.id, reason="wrong")
    b = mem.remember("second note")
    ledger = Ledger(mem.memory_dir)
    shard = Path(ledger.shards()[0])
    lines = shard.read_text(encoding="utf-8").splitlines(keepends=True)
    revoke = json.loads(lines[1])
    # a merge brings: the same revoke again under a new id (illegal), a duplicate line, an unknown op
    again = dict(revoke, id=revoke["id"][:-1] + ("0" if revoke["id"][-1] != "0" else "1"),
                 txn=revoke["txn"][:-1] + ("0" if revoke["txn"][-1] != "0" else "1"))
    unknown = dict(revoke, op="archive", id="01ZZZZZZZZZZZZZZZZZZZZZZZZ", txn="01ZZZZZZZZZZZZZZZZZZZZZZZY")
    create_c = json.loads(lines[2])
    half_txn = dict(create_c, note="cccccccc", id="01YYYYYYYYYYYYYYYYYYYYYYYY", txn="01YYYYYYYYYYYYYYYYYYYYYYYX",
                    txn_n=2)
    shard.write_text("".join(lines) + encode_event(again) + lines[0] + json.dumps(unknown) + "\n"
                     + encode_event(half_txn) + '{"v":1,"torn', encoding="utf-8")
    report = mem.doctor()
    codes = sorted(p["code"] for p in report.problems)
    assert codes == ["bad-event", "duplicate-event", "illegal-transition", "incomplete-txn", "torn-tail"]
    assert not report.ok
    assert all(p["where"].startswith("ledger/") for p in report.problems if p["code"] != "duplicate-event")
    repaired = mem.doctor(repair=True)
    # removed: the half txn and the identical copy of the create (the first copy stays)
    assert repaired.repaired["trimmed_tails"] == 1 and repaired.repaired["removed_lines"] == 2
    assert sorted(p["code"] for p in repaired.remaining) == ["bad-event", "illegal-transition"]
    assert (mem.memory_dir / repaired.repaired["backups"][0]).read_text(encoding="utf-8").endswith('{"v":1,"torn')
    assert repaired.index["mode"] == "rebuild"  # the bad line needs a person, and costs only that line
    shard.write_text("".join(line for line in shard.read_text(encoding="utf-8").splitlines(keepends=True)
                             if '"archive"' not in line), encoding="utf-8")
    # the notes themselves are untouched
    assert {n.id: n.state for n in mem.notes()} == {a.id: "revoked", b.id: "active"}


def test_forgotten_leftovers_from_an_old_branch_are_stripped(mem):
    a = mem.remember("text that must go")
    shard = Path(Ledger(mem.memory_dir).shards()[0])
    old_line = shard.read_text(encoding="utf-8")
    mem.forget_note(a.id)
    with open(shard, "a", encoding="utf-8") as fh:
        fh.write(old_line)  # a merge from a branch that still had the create
    report = mem.doctor()
    assert [p["code"] for p in report.problems] == ["forgotten-leftovers"]
    assert mem.note(a.id).state == "forgotten"
    kept = mem.doctor(repair=True)  # a forget line from elsewhere: its text goes only when asked
    assert "text that must go" in shard.read_text(encoding="utf-8") and not kept.ok
    assert any("--repair --yes" in w for w in kept.warnings)
    mem.doctor(repair=True, yes=True)
    assert "text that must go" not in shard.read_text(encoding="utf-8")
    assert mem.doctor().ok
