"""`--path` means what a person in a subdirectory means: relative to where they stand, stored from the root."""

from __future__ import annotations

import json

from conftest import run_cli

from memory_custodian.memory import Memory


def test_paths_from_a_subdirectory(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    here = tmp_path / "src" / "app"
    here.mkdir(parents=True)
    (here / "db.py").write_text("x = 1\n")
    made = run_cli("remember", "Close the pool before fork.", "--kind", "gotcha", "--path", "db.py",
                   "--format", "json", cwd=here)
    assert made.returncode == 0, made.stderr
    note = json.loads(made.stdout)
    note_id = note.get("id") or note["note"]["id"]
    assert memory.recall(None, paths=["src/app/db.py"]).hits[0].note.paths == ("src/app/db.py",)
    read = run_cli("read", "--task", "implementation", "--path", "db.py", cwd=here)
    assert read.returncode == 0 and f"[#{note_id}]" in read.stdout and "Close the pool before fork." in read.stdout
    recall = run_cli("recall", "--path", "./db.py", cwd=here)
    assert f"[#{note_id}]" in recall.stdout
    sibling = run_cli("recall", "--path", "../app/db.py", cwd=here)
    assert f"[#{note_id}]" in sibling.stdout
    outside = run_cli("remember", "Nope.", "--path", "../../../elsewhere.py", cwd=here)
    assert outside.returncode == 2 and "leaves the project" in outside.stderr and outside.stderr.count("\n") == 1
    from_root = run_cli("recall", "--path", "src/app/db.py", cwd=tmp_path)
    assert f"[#{note_id}]" in from_root.stdout
