"""Forget leaves nothing behind (issue 31, door 5): a torn fragment holding any part of the forgotten
text is scrubbed, a curated hard forget scrubs the session caches of its topic, and every file
under `.cache/` is owner-only whatever the umask."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest
from conftest import run_cli

from memory_custodian import Memory

SECRET_BODY = ("The Zebraquartz vendor contract ends in March; route refunds through the Okapi gateway "
               "and never through the legacy ledger service")


def _holders(root, needle: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes())


@pytest.fixture
def project(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    memory = Memory.open(tmp_path)
    memory.init()
    return tmp_path, memory


def test_forget_scrubs_a_torn_fragment_that_holds_only_part_of_the_note(project):
    root, memory = project
    note = memory.remember(SECRET_BODY, kind="finding", title="Vendor contract")
    shard = next((root / "docs/memory/ledger").glob("*.jsonl"))
    line = shard.read_bytes().splitlines()[0]
    cut = line.index(b"Okapi") + 3  # a write torn in the middle of the body: no whole line of it
    with open(shard, "ab") as fh:
        fh.write(line[:cut])
    memory.remember("a later note: the writer moves the torn tail to .cache/torn/")
    torn = list((root / "docs/memory/.cache/torn").iterdir())
    assert torn and b"Zebraquartz" in torn[0].read_bytes()
    memory.forget_note(note.id)
    assert _holders(root, "Zebraquartz") == [] and _holders(root, "vendor contract") == []
    assert memory.doctor().ok


def test_a_curated_hard_forget_scrubs_the_session_caches(project):
    root, memory = project
    memory.add("Never use the Zebraquartz billing API for refunds", "constraint")
    payload = {"session_id": "s1", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
               "prompt": "from now on we never use the Zebraquartz billing API, it double-charges"}
    assert run_cli("hook", "UserPromptSubmit", cwd=root, input=json.dumps(payload)).returncode == 0
    assert any("sessions" in h for h in _holders(root, "Zebraquartz"))
    assert run_cli("forget", "Zebraquartz", "--mode", "hard", "--apply", cwd=root).returncode == 0
    assert _holders(root, "Zebraquartz") == []


def test_every_cache_file_is_owner_only(project):
    root, memory = project
    old = os.umask(0o022)
    try:
        note = memory.remember(SECRET_BODY, kind="gotcha", paths=("src/**",))
        memory.export()
        memory.recall("vendor contract")
        shard = next((root / "docs/memory/ledger").glob("*.jsonl"))
        with open(shard, "ab") as fh:
            fh.write(b'{"v":1,"torn')
        memory.remember("the writer trims the torn tail")
        with open(shard, "ab") as fh:
            fh.write(b'{"v":1,"torn again')
        memory.doctor(repair=True)
        for event, extra in (("SessionStart", {}), ("UserPromptSubmit", {"prompt": "why does the refund fail?"})):
            payload = {"session_id": "s2", "cwd": str(root), "hook_event_name": event, **extra}
            assert run_cli("hook", event, cwd=root, input=json.dumps(payload)).returncode == 0
        memory.forget_note(note.id)
    finally:
        os.umask(old)
    cache = root / "docs/memory/.cache"
    loose = []
    for path in [cache, *cache.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            loose.append(f"{path.relative_to(cache)} {oct(mode)}")
    assert {p.name for p in cache.iterdir()} >= {"index.sqlite", "torn", "backup", "sessions"}
    assert loose == []


def test_an_older_versions_loose_index_is_made_owner_only(project):
    root, memory = project
    memory.remember("a note", kind="finding")
    memory.recall("note")
    index = root / "docs/memory/.cache/index.sqlite"
    index.chmod(0o644)
    Memory.open(root).recall("note")
    assert stat.S_IMODE(index.stat().st_mode) == 0o600
