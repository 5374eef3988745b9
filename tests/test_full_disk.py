"""On a full disk every write's message matches what is on disk afterwards.

Each writer runs on a fresh project with N KiB left on a small tmpfs (a real ENOSPC, at whichever
step of the write it falls; root and a private mount namespace, `unshare --mount`) and with its
k-th rename failing (the window a tmpfs cannot reach). The message is held against a byte snapshot
of the project (`benchmarks/torture_disk.py` judges; its full sweep prints the table), then one more
write after space came back must finish the job: a forgotten text in no file, the journal applied.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import torture_disk

CASES = {"forget-note-2-shards": {"renames": [1, 2, 3], "free_kib": [0, 8, 64]},
         "enable": {"renames": [2, 3], "free_kib": [8, 64]},
         "compact-archive": {"renames": [4], "free_kib": [16]},
         "add-area": {"renames": [3], "free_kib": []},
         "doctor-repair-torn": {"renames": [2], "free_kib": [48, 128]}}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = []
    for writer, steps in CASES.items():
        out += torture_disk.run_honesty(tmp_path_factory.mktemp(writer), writers=[writer], **steps)
    skipped = [r["skipped"] for r in out if "skipped" in r]
    if skipped:
        print(f"full-disk cases skipped: {skipped[0]}")  # the rename cases still ran where they could
    return [r for r in out if "skipped" not in r]


def test_every_message_matches_the_disk_and_the_next_write_finishes(rows):
    assert rows
    bad = [f"{r['writer']} at {r['step']}: {'; '.join(r['problems'])}" for r in rows if r["problems"]]
    assert not bad, "\n".join(bad)


def test_the_failure_falls_at_every_step(rows):
    """Nothing changed, a write stopped part-way, and done are each reached, so each message was judged."""
    claims = {}
    for r in rows:
        claims.setdefault(r["writer"], set()).add(r["claim"])
    assert claims["forget-note-2-shards"] >= {"nothing", "partial", "done"}, claims
    assert claims["enable"] >= {"nothing", "partial"}, claims
    assert all(claim in ("nothing", "partial", "done") for r in rows for claim in [r["claim"]])


def test_a_partial_write_names_the_files_and_the_command_that_finishes_it(tmp_path):
    """A real CLI process whose third rename fails: exit 1, the CLI's own words for what finishes it."""
    from torture_common import make_project

    root = tmp_path / "p"
    make_project(root, export=False)
    shim = ("import errno, os, runpy, sys\nreal, calls = os.replace, [0]\n"
            "def replace(src, dst, *a, **kw):\n    calls[0] += 1\n"
            "    if calls[0] == int(os.environ['FAIL_RENAME']):\n"
            "        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), dst)\n"
            "    return real(src, dst, *a, **kw)\n"
            "os.replace = replace\nsys.argv[0] = 'memory-custodian'\n"
            "runpy.run_module('memory_custodian', run_name='__main__', alter_sys=True)\n")
    proc = subprocess.run([sys.executable, "-c", shim, "enable", "areas/store"], cwd=root, capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, FAIL_RENAME="3"))
    assert proc.returncode == 1, proc.stderr
    line = proc.stderr.strip()
    assert "part-way: areas/store.md was written, but changelog.md, manifest.md are not yet" in line, line
    assert "`memory-custodian migrate` with --apply" in line and "nothing was changed" not in line, line
    done = subprocess.run([sys.executable, "-m", "memory_custodian", "migrate", "--apply", "--format", "json"],
                          cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["recovered"].startswith("finished an interrupted `enable`: 1 of 3 files")
    assert not (root / "docs" / "memory" / ".cache" / "journal.json").exists()


def test_an_interrupted_forget_is_finished_by_the_next_write_or_doctor_repair(tmp_path):
    """A forget stopped after its event landed; a note write that cannot finish it says so and is not
    made; `doctor` with repair finishes it, and the text is then in no file, `.cache/` included."""
    from torture_common import make_project

    from memory_custodian.base.errors import PartlyWritten
    from memory_custodian.memory import Memory

    root = tmp_path / "p"
    memory = make_project(root, export=False)
    note_id = torture_disk._setup_forget(memory, two_shards=True)
    memory = Memory.open(root)
    with torture_disk._failing_rename(3)(), pytest.raises(PartlyWritten) as stopped:
        memory.forget_note(note_id)
    assert "the note's text is still in ledger/2001-01.jsonl and .cache/" in str(stopped.value)
    assert "`Memory.doctor` with repair" in str(stopped.value)
    with torture_disk._failing_rename(1)(), pytest.raises(PartlyWritten) as refused:
        Memory.open(root).remember("a note that must wait for the forget")
    message = str(refused.value)
    assert message.count("this write was not made") == 1 and "run this write again" in message, message
    assert "Memory.doctor" not in message
    report = Memory.open(root).doctor(repair=True)
    assert report.ok, report.remaining
    mem = root / "docs" / "memory"
    holders = [p for p in mem.rglob("*") if p.is_file() and torture_disk.SECRET.encode() in p.read_bytes()]
    assert holders == []
    assert not (mem / ".cache" / "forget-pending.json").exists()
    assert "a note that must wait" not in "".join(p.read_text() for p in (mem / "ledger").glob("*.jsonl"))
