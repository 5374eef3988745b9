"""Torture under load: 8 processes mixing curated and ledger writes and reads, 8 threads of one
process, and the end-of-run check that the export mirror and the index agree with the ledger."""

from __future__ import annotations

import json
import multiprocessing
import random
import sys
import time
import traceback
from pathlib import Path

from torture_common import RECOVERABLE, SRC, cli, curated_text, make_project, replay_state


def _worker(args) -> dict:
    index, root, seconds, seed, use_cli = args
    sys.path.insert(0, str(SRC))
    from memory_custodian.base.errors import Corrupt, CustodianError, Refused
    from memory_custodian.memory import Memory

    rng = random.Random(seed)
    memory = Memory.open(root)
    out = {"worker": index, "ops": {}, "acked_notes": [], "acked_curated": [], "half_written": [],
           "unexpected": [], "refused": 0, "torn_seen": 0}
    mine_notes: list[str] = []
    n = 0
    deadline = time.monotonic() + seconds

    def count(op):
        out["ops"][op] = out["ops"].get(op, 0) + 1

    while time.monotonic() < deadline:
        n += 1
        r = rng.random()
        m = f"w{index}n{n:05d}x"
        try:
            if use_cli:
                if r < 0.6:
                    p = cli(Path(root), "remember", f"concurrent note {m}", "--format", "json")
                    if p.returncode == 0:
                        out["acked_notes"].append(json.loads(p.stdout)["id"])
                    else:
                        out["unexpected"].append(f"cli remember exit {p.returncode}: {p.stderr.strip()[:200]}")
                    count("remember (cli)")
                else:
                    p = cli(Path(root), "add", f"Concurrent constraint {m}", "--type", "constraint")
                    if p.returncode == 0:
                        out["acked_curated"].append(m)
                    else:
                        out["unexpected"].append(f"cli add exit {p.returncode}: {p.stderr.strip()[:200]}")
                    count("add (cli)")
                continue
            if r < 0.30:
                note = memory.remember(f"concurrent note {m}", tags=["concurrent"])
                out["acked_notes"].append(note.id)
                mine_notes.append(note.id)
                count("remember")
            elif r < 0.42:
                memory.add(f"Concurrent constraint {m}", type="constraint")
                out["acked_curated"].append(m)
                count("add")
            elif r < 0.50 and mine_notes:
                note = rng.choice(mine_notes)
                try:
                    memory.flag_stale(note, reason=f"check {m}")
                except Refused:
                    memory.reinstate(note, reason=f"confirmed {m}")
                count("lifecycle")
            elif r < 0.65:
                result = memory.recall("concurrent note", limit=5)
                count("recall")
                _ = result
            elif r < 0.80:
                memory.read("implementation", paths=("src/x.py",))
                count("read")
            else:
                from memory_custodian.ledger.storage.store import Ledger

                events, _, problems = Ledger(memory.memory_dir).read_events(lenient=True)
                ids = {ev["note"] for ev in events}
                missing = [i for i in out["acked_notes"] if i not in ids]
                if missing:
                    out["half_written"].append(f"own acknowledged notes not visible: {missing[:3]}")
                for p in problems:
                    if p.code == "torn-tail":
                        out["torn_seen"] += 1  # an append in flight; replay ignores it by design
                    elif p.code not in RECOVERABLE:
                        out["half_written"].append(f"{p.code} at {p.where}")
                text = curated_text(memory.memory_dir)
                gone = [c for c in out["acked_curated"] if c not in text]
                if gone:
                    out["half_written"].append(f"own acknowledged constraints not visible: {gone[:3]}")
                count("replay+files")
        except Corrupt as exc:
            out["half_written"].append(f"Corrupt: {exc.one_line()[:200]}")
        except Refused:
            out["refused"] += 1
        except CustodianError as exc:
            out["unexpected"].append(f"{type(exc).__name__}: {exc.one_line()[:200]}")
        except Exception as exc:
            where = traceback.extract_tb(exc.__traceback__)[-3:]
            frames = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(where))
            out["unexpected"].append(f"{type(exc).__name__}: {exc} at {frames}"[:400])
    return out


def run_concurrency(tmp: Path, seconds: float, procs: int, seed: int) -> dict:
    root = tmp / "concurrent"
    memory = make_project(root, export=True)
    ctx = multiprocessing.get_context("spawn")
    started = time.monotonic()
    with ctx.Pool(procs) as pool:
        results = pool.map(_worker, [(i, str(root), seconds, seed + i, i == 0) for i in range(procs)])
    elapsed = time.monotonic() - started
    ops: dict[str, int] = {}
    for r in results:
        for k, v in r["ops"].items():
            ops[k] = ops.get(k, 0) + v
    acked_notes = [n for r in results for n in r["acked_notes"]]
    acked_curated = [c for r in results for c in r["acked_curated"]]
    events, notes, _ = replay_state(memory.memory_dir)
    creates: dict[str, int] = {}
    for ev in events:
        if ev["op"] == "create":
            creates[ev["note"]] = creates.get(ev["note"], 0) + 1
    text = curated_text(memory.memory_dir)
    lost = [n for n in acked_notes if n not in notes] + [c for c in acked_curated if c not in text]
    dup = [n for n in acked_notes if creates.get(n, 0) > 1] + [c for c in acked_curated if text.count(c) > 1]
    bodies = [n.body for n in notes.values()]
    dup += [b for b in set(bodies) if bodies.count(b) > 1 and b.startswith("concurrent note")]
    # The mirror under load: after the last write through the CLI it must match the ledger (library
    # calls do not re-render it; the CLI and the MCP server do).
    last = cli(root, "remember", "concurrency finished", "--format", "json")
    if last.returncode == 0:
        acked_notes.append(json.loads(last.stdout)["id"])
    check = cli(root, "export", "--check")
    index_equal, index_detail = compare_index(memory)
    writes = sum(v for k, v in ops.items() if k.startswith(("remember", "add", "lifecycle")))
    reads = sum(ops.values()) - writes
    return {"processes": procs, "seconds": round(elapsed, 1), "ops": ops, "writes": writes, "reads": reads,
            "writes_per_s": round(writes / seconds, 1), "reads_per_s": round(reads / seconds, 1),
            "acknowledged": len(acked_notes) + len(acked_curated), "lost": len(lost), "duplicated": len(dup),
            "lost_detail": lost[:5], "dup_detail": dup[:5],
            "half_written_seen": sum(len(r["half_written"]) for r in results),
            "half_written_detail": [h for r in results for h in r["half_written"]][:5],
            "torn_tails_seen_by_readers": sum(r["torn_seen"] for r in results),
            "refused": sum(r["refused"] for r in results),
            "unexpected": [u for r in results for u in r["unexpected"]][:5],
            "unexpected_count": sum(len(r["unexpected"]) for r in results),
            "export_check_exit": check.returncode, "export_check": (check.stdout + check.stderr).strip()[:300],
            "index_equals_rebuild": index_equal, "index_detail": index_detail}


def run_threads(tmp: Path, threads: int = 8, per_thread: int = 10) -> dict:
    """The library from several threads of one process (an embedding app, the MCP SDK's workers)."""
    import threading

    from memory_custodian.base.errors import CustodianError
    from memory_custodian.memory import Memory

    root = tmp / "threads"
    memory = make_project(root, export=False)
    acked_notes, acked_curated, errors = [], [], []
    guard = threading.Lock()

    def work(i):
        mine = Memory.open(root)
        for j in range(per_thread):
            m = f"t{i}n{j:03d}x"
            try:
                mine.add(f"Thread constraint {m}", type="constraint")
                with guard:
                    acked_curated.append(m)
                note = mine.remember(f"thread note {m}")
                with guard:
                    acked_notes.append(note.id)
            except CustodianError as exc:
                errors.append(f"{type(exc).__name__}: {exc.one_line()[:150]}")
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}"[:200])

    started = time.monotonic()
    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    _, notes, _ = replay_state(memory.memory_dir)
    text = curated_text(memory.memory_dir)
    lost = [m for m in acked_curated if m not in text] + [n for n in acked_notes if n not in notes]
    return {"threads": threads, "attempted": threads * per_thread * 2, "acknowledged": len(acked_curated) + len(acked_notes),
            "lost": len(lost), "lost_detail": lost[:5], "errors": len(errors), "error_detail": errors[:3],
            "seconds": round(time.monotonic() - started, 1)}


def compare_index(memory) -> tuple[bool, str]:
    """The incrementally caught-up index against a fresh replay, then against a full rebuild."""
    def rows(notes):
        return sorted((n.id, n.state, n.last_event, n.title) for n in notes)

    _, replayed, _ = replay_state(memory.memory_dir)
    truth = rows(n for n in replayed.values() if n.state != "forgotten")
    incremental = rows(memory.notes())
    memory.reindex()
    rebuilt = rows(memory.notes())
    if incremental != truth:
        return False, f"incremental index differs from replay ({len(incremental)} vs {len(truth)} notes)"
    if rebuilt != truth:
        return False, f"rebuilt index differs from replay ({len(rebuilt)} vs {len(truth)} notes)"
    return True, f"{len(truth)} notes identical"
