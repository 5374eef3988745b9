"""A rebuild folded by worker processes equals one folded in process, rowid for rowid; a worker
that fails, or a shard replaced under it, fails the rebuild loudly and leaves the index as it was."""

from __future__ import annotations

import os
import shutil

import pytest

from memory_custodian.base.errors import Refused
from memory_custodian.ledger.index import rebuild
from memory_custodian.ledger.index.index import Index
from memory_custodian.ledger.index.rebuild_worker import Workers
from memory_custodian.ledger.storage.store import Ledger

TABLES = ("notes", "note_text", "note_tags", "note_paths", "events", "waived", "shards")


def full_dump(index: Index) -> dict:
    """Every row of every table, rowids included, and what the full-text index finds."""
    db = index.db
    # notes, note_text and events name their rowid column, so `*` holds it
    out = {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in TABLES}
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.tokens USING fts5vocab(main, notes_fts, instance)")
    out["fts"] = db.execute("SELECT term, doc, col, offset FROM temp.tokens ORDER BY 1, 2, 3, 4").fetchall()
    return out


@pytest.fixture
def ledger_dir(mem):
    """A few dozen notes over two shards: superseded, revoked, forgotten, tagged, anchored."""
    for i in range(40):
        mem.remember(f"note {i}: the `cacheLock_{i % 7}` in src/svc{i % 3}/worker.py retries",
                     kind=("finding", "gotcha", "decision", "directive")[i % 4],
                     tags=[f"t{i % 5}"], paths=[f"src/svc{i % 3}/**"])
    notes = sorted(n.id for n in mem.index().all_notes())
    mem.supersede(notes[0], "the lock is released first now", reason="fixed")
    mem.revoke(notes[1], reason="wrong")
    mem.forget_note(notes[2])
    shards = sorted((mem.memory_dir / "ledger").glob("*.jsonl"))
    # a second shard: the same events split in two files (replay is independent of the split)
    lines = shards[0].read_text(encoding="utf-8").splitlines(keepends=True)
    shards[0].write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    (shards[0].parent / "2020-01.jsonl").write_text("".join(lines[len(lines) // 2:]), encoding="utf-8")
    mem.index().close()
    return mem.memory_dir


def rebuilt(memory_dir, workers: int, monkeypatch, chunk: int = 7) -> Index:
    monkeypatch.setattr(rebuild, "parallel_workers", lambda events: workers)
    monkeypatch.setattr(rebuild, "CHUNK_NOTES", chunk)
    for p in (memory_dir / ".cache").glob("index.sqlite*"):
        p.unlink()
    index = Index(Ledger(memory_dir))
    index.rebuild()
    return index


def before_workers_start(monkeypatch, action) -> None:
    """The next rebuild uses two workers and runs `action()` after its first pass, as they start."""
    real_init = Workers.__init__

    def init(self, n, shards):
        action()
        real_init(self, n, shards)

    monkeypatch.setattr(Workers, "__init__", init)
    monkeypatch.setattr(rebuild, "parallel_workers", lambda events: 2)


def test_workers_fold_exactly_as_the_process_does(ledger_dir, monkeypatch):
    serial = full_dump(rebuilt(ledger_dir, 0, monkeypatch))
    index = rebuilt(ledger_dir, 0, monkeypatch)
    states = sorted(r[0] for r in index.db.execute("SELECT state FROM notes"))  # 41: the forgotten one keeps its row
    assert states == ["active"] * 38 + ["forgotten", "revoked", "superseded"]
    for workers, chunk in ((2, 7), (3, 1), (2, 1000)):
        assert full_dump(rebuilt(ledger_dir, workers, monkeypatch, chunk)) == serial, (workers, chunk)


def test_a_replaced_shard_fails_the_rebuild_and_keeps_the_index(ledger_dir, monkeypatch):
    index = rebuilt(ledger_dir, 0, monkeypatch)
    before = full_dump(index)
    shard = sorted((ledger_dir / "ledger").glob("*.jsonl"))[-1]

    def replace():
        copy = shard.with_suffix(".tmp")
        shutil.copyfile(shard, copy)
        os.replace(copy, shard)  # same bytes, another file: what a rewrite does mid-rebuild

    before_workers_start(monkeypatch, replace)
    with pytest.raises(Refused, match=f"{shard.name} was replaced while the index was being rebuilt"):
        index.rebuild()
    assert full_dump(index) == before


def test_a_worker_that_dies_fails_the_rebuild_loudly(ledger_dir, monkeypatch):
    index = rebuilt(ledger_dir, 0, monkeypatch)
    before = full_dump(index)
    real_map = Workers.map_in_order
    started = []

    def kill_one(self, chunks):
        started.extend(self.procs)
        self.procs[1].kill()
        yield from real_map(self, chunks)

    monkeypatch.setattr(Workers, "map_in_order", kill_one)
    monkeypatch.setattr(rebuild, "parallel_workers", lambda events: 2)
    with pytest.raises(Refused, match="a rebuild worker stopped"):
        index.rebuild()
    assert full_dump(index) == before
    assert len(started) == 2 and all(p.returncode is not None for p in started)  # none left running


def test_only_big_ledgers_on_several_cpus_use_workers(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5, 6, 7}, raising=False)
    assert rebuild.parallel_workers(rebuild.PARALLEL_MIN_EVENTS - 1) == 0
    assert rebuild.parallel_workers(rebuild.PARALLEL_MIN_EVENTS) == rebuild.MAX_WORKERS
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert rebuild.parallel_workers(10 ** 6) == 0


def test_a_worker_error_is_raised_with_its_reason(ledger_dir, monkeypatch):
    index = rebuilt(ledger_dir, 0, monkeypatch)
    before = full_dump(index)
    shard = sorted((ledger_dir / "ledger").glob("*.jsonl"))[0]

    def garble():
        with open(shard, "r+b") as fh:  # the same file, its first line garbled in place after the first pass
            fh.write(b"#" * 20)

    before_workers_start(monkeypatch, garble)
    with pytest.raises(Refused, match=r"the index rebuild failed: JSONDecodeError: .*run `reindex` again"):
        index.rebuild()
    assert full_dump(index) == before


# A shell's background job starts with SIGINT ignored, and Python then installs no handler: each script
# takes Ctrl-C as a terminal's foreground process would, wherever the suite runs.
RESTORE_SIGINT = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"

INTERRUPTED = RESTORE_SIGINT + r'''
import sys, time
from memory_custodian.ledger.index import rebuild
from memory_custodian.ledger.index.index import Index
from memory_custodian.ledger.index.rebuild_worker import Workers
from memory_custodian.ledger.storage.store import Ledger

rebuild.parallel_workers = lambda events: 2
real_map = Workers.map_in_order

def slow_map(self, chunks):
    print("started", flush=True)
    time.sleep(30)  # Ctrl-C arrives here, with both workers alive
    yield from real_map(self, chunks)

Workers.map_in_order = slow_map
Index(Ledger(sys.argv[1])).rebuild()
'''


# Ctrl-C while a worker's interpreter is still starting, before it can ignore the signal itself
AT_START_UP = RESTORE_SIGINT + r'''
import subprocess, sys
from memory_custodian.ledger.index import rebuild, rebuild_worker
from memory_custodian.ledger.index.index import Index
from memory_custodian.ledger.storage.store import Ledger

rebuild.parallel_workers = lambda events: 2
real_popen = subprocess.Popen

class Announced(real_popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # the child is exec'd and its interpreter starting: SIGINT (bit 1) must be blocked already
        with open(f"/proc/{self.pid}/status") as f:
            blocked = [int(line.split()[1], 16) & 2 for line in f if line.startswith("SigBlk:")]
        print("started" if blocked == [2] else "SIGINT is not blocked at start-up", flush=True)
        import time; time.sleep(0.5)

rebuild_worker.subprocess.Popen = Announced
Index(Ledger(sys.argv[1])).rebuild()
'''


@pytest.mark.parametrize("when", ["folding", pytest.param("starting", marks=pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="reads the worker's signal mask from /proc"))])
def test_ctrl_c_stops_the_workers_with_one_message(ledger_dir, tmp_path, when):
    import signal
    import subprocess
    import sys

    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED if when == "folding" else AT_START_UP, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script), str(ledger_dir)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout.readline() == "started\n"
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the whole process group
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert err.count("KeyboardInterrupt") == 1, err  # the parent's alone: the workers stay quiet
    with pytest.raises(ProcessLookupError):  # and nothing of its process group is left running
        os.killpg(proc.pid, 0)


def test_workers_ignore_ctrl_c_and_leave_it_to_the_parent(ledger_dir, monkeypatch):
    import signal

    serial = full_dump(rebuilt(ledger_dir, 0, monkeypatch))
    real_map = Workers.map_in_order

    def interrupt_workers(self, chunks):
        rows = real_map(self, chunks)
        yield next(rows)
        yield next(rows)  # one chunk back from each worker: both are past their start-up
        for proc in self.procs:
            os.kill(proc.pid, signal.SIGINT)
        yield from rows

    monkeypatch.setattr(Workers, "map_in_order", interrupt_workers)
    assert full_dump(rebuilt(ledger_dir, 2, monkeypatch)) == serial  # 6 chunks of 7: four more after the signal


def test_a_stray_module_in_the_current_directory_does_not_reach_the_workers(ledger_dir, tmp_path, monkeypatch):
    serial = full_dump(rebuilt(ledger_dir, 0, monkeypatch))
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "json.py").write_text("raise SystemExit('the stray json.py was imported')\n", encoding="utf-8")
    monkeypatch.chdir(stray)
    assert full_dump(rebuilt(ledger_dir, 2, monkeypatch)) == serial


def test_a_stray_print_in_a_worker_cannot_corrupt_the_rows(ledger_dir):
    import subprocess
    import sys

    import memory_custodian
    from memory_custodian.ledger.index import rebuild_worker

    src = os.path.dirname(os.path.dirname(memory_custodian.__file__))
    code = (f"import sys; sys.path.insert(0, {src!r}); from memory_custodian.ledger.index import rebuild_worker as w; "
            "real = w.fold_chunk; "
            "w.fold_chunk = lambda chunk, files: (print('a stray print'), real(chunk, files))[1]; "
            "w.main()")
    shard = sorted((ledger_dir / "ledger").glob("*.jsonl"))[0]
    first_line = shard.read_bytes().split(b"\n")[0]
    proc = subprocess.Popen([sys.executable, "-I", "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    st = os.stat(shard)
    rebuild_worker._send(proc.stdin, [(str(shard), st.st_dev, st.st_ino)])
    rebuild_worker._send(proc.stdin, [[(0, 0, len(first_line))]])  # one note: its create event
    rows = rebuild_worker._recv(proc.stdout)
    proc.stdin.close()  # EOF: the worker exits
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 0
    proc.stdout.close()
    proc.stderr.close()
    assert b"a stray print" in err
    assert len(rows) == 1 and rows[0][1][0] in first_line.decode()  # the note's title, intact
