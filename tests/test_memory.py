"""`Memory` owns its guarantees: the mirror after every write, errors in its own terms, records back."""

from __future__ import annotations

import json

import pytest

from memory_custodian.base.errors import InvalidInput, Refused
from memory_custodian.cli.terms import CLI_TERMS
from memory_custodian.memory import Memory


def _mirror_under_a_file(memory) -> None:
    """config.json aimed below a regular file: every re-render fails, every write still lands."""
    (memory.root / "afile").write_text("x\n", encoding="utf-8")
    (memory.memory_dir / "config.json").write_text(json.dumps({"export": {"enabled": True, "path": "afile/x.md"}}),
                                                   encoding="utf-8")


def test_memory_is_one_class_of_explicit_methods():
    assert Memory.__mro__ == (Memory, object)


def test_every_ledger_write_re_renders_the_enabled_mirror(mem):
    mem.export_enable()
    mirror = mem.memory_dir / "MEMORY.md"
    note = mem.remember("The mirror follows this note.")
    assert f"#{note.id}" in mirror.read_text() and note.mirror_warning is None
    stale = mem.flag_stale(note.id, reason="check it")
    assert stale.mirror_warning is None and "stale" in mirror.read_text()
    new = mem.supersede(note.id, "The replacement.", reason="newer")
    assert f"#{new.id}" in mirror.read_text()
    forgotten = mem.forget_note(new.id)
    assert "The replacement." not in mirror.read_text() and forgotten.mirror_warning is None


def test_a_mirror_that_cannot_be_rendered_is_the_writes_warning(mem):
    note = mem.remember("Written before the mirror broke.")
    _mirror_under_a_file(mem)
    again = mem.remember("Written while it is broken.")
    assert again.mirror_warning.startswith("the change was written to the ledger (do not repeat it), but the "
                                           "export mirror was not re-rendered: ")
    assert "config.json" in again.mirror_warning and "memory-custodian export" in again.mirror_warning
    assert mem.note(again.id).body == "Written while it is broken."  # the write landed
    forgotten = mem.forget_note(note.id)
    assert forgotten.mirror_warning.startswith("the note was forgotten, but MEMORY.md could not be re-rendered: ")
    assert "mirror_warning" not in forgotten.to_dict()


def test_a_debounced_mirror_renders_once_on_flush(mem):
    mem.export_enable()
    mirror = mem.memory_dir / "MEMORY.md"
    mem.debounce_mirror(interval=60)
    ids = [mem.remember(f"burst note {i}").id for i in range(3)]
    assert not any(f"#{i}" in mirror.read_text() for i in ids)
    assert mem.flush_mirror().written is True
    assert all(f"#{i}" in mirror.read_text() for i in ids)
    assert mem.flush_mirror() is None  # nothing pending


def test_a_missing_reason_names_the_argument_in_each_callers_terms(mem):
    note = mem.remember("needs a reason to go")
    with pytest.raises(InvalidInput) as err:
        mem.revoke(note.id, reason=" ")
    assert err.value.field == "reason"
    assert err.value.one_line() == "revoke needs a reason: pass reason=..."
    assert err.value.one_line(CLI_TERMS) == "revoke needs a reason: pass --reason TEXT"
    with pytest.raises(InvalidInput) as err:
        mem.remember("x", title="t" * 81)
    assert err.value.field == "title" and err.value.one_line(CLI_TERMS) == "--title is 81 characters; keep it to 80"
    assert err.value.one_line() == "title is 81 characters; keep it to 80"


def test_an_illegal_transition_carries_the_state_and_the_verbs_it_allows(mem):
    note = mem.remember("revoked once")
    mem.revoke(note.id, reason="wrong")
    with pytest.raises(Refused) as err:
        mem.flag_stale(note.id, reason="again")
    assert (err.value.state, err.value.allowed) == ("revoked", ("reinstate",))
    assert err.value.one_line(CLI_TERMS) == (f"cannot flag-stale note #{note.id}: it is revoked (allowed: reinstate); "
                                             "nothing was written")


def test_results_are_records_whose_dicts_are_the_json_documents(mem):
    note = mem.remember("one note")
    history = mem.history(note.id)
    assert [e["op"] for e in history.events] == ["create"] and history.to_dict() == {"events": history.events}
    expansion = mem.expand([note.id])
    assert expansion.notes[0]["id"] == note.id and expansion.to_dict() == {"notes": expansion.notes}
    assert mem.reindex().to_dict() == {"mode": "rebuild", "events": 1, "notes": 1, "shards": 1}
    report = mem.doctor()
    assert report.ok and "index" not in report.to_dict() and report.to_dict()["problems"] == []
    assert "index" in mem.doctor(repair=True).to_dict()
    assert mem.export_disable().to_dict() == {"enabled": False, "config": str(mem.memory_dir / "config.json")}


def test_an_unknown_note_suggests_recall_as_each_caller_knows_it(mem):
    from memory_custodian.base.errors import NotFound

    with pytest.raises(NotFound) as err:
        mem.note("zzzzzzzz")
    assert err.value.one_line() == "no note #zzzzzzzz in the ledger — try `Memory.recall`"
    assert err.value.one_line(CLI_TERMS) == "no note #zzzzzzzz in the ledger — try `memory-custodian recall`"
    assert InvalidInput("a {verb: that never closes").one_line() == "a {verb: that never closes"
