"""An interrupted check-in is never half-applied: SIGKILL at random moments, and every possible torn write."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time

from ledger_text_fixture import ev, write_ledger

from memory_custodian.ledger.storage.store import Ledger

N = 200


def make_project(root):
    evs = [ev(i + 1, "create", f"n{i:07d}", f"2025-01-01T00:00:{i % 60:02d}.{i // 60:03d}Z", kind="finding",
              priority="medium", title=f"note {i}", body=f"body of note {i}", tags=[], paths=[], provenance="human")
           for i in range(N)]
    memory = write_ledger(root, evs)
    buf = root / "buffer.md"
    memory.edit_checkout(buf)
    text = buf.read_text(encoding="utf-8")
    edited = re.sub(r"^body of note (\d+)$", r"body of note \1, edited", text, flags=re.M)
    assert edited.count(", edited") == N
    buf.write_text(edited, encoding="utf-8")
    return memory


def states(memory_dir):
    rep = Ledger(memory_dir).load()
    superseded = sum(1 for n in rep.notes.values() if n.state == "superseded")
    edited = sum(1 for n in rep.notes.values() if n.body.endswith(", edited"))
    return superseded, edited, {p.code for p in rep.problems}


def checkin_cmd(root):
    return [sys.executable, "-m", "memory_custodian", "edit", "--project-root", str(root),
            "--checkin", str(root / "buffer.md"), "--reason", "bulk edit"]


def test_sigkill_during_checkin_leaves_all_or_nothing(tmp_path):
    template = tmp_path / "template"
    memory = make_project(template)
    # how long a whole check-in takes here, to spread the kills over it
    probe = tmp_path / "probe"
    shutil.copytree(template, probe)
    t0 = time.monotonic()
    subprocess.run(checkin_cmd(probe), check=True, capture_output=True)
    full = time.monotonic() - t0
    assert states(probe / "docs" / "memory")[:2] == (N, N)
    outcomes = []
    for k in range(6):
        root = tmp_path / f"run{k}"
        shutil.copytree(template, root)
        proc = subprocess.Popen(checkin_cmd(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(full * (0.6 + 0.14 * k))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        superseded, edited, problems = states(root / "docs" / "memory")
        assert (superseded, edited) in ((0, 0), (N, N)), (k, superseded, edited)
        assert problems <= {"torn-tail", "incomplete-txn"}
        outcomes.append(superseded)
    assert memory.memory_dir.exists()
    print(f"full check-in {full:.3f}s; kill outcomes (superseded notes per run): {outcomes}")


def test_every_torn_write_of_the_checkin_txn_is_ignored_whole(tmp_path):
    root = tmp_path / "p"
    memory = make_project(root)
    ledger_dir = memory.memory_dir / "ledger"
    before = {p.name: p.read_bytes() for p in ledger_dir.glob("*.jsonl")}
    result = memory.edit_checkin(root / "buffer.md", reason="bulk edit")
    assert result.events == 2 * N
    after = {p.name: p.read_bytes() for p in ledger_dir.glob("*.jsonl")}
    (grown,) = [name for name in after if after[name] != before.get(name)]
    old, new = before.get(grown, b""), after[grown]
    assert new.startswith(old)
    step = max(1, (len(new) - len(old)) // 20)
    cuts = sorted(set(range(len(old) + 1, len(new) - 1, step)) | {len(new) - 2} |
                  {len(old) + new[len(old):].index(b"\n") + 1})  # also a cut right after a whole line
    for cut in cuts:
        (ledger_dir / grown).write_bytes(new[:cut])
        superseded, edited, problems = states(memory.memory_dir)
        assert (superseded, edited) == (0, 0), cut
        assert problems and problems <= {"torn-tail", "incomplete-txn"}
    # every byte but the final newline: the last event is whole, so the txn is complete and applies
    # (as the writer's own tail fix decides; see tests/test_ledger_tails.py)
    (ledger_dir / grown).write_bytes(new[:-1])
    assert states(memory.memory_dir) == (N, N, set())
    (ledger_dir / grown).write_bytes(new)
    assert states(memory.memory_dir)[:2] == (N, N)
    os.sync()
