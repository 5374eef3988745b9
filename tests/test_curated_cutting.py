"""`ReadResult.cut_to`: the pack cut to a character limit by its structure, on whole entries."""

from __future__ import annotations

from memory_custodian.curated.pack.cutting import lines_part


def _pack(memory, count: int = 30):
    ids = [memory.remember(f"Directive {i}: keep every migration reversible; release {i} could not be rolled back.",
                           kind="directive", priority="high").id for i in range(count)]
    return memory.read("implementation"), ids


def test_a_pack_that_fits_is_returned_whole(memory):
    result, ids = _pack(memory, 3)
    pack = result.cut_to(100_000)
    assert (pack.text, pack.cut) == (result.rendered, False)
    assert set(ids) <= set(pack.note_ids)


def test_a_long_pack_keeps_whole_entries_and_names_the_rest(memory):
    result, ids = _pack(memory)
    pack = result.cut_to(3_000)
    assert pack.cut and len(pack.text) <= 3_000
    assert pack.text.startswith("# Memory context pack\nTask: implementation")
    assert "## Cut to fit the host's limit" in pack.text
    kept, loaded = set(pack.note_ids), set(result.note_ids)  # `read` itself may leave some out by budget
    assert kept and kept < loaded <= set(ids)
    named = pack.text.split("- Ledger directives: ", 1)[1].split("\n", 1)[0]
    for note_id in loaded:
        assert (f"[#{note_id}]" in pack.text) == (note_id in kept)
        assert (f"#{note_id}" in named) == (note_id not in kept)


def test_the_frame_counts_and_extra_parts_follow_the_pack(memory):
    result, _ids = _pack(memory, 2)
    extra = [lines_part("Open tasks", [("[#aaaa0000] task/high · ship it", "aaaa0000"), ("and more", None)])]
    pack = result.cut_to(100_000, frame=lambda body: f"<<{body}>>", extra=extra)
    assert pack.text == "<<" + result.rendered.rstrip("\n") + "\n\n## Open tasks\n\n[#aaaa0000] task/high · ship it\nand more\n>>"
    assert "aaaa0000" in pack.note_ids
    tight = result.cut_to(len(result.rendered), frame=lambda body: f"<<{body}>>", extra=extra)
    assert tight.cut and len(tight.text) <= len(result.rendered)
