"""The ledger tier's Python API: remember, lifecycle verbs, ids, history, forget."""

from __future__ import annotations

import json

import pytest

from memory_custodian.base.errors import InvalidInput, NotFound, Refused, SecretFound
from memory_custodian.ledger.storage.store import Ledger


def shard_lines(mem):
    return [json.loads(line) for p in sorted((mem.memory_dir / "ledger").glob("*.jsonl"))
            for line in p.read_text(encoding="utf-8").splitlines()]


def test_remember_writes_one_v1_line(mem):
    note = mem.remember("Lock is released before restart\nbecause the daemon re-acquires it", kind="gotcha",
                        priority="high", tags=["Lock", "daemon"], paths=["src/daemon/"])
    assert len(note.id) == 8 and note.state == "active" and note.provenance == "human"
    assert note.title == "Lock is released before restart"
    [ev] = shard_lines(mem)
    assert ev["op"] == "create" and ev["v"] == 1 and ev["txn_n"] == 1 and len(ev["id"]) == 26
    assert ev["tags"] == ["daemon", "lock"] and ev["at"].endswith("Z") and len(ev["at"]) == 24
    path = next((mem.memory_dir / "ledger").glob("*.jsonl"))
    assert path.name == ev["at"][:7] + ".jsonl"
    raw = path.read_text(encoding="utf-8")
    assert raw == json.dumps(ev, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def test_title_defaults_to_first_line_max_80(mem):
    note = mem.remember("x" * 200)
    assert len(note.title) == 80 and note.title.endswith("…")


def test_lifecycle_and_illegal_transitions_write_nothing(mem):
    note = mem.remember("a finding")
    assert mem.flag_stale(note.id[:4], reason="old").state == "stale"
    assert mem.reinstate(note.id, reason="still true").state == "active"
    assert mem.revoke(note.id, reason="wrong").state == "revoked"
    before = shard_lines(mem)
    with pytest.raises(Refused, match="it is revoked"):
        mem.revoke(note.id, reason="again")
    with pytest.raises(Refused):
        mem.expire(note.id, reason="x")
    assert shard_lines(mem) == before
    with pytest.raises(InvalidInput, match="reason"):
        mem.revoke(note.id, reason="")
    assert mem.reinstate(note.id, reason="back").state == "active"
    assert mem.expire(note.id, reason="done").state == "expired"
    assert [e["op"] for e in mem.history(note.id).events] == ["create", "flag_stale", "reinstate", "revoke",
                                                       "reinstate", "expire"]


def test_supersede_is_one_txn(mem):
    old = mem.remember("use tool A", kind="decision", tags=["tools"])
    new = mem.supersede(old.id, "use tool B", reason="A is deprecated")
    assert new.supersedes == old.id and new.kind == "decision" and new.tags == ("tools",)
    assert mem.note(old.id).state == "superseded" and mem.note(old.id).superseded_by == new.id
    evs = shard_lines(mem)[1:]
    assert {e["op"] for e in evs} == {"create", "supersede"} and len({e["txn"] for e in evs}) == 1
    assert all(e["txn_n"] == 2 for e in evs)
    with pytest.raises(Refused):
        mem.flag_stale(old.id, reason="x")


def test_agent_cannot_reach_human(mem):
    with pytest.raises(Refused, match="human"):
        mem.remember("x", actor="agent", provenance="human")
    note = mem.remember("x", actor="agent")
    assert note.provenance == "agent"
    with pytest.raises(Refused, match="only a person"):
        mem.promote(note.id, to="human", actor="agent")
    assert mem.promote(note.id, to="human").provenance == "human"
    with pytest.raises(Refused, match="already human"):
        mem.promote(note.id, to="agent")
    # no user message is on record: an agent's quote is refused, never trusted (tests/test_trust_doors.py)
    quoted = mem.remember("always run the linter", actor="agent", quote="always run the linter")
    assert (quoted.provenance, quoted.quote) == ("agent", None) and "quote refused" in quoted.quote_refused


def test_secrets_refused(mem):
    with pytest.raises(SecretFound):
        mem.remember("deploy key AKIAIOSFODNN7EXAMPLE here")
    assert not (mem.memory_dir / "ledger").exists() or shard_lines(mem) == []


def test_ids_and_prefixes(mem):
    note = mem.remember("hello")
    assert mem.note("#" + note.id[:4]).id == note.id
    with pytest.raises(InvalidInput):
        mem.note(note.id[:3])
    with pytest.raises(NotFound):
        mem.note("zzzz" if not note.id.startswith("zzzz") else "yyyy")


def test_task_default_lifetime_and_renewal(mem):
    note = mem.remember("checkpoint", kind="task")
    assert note.expires is not None and note.expires > note.created_at
    later = "2099-01-01T00:00:00.000Z"
    assert note.state_at(later) == "expired"
    with pytest.raises(InvalidInput):
        mem.remember("x", expires="2001-01-01")
    assert mem.remember("x", expires="3").expires


def test_forget_removes_text_keeps_tombstone(mem):
    keep = mem.remember("keeper")
    old = mem.remember("secret-ish plan for the launch")
    new = mem.supersede(old.id, "the launch plan v2", reason="updated")
    out = mem.forget_note(old.id)
    assert "git history" in out.warning
    text = "".join(p.read_text(encoding="utf-8") for p in (mem.memory_dir / "ledger").glob("*.jsonl"))
    assert "secret-ish" not in text
    rep = Ledger(mem.memory_dir).load()
    assert rep.problems == []
    assert rep.notes[old.id].state == "forgotten" and rep.notes[new.id].state == "active"
    assert rep.notes[keep.id].state == "active"
    with pytest.raises(Refused):
        mem.reinstate(old.id, reason="bring it back")
    assert old.id not in {n.id for n in mem.notes()}
    assert old.id in {n.id for n in mem.notes(include_forgotten=True)}
