"""Edit check-out/check-in: each mapping to events, conflicts, one txn, and a parser that survives people."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledger_text_fixture import write_ledger

from memory_custodian.base.errors import Conflict, InvalidInput, Refused, SecretFound
from memory_custodian.cli.terms import CLI_TERMS
from memory_custodian.ledger.storage.ids import CROCKFORD
from memory_custodian.ledger.storage.model import KINDS, PRIORITIES, Note
from memory_custodian.ledger.text.edit import parse_buffer, plan_changes, render_checkout


def seed(memory):
    a = memory.remember("The lock file is dropped before the daemon restarts.", kind="gotcha", priority="high",
                        tags=["lock"], paths=["src/daemon/*.py"], actor="agent")
    b = memory.remember("Use uv, never pip, in CI.", kind="directive", title="Use uv in CI")
    c = memory.remember("Steps:\n\n### Build\n- kind: of a list\n```\n## Findings\n```\ntrailing  ", kind="finding",
                        title="Release steps")
    return a, b, c


def shard_bytes(memory) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((memory.memory_dir / "ledger").glob("*.jsonl")))


def checkout(memory, tmp_path):
    path = tmp_path / "buffer.md"
    memory.edit_checkout(path)
    return path, path.read_text(encoding="utf-8")


def block_of(text: str, note_id: str) -> str:
    start = text.index(f"### [#{note_id}]")
    nxt = re.search(r"^(### \[#|## )", text[start + 4:], re.M)
    return text[start: start + 4 + nxt.start()] if nxt else text[start:]


def note_by_id(memory, note_id) -> Note:
    return {n.id: n for n in memory.notes()}[note_id]


def events_of_last_txn(memory):
    rep = memory.ledger().load()
    evs = [e for evs in rep.events_by_note.values() for e in evs]
    last = max(evs, key=lambda e: (e["at"], e["id"]))["txn"]
    return [e for e in evs if e["txn"] == last]


# ---- round trip --------------------------------------------------------------------------------

def test_checkout_then_unchanged_checkin_records_nothing(memory, tmp_path):
    seed(memory)
    before = shard_bytes(memory)
    path, _ = checkout(memory, tmp_path)
    result = memory.edit_checkin(path)
    assert result.events == 0 and result.unchanged == 3
    assert shard_bytes(memory) == before


def test_checkout_lists_active_and_stale_notes_only(tmp_path):
    memory = write_ledger(tmp_path / "p")
    path, text = checkout(memory, tmp_path)
    shown = set(re.findall(r"^### \[#(\w+)\]", text, re.M))
    # active: d1rect1v aaaa0000 zzzz0000 s0000002 q0000001; stale: g0tcha01; the task's default expiry has passed
    assert shown == {"d1rect1v", "aaaa0000", "zzzz0000", "s0000002", "q0000001", "g0tcha01"}
    assert memory.edit_checkin(path).events == 0


FRAGMENTS = ["a", "b", " ", "\n", "\r\n", "#", "## ", "### ", "## Findings", "- kind: ", "kind:", "reason: x",
             "<!-- note ", "-->", "```", "~~~", "\\", "[#", "]", "`", ",", "  ", "\t", "é", "- ", ":", "[", "\"", "\x0b"]
text_st = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)
note_id_st = st.text(alphabet=CROCKFORD, min_size=8, max_size=8)


@st.composite
def notes_st(draw):
    ids = draw(st.lists(note_id_st, min_size=1, max_size=5, unique=True))
    notes = []
    for i, nid in enumerate(ids):
        notes.append(Note(
            id=nid, kind=draw(st.sampled_from(KINDS)), priority=draw(st.sampled_from(PRIORITIES)),
            title=draw(text_st), body=draw(text_st), tags=tuple(draw(st.lists(text_st, max_size=3))),
            paths=tuple(draw(st.lists(text_st, max_size=3))), created_at=f"2026-11-0{1 + i % 9}T00:00:00.000Z",
            last_event=f"01JD{i:022d}",
        ))
    return notes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notes_st())
def test_roundtrip_property_any_text_checks_in_as_no_change(notes):
    text = render_checkout(notes, checked_out_at="2026-11-30T00:00:00.000Z")
    buf = parse_buffer(text)
    assert plan_changes(buf, {n.id: n for n in notes}, reason=None) == []
    # what people's editors do to a file changes nothing either
    crlf = "\ufeff" + "\r\n".join(line + "  " for line in text.split("\n"))
    assert plan_changes(parse_buffer(crlf), {n.id: n for n in notes}, reason=None) == []


@settings(max_examples=40, deadline=None)
@given(notes_st(), st.data())
def test_editing_one_body_touches_exactly_that_note(notes, data):
    target = data.draw(st.sampled_from(notes))
    new_body = data.draw(st.sampled_from(["A brand new body.", "### Heading in a body\n\ntext", "```\n## x\n```"]))
    text = render_checkout(notes, checked_out_at="2026-11-30T00:00:00.000Z")
    blocks = parse_buffer(text).blocks
    changed = next(b for b in blocks if b.id == target.id)
    # rewrite the buffer with that block's body replaced
    edited = render_checkout([n if n.id != target.id else _with_body(n, new_body) for n in notes],
                             checked_out_at="2026-11-30T00:00:00.000Z")
    manifest_end = text.index("-->\n")
    edited = text[:manifest_end] + edited[edited.index("-->\n"):]  # keep the original check-out record
    marker = re.compile(rf"^<!-- note {target.id} .*$", re.M)
    edited = marker.sub(lambda _: marker.search(text).group(0), edited)  # and the block's own record
    changes = plan_changes(parse_buffer(edited), {n.id: n for n in notes}, reason=None)
    if changed.body.strip() == new_body.strip():
        assert changes == []
    else:
        assert [(c.action, c.note) for c in changes] == [("supersede", target.id)]
        assert "body" in changes[0].changed and changes[0].block.body == new_body


def _with_body(note: Note, body: str) -> Note:
    return note.replace(body=body)


# ---- each mapping ------------------------------------------------------------------------------

def test_changed_body_becomes_new_note_superseding_old(memory, tmp_path):
    _a, b, _c = seed(memory)
    path, text = checkout(memory, tmp_path)
    text = text.replace("Use uv, never pip, in CI.", "Use uv, never pip, in CI and locally.")
    path.write_text(text, encoding="utf-8")
    result = memory.edit_checkin(path, reason="also locally")
    assert result.counts == {"create": 0, "supersede": 1, "revoke": 0}
    row = result.changes[0]
    assert row["note"] == b.id and row["changed"] == ["body"] and row["reason"] == "also locally"
    old, new = note_by_id(memory, b.id), note_by_id(memory, row["by"])
    assert old.state == "superseded" and old.superseded_by == new.id and old.state_reason == "also locally"
    assert new.body == "Use uv, never pip, in CI and locally." and new.supersedes == b.id
    assert new.provenance == "human" and new.kind == "directive" and new.title == "Use uv in CI"


def test_changed_labels_supersede_and_keep_the_authors_provenance(memory, tmp_path):
    a, _b, _c = seed(memory)
    path, text = checkout(memory, tmp_path)
    blk = block_of(text, a.id)
    new_blk = (blk.replace("- tags: lock", "- tags: lock, daemon").replace("- priority: high", "- priority: low")
               .replace("- kind: gotcha", "- kind: finding").replace("`src/daemon/*.py`", "`src/daemon/**`"))
    path.write_text(text.replace(blk, new_blk), encoding="utf-8")
    result = memory.edit_checkin(path)
    row = result.changes[0]
    assert row["changed"] == ["kind", "priority", "tags", "paths"]
    assert row["reason"] == "edited with `memory-custodian edit`"
    new = note_by_id(memory, row["by"])
    assert (new.kind, new.priority, new.tags, new.paths) == ("finding", "low", ("daemon", "lock"), ("src/daemon/**",))
    assert new.provenance == "agent"  # the words are still the agent's
    assert note_by_id(memory, a.id).state == "superseded"


def test_removed_block_is_revoked_with_the_given_reason(memory, tmp_path):
    _a, _b, c = seed(memory)
    path, text = checkout(memory, tmp_path)
    path.write_text(text.replace(block_of(text, c.id), ""), encoding="utf-8")
    before = shard_bytes(memory)
    with pytest.raises(Refused, match=f"#{c.id}.*reason=") as refused:
        memory.edit_checkin(path)
    assert "pass --reason TEXT" in refused.value.one_line(CLI_TERMS)  # the command line names its option
    assert shard_bytes(memory) == before  # refused: nothing written
    result = memory.edit_checkin(path, reason="steps moved to the runbook")
    assert result.counts["revoke"] == 1 and result.events == 1
    note = note_by_id(memory, c.id)
    assert note.state == "revoked" and note.state_reason == "steps moved to the runbook"


def test_emptied_block_with_a_reason_line_is_revoked(memory, tmp_path):
    _a, b, _c = seed(memory)
    path, text = checkout(memory, tmp_path)
    blk = block_of(text, b.id)
    head = "\n".join(blk.split("\n")[:2])  # heading and the note line
    path.write_text(text.replace(blk, head + "\nreason: CI moved to nix\n\n"), encoding="utf-8")
    result = memory.edit_checkin(path)
    assert result.changes == [{"action": "revoke", "note": b.id, "reason": "CI moved to nix", "line": result.changes[0]["line"]}]
    assert note_by_id(memory, b.id).state_reason == "CI moved to nix"


def test_emptied_block_without_a_reason_is_refused_with_its_line(memory, tmp_path):
    _a, b, _c = seed(memory)
    path, text = checkout(memory, tmp_path)
    blk = block_of(text, b.id)
    path.write_text(text.replace(blk, "\n".join(blk.split("\n")[:6]) + "\n\n"), encoding="utf-8")
    line = text[: text.index(blk)].count("\n") + 1
    with pytest.raises(InvalidInput, match=rf"buffer.md:{line}: note #{b.id} has no body left"):
        memory.edit_checkin(path)


def test_new_block_is_created_with_human_provenance(memory, tmp_path):
    seed(memory)
    path, text = checkout(memory, tmp_path)
    text += ("\n### Flaky test in CI\n- kind: gotcha\n- priority: high\n- tags: ci, flaky\n- paths: `tests/test_net.py`\n\n"
             "Retries hide it.\n\n### Repro\n```\n## Findings\npytest -k net\n```\n")
    path.write_text(text, encoding="utf-8")
    result = memory.edit_checkin(path)
    assert result.counts == {"create": 1, "supersede": 0, "revoke": 0}
    new = note_by_id(memory, result.changes[0]["note"])
    assert (new.title, new.kind, new.priority, new.provenance) == ("Flaky test in CI", "gotcha", "high", "human")
    assert new.tags == ("ci", "flaky") and new.paths == ("tests/test_net.py",)
    assert new.body == "Retries hide it.\n\n### Repro\n```\n## Findings\npytest -k net\n```"


def test_all_changes_land_as_one_txn(memory, tmp_path):
    _a, _b, c = seed(memory)
    path, text = checkout(memory, tmp_path)
    text = text.replace(block_of(text, c.id), "")
    text = text.replace("Use uv, never pip, in CI.", "Use uv everywhere.")
    text += "\n### Brand new\n- kind: finding\n\nSomething new.\n"
    path.write_text(text, encoding="utf-8")
    result = memory.edit_checkin(path, reason="cleanup")
    assert result.events == 4  # revoke + (create + supersede) + create
    txn = events_of_last_txn(memory)
    assert len(txn) == 4 and {e["txn_n"] for e in txn} == {4} and len({e["at"] for e in txn}) == 1
    assert sorted(e["op"] for e in txn) == ["create", "create", "revoke", "supersede"]


# ---- what people type -------------------------------------------------------------------------

def test_a_deleted_note_line_falls_back_to_the_checkout_record(memory, tmp_path):
    _a, b, _c = seed(memory)
    path, text = checkout(memory, tmp_path)
    text = re.sub(rf"^<!-- note {b.id} .*\n", "", text, flags=re.M)
    assert memory.edit_checkin(path.parent / _write(path, text)).events == 0
    text = text.replace("Use uv, never pip, in CI.", "Use uv.")
    result = memory.edit_checkin(_write(path, text))
    assert [(r["action"], r["note"]) for r in result.changes] == [("supersede", b.id)]


def test_a_deleted_heading_id_is_recovered_from_the_note_line(memory, tmp_path):
    _a, b, _c = seed(memory)
    path, text = checkout(memory, tmp_path)
    text = text.replace(f"### [#{b.id}] ", "### ")
    assert memory.edit_checkin(_write(path, text)).events == 0


def test_a_block_stripped_of_both_ids_is_a_new_note_and_a_removal(memory, tmp_path):
    _a, b, _c = seed(memory)
    path, text = checkout(memory, tmp_path)
    text = text.replace(f"### [#{b.id}] ", "### ")
    text = re.sub(rf"^<!-- note {b.id} .*\n", "", text, flags=re.M)
    with pytest.raises(Refused, match=f"#{b.id}"):
        memory.edit_checkin(_write(path, text))
    result = memory.edit_checkin(path, reason="rewritten")
    assert sorted(r["action"] for r in result.changes) == ["create", "revoke"]


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("mutate, message", [
    (lambda t, ids: t.replace("- kind: directive", "- kind: rule"), r":(\d+): unknown kind 'rule'"),
    (lambda t, ids: t.replace("- kind: directive", "- kind: directive\n- prority: low"), r":(\d+): unknown field `prority`"),
    (lambda t, ids: t.replace("- kind: directive", "- kind: directive\n- state: active"), r":(\d+): `state:` is read-only"),
    (lambda t, ids: t + "\n### Dup\n- kind: finding\n- kind: gotcha\n\nx\n", r":(\d+): `kind:` given twice"),
    (lambda t, ids: t + f"\n### [#{ids[1]}] again\n- kind: finding\n\nx\n", r":(\d+): note #\w+ appears twice"),
    (lambda t, ids: t + "\n### [#zzzzzzzz] stranger\n- kind: finding\n\nx\n", r":(\d+): note #zzzzzzzz was not checked out"),
    (lambda t, ids: t + "\n### [#bad] stranger\n- kind: finding\n\nx\n", r":(\d+): `\[#bad\]` is not a note id"),
    (lambda t, ids: t + "\n### New thing\n- priority: high\n\nx\n", r":(\d+): this note has no `- kind:` line"),
    (lambda t, ids: t.replace("# Active notes", "stray text\n# Active notes"), r":(\d+): text outside a note block"),
    (lambda t, ids: t.replace("## Directives\n", "## Directives\nstray\n"), r":(\d+): text outside a note block"),
    (lambda t, ids: t.replace("- tags: lock", '- tags: ["lock"'), r":(\d+): tags must be"),
    (lambda t, ids: t.replace("- paths: `src/daemon/*.py`", "- paths: `src/*.py` and more"),
     r":(\d+): paths: text outside backticks"),
    (lambda t, ids: t[t.index("-->") + 4:], r":1: the check-out comment .* is missing"),
])
def test_what_the_parser_cannot_read_is_refused_with_the_line(memory, tmp_path, mutate, message):
    a, b, c = seed(memory)
    path, text = checkout(memory, tmp_path)
    before = shard_bytes(memory)
    bad = mutate(text, [a.id, b.id, c.id])
    with pytest.raises(InvalidInput, match=message) as info:
        memory.edit_checkin(_write(path, bad))
    if info.value.line and info.value.line > 1:
        line = bad.replace("\r\n", "\n").split("\n")[info.value.line - 1]
        assert line.strip(), "the named line should be the offending one"
    assert shard_bytes(memory) == before


def test_a_new_block_needing_cleanup_is_refused_with_its_line(memory, tmp_path):
    seed(memory)
    path, text = checkout(memory, tmp_path)
    text += "\n### Key\n- kind: finding\n\naws key AKIAIOSFODNN7EXAMPLX here\n"
    line = text.split("\n").index("### Key") + 1
    with pytest.raises(SecretFound, match=rf"buffer.md:{line}:"):
        memory.edit_checkin(_write(path, text))
    text = (text.replace("### Key\n", "### Key with a tag that is not one word\n")
            .replace("aws key AKIAIOSFODNN7EXAMPLX here", "fine"))
    text = text.replace("- kind: finding\n\nfine", "- kind: finding\n- tags: two words\n\nfine")
    with pytest.raises(InvalidInput, match=rf"buffer.md:{line}: tag 'two words'"):
        memory.edit_checkin(_write(path, text))


# ---- conflicts ---------------------------------------------------------------------------------

def test_a_touched_note_changed_since_checkout_refuses_the_whole_checkin(memory, tmp_path):
    a, b, _c = seed(memory)
    path, text = checkout(memory, tmp_path)
    memory.revoke(a.id, reason="daemon removed", actor="agent")
    memory.flag_stale(b.id, reason="pip is back?")
    text = text.replace("The lock file is dropped before the daemon restarts.", "The lock is fixed.")
    text = text.replace("Use uv, never pip, in CI.", "Use uv.")
    text += "\n### Brand new\n- kind: finding\n\nSomething new.\n"
    before = shard_bytes(memory)
    with pytest.raises(Conflict) as info:
        memory.edit_checkin(_write(path, text))
    msg = str(info.value)
    assert f"#{a.id} changed (revoke by agent at" in msg and "(daemon removed)" in msg
    assert f"#{b.id} changed (flag_stale by human" in msg and "nothing was written" in msg
    assert shard_bytes(memory) == before


def test_untouched_notes_never_conflict(memory, tmp_path):
    a, _b, _c = seed(memory)
    path, text = checkout(memory, tmp_path)
    memory.revoke(a.id, reason="gone")  # a is not touched in the buffer
    result = memory.edit_checkin(_write(path, text.replace("Use uv, never pip, in CI.", "Use uv.")))
    assert result.counts["supersede"] == 1
    assert note_by_id(memory, a.id).state == "revoked"


def test_a_note_forgotten_since_checkout_is_a_conflict(memory, tmp_path):
    _a, _b, c = seed(memory)
    path, text = checkout(memory, tmp_path)
    memory.forget_note(c.id)
    with pytest.raises(Conflict, match=f"#{c.id} was forgotten"):
        memory.edit_checkin(_write(path, text.replace(block_of(text, c.id), "")), reason="x")


def test_checkin_of_a_missing_file_is_invalid_input(memory, tmp_path):
    with pytest.raises(InvalidInput, match="file not found"):
        memory.edit_checkin(tmp_path / "nope.md")


LINE_FRAGMENTS = FRAGMENTS + ["### [#k7m2x9qa] t", "<!-- note k7m2x9qa · last event 01JD · sha 00 -->", "- tags: `a`, b",
                              "- paths: [\"x\"", "reason: gone", "- priority: high", "-->", "<!--", "# Title",
                              "## Gotchas", "\\### x", "- kind: gotcha"]


@settings(max_examples=120, deadline=None)
@given(st.lists(st.lists(st.sampled_from(LINE_FRAGMENTS), max_size=4).map("".join), max_size=25), st.booleans())
def test_parser_never_crashes_on_what_people_type(lines, keep_manifest):
    notes = [Note(id="k7m2x9qa", kind="gotcha", priority="high", title="t", body="b", last_event="01JD")]
    head = render_checkout(notes, checked_out_at="2026-11-30T00:00:00.000Z") if keep_manifest else ""
    text = head + "\n".join(lines)
    try:
        buf = parse_buffer(text, "buf.md")
        plan_changes(buf, {n.id: n for n in notes}, reason=None, path="buf.md")
    except InvalidInput as exc:
        assert exc.path == "buf.md" and "\n" not in str(exc)
    except Refused as exc:
        assert "reason" in str(exc)


def test_unbalanced_fences_in_bodies_round_trip_and_fenced_section_lines_stay_body():
    notes = [
        Note(id="aaaa0000", kind="gotcha", priority="high", title="open fence", body="```\nnever closed",
             last_event="01JDA"),
        Note(id="bbbb0000", kind="finding", priority="low", title="fenced", body="```\n## Gotchas\n```\nafter",
             last_event="01JDB"),
    ]
    text = render_checkout(notes, checked_out_at="2026-11-30T00:00:00.000Z")
    assert plan_changes(parse_buffer(text), {n.id: n for n in notes}, reason=None) == []
    # a person writes a section-looking line inside a fence, unescaped: still body text
    edited = text.replace("\\## Gotchas", "## Gotchas")
    buf = parse_buffer(edited)
    assert [b.body for b in buf.blocks if b.id == "bbbb0000"] == ["```\n## Gotchas\n```\nafter"]
    assert plan_changes(buf, {n.id: n for n in notes}, reason=None) == []


def test_checkout_buffer_matches_golden(tmp_path):
    import os
    from pathlib import Path

    memory = write_ledger(tmp_path)
    now = "2026-11-20T00:00:00.000Z"
    notes = [n for n in memory.ledger().load().notes.values() if n.state_at(now) in ("active", "stale")]
    text = render_checkout(notes, checked_out_at=now)
    golden = Path(__file__).parent / "golden" / "export" / "checkout.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")
    assert plan_changes(parse_buffer(text), {n.id: n for n in notes}, reason=None) == []


def test_the_reason_for_a_removed_block_is_not_recorded_on_an_edited_one(tmp_path):
    from memory_custodian.memory import Memory

    memory = Memory.open(tmp_path)
    memory.init()
    gone = memory.remember("Old note to drop.", title="Drop me")
    kept = memory.remember("A note to reword.", title="Reword me")
    buffer = tmp_path / "edit.md"
    memory.edit_checkout(str(buffer))
    text = buffer.read_text()
    start = text.index(f"[#{gone.id}]")
    start = text.rfind("\n### ", 0, start) + 1
    end = text.find("\n### ", start + 1)
    text = text[:start] + (text[end + 1:] if end > 0 else "")
    buffer.write_text(text.replace("A note to reword.", "A note, reworded."))
    memory.edit_checkin(str(buffer), reason="it was wrong")
    events = memory.history(kept.id).events
    supersede = next(e for e in events if e["op"] == "supersede")
    assert supersede["reason"] != "it was wrong"
    assert next(e for e in memory.history(gone.id).events if e["op"] == "revoke")["reason"] == "it was wrong"
