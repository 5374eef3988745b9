"""`doctor`: verify every shard, and with `repair` remove what an interrupted write left behind.

Repair only removes what replay already ignores (torn tails, incomplete txns) and the leftover
lines of forgotten notes; each rewritten shard is backed up to `.cache/backup/` first (without
the forgotten notes' lines, which must survive nowhere) and replaced atomically. Anything that
needs a person's judgement (a bad line, a newer format, an illegal transition from a merge) is
reported, never "fixed".
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .. import fsutil
from .store import TORN_DIR, Ledger

REPAIRABLE = ("torn-tail", "incomplete-txn", "forgotten-leftovers")


def _check(ledger: Ledger):
    from .fold import Problem, replay

    events, locations, problems = ledger.read_events(lenient=True)
    notes, by_note, fold_problems = replay(events, locations=locations)
    problems = problems + fold_problems
    forgotten = {n for n, note in notes.items() if note.state == "forgotten"}
    extra = {}
    for ev in events:
        if ev["note"] in forgotten and ev["op"] != "forget":
            extra.setdefault(ev["note"], []).append(ev)
    for note_id, evs in sorted(extra.items()):
        problems.append(Problem(
            "forgotten-leftovers",
            f"forgotten note #{note_id} still has {len(evs)} event(s) with its text on disk (a merge from an older "
            "branch, or an interrupted forget) — `doctor --repair` strips them",
            where=locations.get(evs[0]["id"]), note=note_id, event=evs[0]["id"]))
    return events, notes, problems, extra


def _backup(ledger: Ledger, path: Path, data: bytes, stamp: str) -> str:
    backup = fsutil.ensure_cache_dir(ledger.memory_dir) / "backup"
    backup.mkdir(exist_ok=True)
    target = backup / f"{path.name}.{stamp}"
    fsutil.atomic_write(target, data)
    return f"{fsutil.CACHE_DIR}/backup/{target.name}"


def _repair(ledger: Ledger, events, problems, extra) -> dict:
    txn_of = {ev["id"]: ev["txn"] for ev in events}
    broken_txns = {txn_of.get(p.event) for p in problems if p.code == "incomplete-txn"} - {None}
    # lines of forgotten notes are never copied anywhere, not even to the backup: `forget --note`
    # is the one hard delete and a repair must not undo it
    forgotten_ids = {ev["id"] for evs in extra.values() for ev in evs}
    strip_ids = {ev["id"] for ev in events if ev["txn"] in broken_txns} | forgotten_ids
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    backups, removed_lines, trimmed = [], 0, 0
    for path in ledger.shards():
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        kept, backed, changed = [], [], end != len(data)
        if changed:
            trimmed += 1
        for raw in data[:end].split(b"\n")[:-1]:
            try:
                ev = json.loads(raw.decode("utf-8"))
                eid = ev.get("id") if isinstance(ev, dict) else None
            except (UnicodeDecodeError, ValueError, RecursionError):
                eid = None
            if eid not in forgotten_ids:
                backed.append(raw + b"\n")
            if eid in strip_ids:
                changed = True
                removed_lines += 1
                continue
            kept.append(raw + b"\n")
        if changed:
            backed.append(data[end:])  # a torn tail is kept in the backup, as before
            if b"".join(backed) != b"".join(kept):  # else only forgotten lines went: nothing to back up
                backups.append(_backup(ledger, path, b"".join(backed), stamp))
            fsutil.atomic_write(path, b"".join(kept))
    return {"backups": backups, "removed_lines": removed_lines, "trimmed_tails": trimmed}


def run_doctor(ledger: Ledger, *, repair: bool = False) -> dict:
    from .index import Index

    with fsutil.project_lock(ledger.memory_dir):
        events, notes, problems, extra = _check(ledger)
        report = {"shards": len(ledger.shards()), "events": len(events), "notes": len(notes),
                  "problems": [p.to_dict() for p in problems], "repaired": None}
        torn_dir = ledger.memory_dir / fsutil.CACHE_DIR / TORN_DIR
        report["trimmed_earlier"] = sorted(p.name for p in torn_dir.glob("*")) if torn_dir.is_dir() else []
        if repair:
            if any(p.code in REPAIRABLE for p in problems):
                report["repaired"] = _repair(ledger, events, problems, extra)
            from ..errors import CustodianError

            index = Index(ledger)
            try:
                report["index"] = index.rebuild()
            except CustodianError as exc:
                report["index"] = {"error": f"index not rebuilt: {exc.one_line()}"}
            finally:
                index.close()
            _, notes, remaining, _ = _check(ledger)
            report["remaining"] = [p.to_dict() for p in remaining]
            report["notes"] = len(notes)
        else:
            report["remaining"] = report["problems"]
        report["ok"] = not report["remaining"]
    return report
