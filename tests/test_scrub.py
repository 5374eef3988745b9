"""Temp files of dead writers are swept under the lock; a hard delete scrubs every copy the tool
made (index, session cache, torn tails, a hand export); an interrupted forget is finished."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import run_cli

from memory_custodian.base import fsutil
from memory_custodian.ledger.storage.store import Ledger

PHRASE = "the staging database password rotates on the first monday"


def _everywhere(root) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file() and PHRASE.encode() in p.read_bytes())


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_the_next_writer_removes_a_dead_writers_temp_file(memory):
    ledger_dir = memory.memory_dir / "ledger"
    ledger_dir.mkdir(exist_ok=True)
    dead = ledger_dir / f".2026-12.jsonl.tmp-{_dead_pid()}-1"
    dead.write_text(PHRASE, encoding="utf-8")
    alive = memory.memory_dir / f".brief.md.tmp-{os.getppid()}-1"  # a live process's: kept
    alive.write_text("x", encoding="utf-8")
    memory.remember("any write takes the lock")
    assert not dead.exists() and alive.exists()


def test_a_long_name_gets_a_temp_name_the_file_system_accepts(tmp_path):
    name = "a" * 250
    assert len(fsutil.temp_name(name).encode()) < 255
    fsutil.atomic_write(tmp_path / name, "x")
    assert (tmp_path / name).read_text() == "x"


def test_forget_scrubs_the_index_sessions_torn_tails_and_a_hand_export(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    note = json.loads(run_cli("remember", PHRASE, "--format", "json", cwd=tmp_path).stdout)["id"]
    run_cli("remember", "another note stays", cwd=tmp_path)
    hand = tmp_path / "notes-export.md"
    assert run_cli("export", "--path", str(hand.name), cwd=tmp_path).returncode == 0
    assert run_cli("export", cwd=tmp_path).returncode == 0
    cache = tmp_path / "docs/memory/.cache"
    (cache / "sessions").mkdir(exist_ok=True)
    (cache / "sessions" / "s1.json").write_text(json.dumps({"last_message": {"text": PHRASE}}), encoding="utf-8")
    (cache / "torn").mkdir(exist_ok=True)
    (cache / "torn" / "2026-12.jsonl.1").write_text(PHRASE, encoding="utf-8")
    assert _everywhere(tmp_path)
    r = run_cli("forget", "--note", note, "--yes", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert _everywhere(tmp_path) == []
    assert "another note stays" in hand.read_text(encoding="utf-8")
    assert run_cli("recall", "another", cwd=tmp_path).returncode == 0


def test_an_interrupted_forget_is_finished_by_the_next_write(memory):
    note = memory.remember(PHRASE)
    ledger = Ledger(memory.memory_dir)
    rep = ledger.load()
    # what a kill after the forget event and before the rewrite leaves
    fsutil.atomic_write(ledger._pending_path(), json.dumps({"note": note.id}))
    ledger.append_txn([{"op": "forget", "note": note.id, "actor": "human", "stripped": []}], lookup=rep.notes.get)
    assert _everywhere(memory.root)
    memory.remember("the next write")
    assert _everywhere(memory.root) == []
    assert not os.path.exists(ledger._pending_path())


def test_doctor_says_who_forgot_a_note_whose_text_a_merge_brought_back(memory):
    note = memory.remember("a human rule that matters", kind="directive")
    shard = next((memory.memory_dir / "ledger").glob("*.jsonl"))
    create = shard.read_text(encoding="utf-8").splitlines()[0]
    memory.forget_note(note.id)
    shard.write_text(create + "\n" + shard.read_text(encoding="utf-8"), encoding="utf-8")  # an older branch merged
    [problem] = [p for p in memory.doctor().problems if p["code"] == "forgotten-leftovers"]
    assert f"note #{note.id} was forgotten by human on " in problem["message"]
    assert f"(forget line ledger/{shard.name}:2)" in problem["message"]


def test_doctor_reports_and_removes_a_dead_writers_temp_file(memory):
    dead = memory.memory_dir / f".decisions.md.tmp-{_dead_pid()}-7"
    dead.write_text(PHRASE, encoding="utf-8")
    report = memory.doctor()
    assert any(w.startswith(".decisions.md.tmp-") and "writer that died" in w for w in report.warnings), report.warnings
    assert not dead.exists()
