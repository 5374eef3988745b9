"""One renderer for a note's index line and one for its bound quote, whoever shows the note."""

from __future__ import annotations

from memory_custodian.agents.recall_view import note_text
from memory_custodian.ledger.frames import index_line


def test_index_line_plain_and_framed(mem):
    note = mem.remember("Lock before restart", kind="gotcha", priority="high", actor="agent")
    day = note.created_at[:10]
    assert index_line(note) == f"[#{note.id}] gotcha/high · Lock before restart · {day}"
    assert index_line(note, "revoked") == f"[#{note.id}] gotcha/high · Lock before restart · {day} [revoked]"
    assert index_line(note, framed=True) == (
        f"[#{note.id}] gotcha/high · Lock before restart · {day} · memory to verify, recorded by an AI session")
    assert index_line(note, "revoked", framed=True).endswith(" · REVOKED: do not follow")


def test_recall_expand_and_the_file_hook_show_the_same_lines(mem):
    note = mem.remember("Use the pool", kind="gotcha", paths=["src/db.py"], quote="always use the pool")
    assert mem.recall("pool").render_text().splitlines()[0] == index_line(note)
    expanded = mem.expand([note.id]).notes[0]["text"]
    quote = "user's words: \u201calways use the pool\u201d"
    assert quote in expanded.splitlines() and quote in note_text(note).splitlines()
