"""The shards: append_txn, replay, torn tails, incomplete txns, loud corruption."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_custodian.base.errors import Refused
from memory_custodian.ledger.storage.store import Ledger, encode_event


@pytest.fixture
def ledger(tmp_path):
    mem = tmp_path / "docs" / "memory"
    mem.mkdir(parents=True)
    (mem / "manifest.md").write_text("# M\n", encoding="utf-8")
    return Ledger(mem)


def create(note, **kw):
    ev = {"op": "create", "note": note, "actor": "human", "kind": "finding", "priority": "medium",
          "title": f"t {note}", "body": f"b {note}", "tags": [], "paths": []}
    ev.update(kw)
    return ev


def test_append_fills_envelope_and_replays(ledger):
    done = ledger.append_txn([create("aaaaaaaa"), create("bbbbbbbb")])
    assert {e["txn"] for e in done} == {done[0]["txn"]} and all(e["txn_n"] == 2 for e in done)
    assert done[0]["id"] < done[1]["id"] and done[0]["at"] == done[1]["at"]
    rep = ledger.load()
    assert set(rep.notes) == {"aaaaaaaa", "bbbbbbbb"} and rep.problems == []
    line = Path(ledger.shards()[0]).read_text(encoding="utf-8").splitlines()[0]
    assert line + "\n" == encode_event(json.loads(line))


def test_illegal_txn_writes_nothing(ledger):
    ledger.append_txn([create("aaaaaaaa")])
    before = Path(ledger.shards()[0]).read_bytes()
    with pytest.raises(Refused):
        ledger.append_txn([create("cccccccc"), {"op": "reinstate", "note": "aaaaaaaa", "actor": "human",
                                                "reason": "x"}])
    with pytest.raises(Refused):
        ledger.append_txn([{"op": "revoke", "note": "dddddddd", "actor": "human", "reason": "x"}])
    assert Path(ledger.shards()[0]).read_bytes() == before


def test_torn_tail_and_incomplete_txn_are_ignored_and_reported(ledger):
    ledger.append_txn([create("aaaaaaaa")])
    shard = Path(ledger.shards()[0])
    done = ledger.append_txn([create("bbbbbbbb"), create("cccccccc")])
    lines = shard.read_bytes().splitlines(keepends=True)
    shard.write_bytes(lines[0] + lines[1] + lines[2][:20])  # a crash mid-write of the second txn
    rep = ledger.load()
    assert set(rep.notes) == {"aaaaaaaa"}
    codes = sorted(p.code for p in rep.problems)
    assert codes == ["incomplete-txn", "torn-tail"]
    assert done[0]["id"] in {p.event for p in rep.problems}
    # the next writer trims the torn fragment (kept under .cache/torn) and appends cleanly
    ledger.append_txn([create("dddddddd")])
    assert (ledger.memory_dir / ".cache" / "torn").is_dir()
    rep = ledger.load()
    assert set(rep.notes) == {"aaaaaaaa", "dddddddd"}
    assert [p.code for p in rep.problems] == ["incomplete-txn"]


def test_a_bad_line_in_the_middle_costs_only_that_line(ledger):
    ledger.append_txn([create("aaaaaaaa")])
    shard = Path(ledger.shards()[0])
    shard.write_bytes(b"{not json\n" + shard.read_bytes())
    rep = ledger.load()
    assert set(rep.notes) == {"aaaaaaaa"}
    assert [(p.code, p.where.split("/")[0], p.where.endswith(".jsonl:1")) for p in rep.problems] == [
        ("bad-event", "ledger", True)]
    assert [p.code for p in ledger.load(lenient=True).problems] == ["bad-event"]


def test_a_newer_format_line_costs_only_that_line_and_says_upgrade(ledger):
    ledger.append_txn([create("aaaaaaaa")])
    shard = Path(ledger.shards()[0])
    ev = json.loads(shard.read_text(encoding="utf-8"))
    ev["v"] = 2
    ev["id"] = ev["id"][:-1] + ("0" if ev["id"][-1] != "0" else "1")
    shard.write_text(encode_event(ev) + shard.read_text(encoding="utf-8"), encoding="utf-8")
    rep = ledger.load()
    assert set(rep.notes) == {"aaaaaaaa"}
    assert [p.code for p in rep.problems] == ["unknown-version"]
    assert "v2" in rep.problems[0].message and "upgrade" in rep.problems[0].message
