"""The mirror says what it is, and a hand edit is never overwritten without a word."""

from __future__ import annotations

from conftest import run_cli

from memory_custodian.memory import Memory


def test_a_hand_edited_mirror_is_left_and_the_write_warns(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    memory.export_enable()
    mirror = memory.memory_dir / "MEMORY.md"
    assert mirror.read_text().startswith("<!-- GENERATED FILE, do not edit") and "`memory-custodian edit`" in \
        mirror.read_text().splitlines()[0]
    memory.remember("First note.")
    edited = mirror.read_text() + "\nMy own line.\n"
    mirror.write_text(edited)
    proc = run_cli("remember", "Second note.", "--project-root", str(tmp_path))
    assert proc.returncode == 0 and "edited by hand" in proc.stderr and "edit --checkin" in proc.stderr
    assert mirror.read_text() == edited  # the edit is still there
    assert run_cli("export", "--project-root", str(tmp_path)).returncode == 0  # an explicit export drops it
    assert "My own line." not in mirror.read_text() and "Second note." in mirror.read_text()
    assert memory.remember("Third note.").mirror_warning is None
    assert "Third note." in mirror.read_text()
