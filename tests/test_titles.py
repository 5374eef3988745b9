"""Titles cut at a word boundary with "…", and `add --title`."""

from __future__ import annotations

import pytest
from conftest import run_cli

from memory_custodian.base.errors import InvalidInput
from memory_custodian.base.tokens import cut_words
from memory_custodian.memory import Memory


def test_cut_words():
    assert cut_words("short", 10) == "short"
    assert cut_words("refund export half done; next: tests/conftest.py", 40) == "refund export half done; next…"
    assert cut_words("x" * 50, 10) == "x" * 9 + "…"
    assert len(cut_words("word " * 40, 80)) <= 80


def test_a_note_title_is_cut_at_a_word_boundary(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    text = ("Checkpoint: the refund exporter writes the CSV header and the first rows; next: tests/conftest.py "
            "fixtures for the exporter")
    note = memory.remember(text, kind="task")
    assert note.title.endswith("…") and len(note.title) <= 80
    kept = note.title[:-1]
    assert text.startswith(kept) and text[len(kept)] in " ;"  # the cut falls between words


def test_add_title_and_a_cut_heading(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    long = ("Keep the public API synchronous because every caller blocks on the result anyway and async buys "
            "nothing")
    memory.add(long, "decision", reasons=["callers block"])
    decisions = (memory.memory_dir / "decisions.md").read_text()
    heading = next(line for line in decisions.splitlines() if "Keep the public API" in line and line.startswith("## "))
    # cut at 72 characters, as MemoryCustodian 0.9.1 cuts it; the body keeps the whole text
    assert heading.split(" - ", 1)[1] == long[:72] and f"Decision:\n{long}\n" in decisions
    proc = run_cli("add", "Use Postgres 16 for the store.", "--type", "decision", "--reason", "JSONB",
                   "--title", "Store on Postgres", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "- Store on Postgres\nDecision:\nUse Postgres 16 for the store." in (memory.memory_dir / "decisions.md").read_text()
    with pytest.raises(InvalidInput, match="heading"):
        memory.add("Never push on Fridays.", "constraint", title="Fridays")
