"""MemoryCustodian 0.9.1 folders, 0.9.1 habits: compact and forget on the Markdown forms 0.9.1 writes.

Each test runs the command on a folder laid out as 0.9.1 lays it out (a copy of its recorded
fixtures: no `.cache/`, no `.gitattributes`) and checks the exit code and every byte on disk.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import MC_FIXTURES, run_cli


def folder(tmp_path: Path, fixture: str = "nightnotes") -> Path:
    shutil.copytree(MC_FIXTURES / fixture / "docs", tmp_path / "docs")
    return tmp_path


def tree(root: Path) -> dict[str, bytes]:
    """Every file and folder under the project, `.cache/` included: a preview must not create it."""
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(root.rglob("*"))}


def mc(root: Path, *args: str):
    return run_cli(*args, "--project-root", str(root))


INBOX_HEAD = "# Memory Inbox\n\nEntries are newest first.\n\n"


def test_items_differing_only_in_nested_indentation_are_both_kept(tmp_path):
    root = folder(tmp_path)
    inbox = root / "docs/memory/inbox.md"
    inbox.write_text(INBOX_HEAD + "## 2026-11-02\n- Candidate\n  - Child\n    - Grandchild\n"
                     "- Candidate\n    - Child\n  - Grandchild\n", encoding="utf-8")
    before = tree(root)
    proc = mc(root, "compact", "--apply")
    assert proc.returncode == 0, proc.stderr
    assert "2 candidate(s) to review" in proc.stdout
    assert tree(root) == before  # nothing mechanical to do: not one byte written, no .cache/


def test_items_that_are_exactly_equal_apart_from_case_and_trailing_space_go(tmp_path):
    root = folder(tmp_path)
    inbox = root / "docs/memory/inbox.md"
    inbox.write_text(INBOX_HEAD + "## 2026-11-02\n- Candidate  \n  - Child\n- candidate\n  - Child   \n"
                     "- Other\n", encoding="utf-8")
    proc = mc(root, "compact", "--apply")
    assert proc.returncode == 0, proc.stderr
    assert inbox.read_text(encoding="utf-8") == INBOX_HEAD + "## 2026-11-02\n- Candidate  \n  - Child\n- Other\n"


def test_star_and_plus_bullets_are_inbox_items_nested_and_fenced_ones_are_not(tmp_path):
    root = folder(tmp_path)
    inbox = root / "docs/memory/inbox.md"
    inbox.write_text(INBOX_HEAD + "## 2026-11-02\n* Star item\n  - nested, part of it\n+ Plus item\n\n"
                     "```\n- fenced, not an item\n```\n\n* * *\n", encoding="utf-8")
    proc = mc(root, "compact")
    assert proc.returncode == 0, proc.stderr
    assert "inbox.md: 2 candidate(s) to review" in proc.stdout
    assert "  - Star item\n  - Plus item\n" in proc.stdout
    status = mc(root, "status")
    assert "inbox: 2 candidates" in status.stdout


def test_a_star_duplicate_of_a_dash_item_is_a_duplicate(tmp_path):
    root = folder(tmp_path)
    inbox = root / "docs/memory/inbox.md"
    inbox.write_text(INBOX_HEAD + "## 2026-11-02\n- Same item\n* Same item\n+ Kept item\n", encoding="utf-8")
    assert mc(root, "compact", "--apply").returncode == 0
    assert inbox.read_text(encoding="utf-8") == INBOX_HEAD + "## 2026-11-02\n- Same item\n+ Kept item\n"


def test_a_bullet_tombstone_is_honoured(tmp_path):
    root = folder(tmp_path)
    mem = root / "docs/memory"
    stones = (mem / "do-not-use.md").read_text(encoding="utf-8")
    (mem / "do-not-use.md").write_text(stones + "\n- Exact forbidden note.\n", encoding="utf-8")
    (mem / "inbox.md").write_text(INBOX_HEAD + "## 2026-11-02\n- Exact forbidden note.\n- Keep me.\n",
                                  encoding="utf-8")
    preview = mc(root, "compact", "--format", "json")
    import json

    inbox = next(f for f in json.loads(preview.stdout)["files"] if f["path"] == "inbox.md")
    assert inbox["tombstoned_dropped"] == 1 and inbox["candidates"] == ["Keep me."]
    assert mc(root, "compact", "--apply").returncode == 0
    assert (mem / "inbox.md").read_text(encoding="utf-8") == INBOX_HEAD + "## 2026-11-02\n- Keep me.\n"


def test_an_inbox_left_empty_says_so(tmp_path):
    root = folder(tmp_path)
    mem = root / "docs/memory"
    (mem / "inbox.md").write_text(INBOX_HEAD + "## 2026-11-02\n- SQLite for session persistence\n", encoding="utf-8")
    assert mc(root, "compact", "--apply").returncode == 0
    assert (mem / "inbox.md").read_text(encoding="utf-8") == INBOX_HEAD + "No unprocessed memory candidates.\n"


POLICY = "\n## Policy note\nWe review every Quasarix change in pairs.\n"


@pytest.mark.parametrize("mode", ["hard", "purge"])  # soft leaves do-not-use.md alone: test_compat_091_init
def test_forget_never_deletes_a_section_of_do_not_use_that_is_not_a_tombstone(tmp_path, mode):
    root = folder(tmp_path)
    mem = root / "docs/memory"
    (mem / "do-not-use.md").write_text((mem / "do-not-use.md").read_text(encoding="utf-8") + POLICY, encoding="utf-8")
    before = tree(root)
    preview = mc(root, "forget", "Quasarix", "--mode", mode)
    assert preview.returncode == 0, preview.stderr  # a preview shows the line to rewrite, as 0.9.1's does
    assert "do-not-use.md:13: the topic appears in a section of do-not-use.md that is not a tombstone" in preview.stdout
    assert "Quasarix" not in preview.stdout + preview.stderr
    applied = mc(root, "forget", "Quasarix", "--mode", mode, "--apply")
    assert applied.returncode == 1
    assert applied.stderr.startswith("error: ") and "do-not-use.md:13" in applied.stderr
    assert tree(root) == before


def test_forget_still_removes_a_tombstone_that_mentions_the_topic(tmp_path):
    root = folder(tmp_path)
    mem = root / "docs/memory"
    (mem / "do-not-use.md").write_text((mem / "do-not-use.md").read_text(encoding="utf-8")
                                       + "\n## Tombstone: Quasarix\nNever again.\n\n- Quasarix in bullets too.\n",
                                       encoding="utf-8")
    assert mc(root, "forget", "Quasarix", "--mode", "purge", "--apply").returncode == 0
    assert "Quasarix" not in (mem / "do-not-use.md").read_text(encoding="utf-8")


def test_a_forget_preview_that_needs_a_manual_rewrite_exits_0_and_its_apply_1(tmp_path):
    root = folder(tmp_path)
    before = tree(root)
    preview = mc(root, "forget", "Context budget", "--mode", "hard")  # a manifest heading: never rewritten by a program
    assert preview.returncode == 0, preview.stderr
    assert "manifest.md:66: the topic appears in the manifest" in preview.stdout
    assert "rewrite that line by hand" in preview.stdout
    assert "plan " not in preview.stdout  # nothing to apply, so no plan id to pass
    applied = mc(root, "forget", "Context budget", "--mode", "hard", "--apply")
    assert applied.returncode == 1 and "manifest.md:66" in applied.stderr
    assert tree(root) == before


def test_a_crlf_inbox_saved_on_windows_keeps_its_line_endings(tmp_path):
    root = folder(tmp_path)
    inbox = root / "docs/memory/inbox.md"
    inbox.write_bytes((INBOX_HEAD + "## 2026-11-02\n* Same\n- Same\n- Other\n").replace("\n", "\r\n").encode())
    assert mc(root, "compact", "--apply").returncode == 0
    assert inbox.read_bytes() == (INBOX_HEAD + "## 2026-11-02\n* Same\n- Other\n").replace("\n", "\r\n").encode()


def test_a_windows_style_target_path_is_the_same_file(tmp_path):
    root = folder(tmp_path, "overflow")
    proc = mc(root, "compact", "--target", ".\\decisions.md")
    assert proc.returncode == 0, proc.stderr
    assert "decisions.md:" in proc.stdout
