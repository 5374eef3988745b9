"""`doctor`: verify every shard, and with `repair` remove what an interrupted write left behind.

Repair only removes what replay already ignores (torn tails, incomplete txns, byte-identical
extra copies of an event, which a cherry-pick and a union merge leave) and the leftover lines of
forgotten notes; each rewritten shard is backed up to `.cache/backup/` first (without
the forgotten notes' lines, which must survive nowhere) and replaced atomically. Anything that
needs a person's judgement (a bad line, a newer format, an illegal transition from a merge) is
reported, never "fixed".
"""

from __future__ import annotations

import json
import os
import time

from ...base import fsutil
from ...base.errors import CustodianError, PartlyWritten
from ...base.records import Record
from ..index.index import Index
from .fold import Problem, replay
from .store import TORN_DIR, Ledger, split_shard

TYPE_CHECKING = False  # not `typing`'s: importing it costs every fresh process
if TYPE_CHECKING:
    from typing import Any

REPAIRABLE = ("torn-tail", "incomplete-txn", "forgotten-leftovers")


def _canonical(ev: dict) -> str:
    """An event's whole content as one string, for telling identical copies from different ones."""
    return json.dumps(ev, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _with_advice(problem, copies: dict[str, set]):
    """A duplicate-event problem with what to do about it: replay reads one copy, so nothing is
    lost; identical copies `--repair` removes, but which copy is right when they differ needs a person."""
    if problem.code != "duplicate-event" or problem.event not in copies:
        return problem
    if len(copies[problem.event]) == 1:
        why = (f"event {problem.event} appears more than once as identical lines (harmless: replay reads it "
               "once) — `doctor --repair` keeps the first and removes the others")
    else:
        why = (f"event {problem.event} appears more than once with different content; replay keeps one "
               "deterministically — keep the right line, delete the others by hand, then run `doctor`")
    return problem.replace(message=why)


def _check(ledger: Ledger):
    events, locations, problems = ledger.read_events(lenient=True)
    notes, _by_note, fold_problems = replay(events, locations=locations)
    copies: dict[str, set] = {}
    for ev in events:
        copies.setdefault(ev["id"], set()).add(_canonical(ev))
    problems = problems + [_with_advice(p, copies) for p in fold_problems]
    forgotten = {n for n, note in notes.items() if note.state == "forgotten"}
    extra: dict[str, list[dict]] = {}
    for ev in events:
        if ev["note"] in forgotten and ev["op"] != "forget":
            extra.setdefault(ev["note"], []).append(ev)
    for note_id, evs in sorted(extra.items()):
        problems.append(Problem(
            "forgotten-leftovers",
            f"note #{note_id} was {_attribution(notes, events, locations, note_id)}, and {len(evs)} event(s) with its "
            "text are still on disk (a merge from an older branch, or an interrupted forget) — check that forget "
            "was meant (`git log -S` on its line), then `doctor --repair --yes` strips them",
            where=locations.get(evs[0]["id"]), note=note_id, event=evs[0]["id"]))
    return events, notes, problems, extra, copies


def dead_writer_temp_files(ledger: Ledger) -> list[str]:
    """A warning per temp file a killed writer left (removed by the lock this doctor takes)."""
    base = ledger.memory_dir_str
    return [f"{os.path.relpath(p, base)}: a temp file left by a writer that died — removed (it may have held "
            "text a later hard delete removed)" for p in fsutil.temp_files(base)]


def _attribution(notes, events, locations, note_id: str) -> str:
    old = notes[note_id].extra.get("forgotten_with")
    if old:  # a successor written on a branch that did not know of the forget
        return f"forgotten with #{old}, which it supersedes and which was {forget_attribution(events, locations, old)}"
    return forget_attribution(events, locations, note_id)


def forget_attribution(events, locations, note_id: str) -> str:
    """Who forgot `note_id`, when, and where the forget line is: what a reviewer checks."""
    forgets = sorted((ev for ev in events if ev["note"] == note_id and ev["op"] == "forget"),
                     key=lambda ev: (ev["at"], ev["id"]))
    if not forgets:
        return "forgotten by no forget line on disk"
    ev = forgets[0]
    where = locations.get(ev["id"])
    return f"forgotten by {ev['actor']} on {ev['at'][:10]} (forget line {where or 'unknown'})"


def _backup(ledger: Ledger, path: str, data: bytes, stamp: str) -> str:
    backup = os.path.join(fsutil.cache_dir(ledger.memory_dir_str), "backup")
    fsutil.private_dir(backup)
    name = f"{os.path.basename(path)}.{stamp}"
    fsutil.atomic_write(os.path.join(backup, name), data)
    return f"{fsutil.CACHE_DIR}/backup/{name}"


def _identical_duplicates(problems, copies: dict[str, set]) -> set:
    """Ids of events whose every copy is the same event: the extra copies are safe to remove."""
    return {p.event for p in problems if p.code == "duplicate-event" and len(copies.get(p.event, ())) == 1}


def _repair(ledger: Ledger, events, problems, extra, copies) -> dict:
    duplicated = _identical_duplicates(problems, copies)
    seen: set = set()
    txn_of = {ev["id"]: ev["txn"] for ev in events}
    broken_txns = {txn_of.get(p.event) for p in problems if p.code == "incomplete-txn"} - {None}
    # lines of forgotten notes are never copied anywhere, not even to the backup: `forget --note`
    # is the one hard delete and a repair must not undo it
    forgotten_ids = {ev["id"] for evs in extra.values() for ev in evs}
    strip_ids = {ev["id"] for ev in events if ev["txn"] in broken_txns} | forgotten_ids
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    backups: list[str] = []
    rewritten: list[str] = []
    removed_lines, trimmed = 0, 0
    for path in ledger.shards():
        with open(path, "rb") as fh:
            data = fh.read()
        # a last line without its newline that is a whole event is a line like any other: kept
        lines, tail = split_shard(data)
        kept, backed, changed = [], [], bool(tail)
        if changed:
            trimmed += 1
        for raw in lines:
            try:
                ev = json.loads(raw.decode("utf-8"))
                eid = ev.get("id") if isinstance(ev, dict) else None
            except (UnicodeDecodeError, ValueError, RecursionError):
                eid = None
            if eid not in forgotten_ids:
                backed.append(raw + b"\n")
            # the first copy of an identically duplicated event stays (shards in name order)
            if eid in strip_ids or (eid in duplicated and eid in seen):
                changed = True
                removed_lines += 1
                continue
            if eid in duplicated:
                seen.add(eid)
            kept.append(raw + b"\n")
        if changed:
            backed.append(tail)  # a torn tail is kept in the backup, as before
            try:
                if b"".join(backed) != b"".join(kept):  # else only forgotten lines went: nothing to back up
                    backups.append(_backup(ledger, path, b"".join(backed), stamp))
                fsutil.atomic_write(path, b"".join(kept))
            except CustodianError as exc:
                if not rewritten:
                    raise
                raise PartlyWritten(part_way(rewritten, f"{ledger.rel(path)} was not ({_cause(exc)})")) from exc
            rewritten.append(ledger.rel(path))
    return {"backups": backups, "removed_lines": removed_lines, "trimmed_tails": trimmed, "rewritten": rewritten}


def part_way(rewritten: list[str], rest: str) -> str:
    """A repair that stopped after rewriting some shards, said as what is on disk: never "nothing
    was changed" once a tail was trimmed or a line removed."""
    said = ", ".join(rewritten)
    return (f"the repair stopped part-way: {said} {'was' if len(rewritten) == 1 else 'were'} written, but {rest} "
            "— free disk space and run doctor with repair again")


def _cause(exc) -> str:
    cause = exc.__cause__
    return f"{cause.strerror or cause}" if isinstance(cause, OSError) else exc.message.split("; nothing")[0]


class DoctorReport(Record):
    """What `doctor` found: counts, every problem (`problems`) and those left after a repair
    (`remaining`), what a repair did (`repaired`, and `index`, the rebuild, only when repairing)."""

    shards: int
    events: int
    notes: int
    problems: list[dict[str, str | None]]
    repaired: dict[str, int | list[str]] | None
    warnings: list[str]
    trimmed_earlier: list[str]
    remaining: list[dict[str, str | None]]
    ok: bool
    repairable: bool
    index: dict[str, int | str] | None = None

    def to_dict(self) -> dict:
        data = self.as_dict()
        if data["index"] is None:
            del data["index"]
        return data


def run_doctor(ledger: Ledger, *, repair: bool = False, yes: bool = False) -> DoctorReport:
    """The ledger checked; with `repair`, fixed where that is safe. The text of a note a forget line
    forgot (a line that arrived by a merge: a local forget strips at once) is deleted only with `yes`:
    a forged forget line in a pull request must not delete a rule for good unasked."""
    dead_temps = dead_writer_temp_files(ledger)  # taking the lock sweeps them: say so
    with fsutil.project_lock(ledger.memory_dir_str):
        events, notes, problems, extra, copies = _check(ledger)
        report: dict[str, Any] = {"shards": len(ledger.shards()), "events": len(events), "notes": len(notes),
                  "problems": [p.to_dict() for p in problems], "repaired": None}
        report["warnings"] = [
            f"{ledger.rel(p)}: a hidden file, not read as a shard — rename it without the leading dot if its "
            "events belong in the ledger, else delete it" for p in ledger.hidden_files()] + dead_temps
        torn_dir = os.path.join(ledger.memory_dir_str, fsutil.CACHE_DIR, TORN_DIR)
        kept = os.listdir(torn_dir) if os.path.isdir(torn_dir) else []
        report["trimmed_earlier"] = sorted(n for n in kept if not n.startswith("."))
        if repair:
            if extra and not yes:
                report["warnings"].append(
                    f"kept the text of {len(extra)} forgotten note(s): a forget line that came from elsewhere "
                    "deletes text only with `doctor --repair --yes` (check who forgot what, above, first)")
                problems = [p for p in problems if p.code != "forgotten-leftovers"]
                extra = {}
            if any(p.code in REPAIRABLE for p in problems) or _identical_duplicates(problems, copies):
                report["repaired"] = _repair(ledger, events, problems, extra, copies)
            index = Index(ledger)
            try:
                report["index"] = index.rebuild()
            except CustodianError as exc:
                done = (report["repaired"] or {}).get("rewritten")
                report["index"] = {"error": part_way(done, f"the index was not rebuilt ({_cause(exc)})") if done
                                   else f"index not rebuilt: {exc.one_line()}"}
            finally:
                index.close()
            _, notes, remaining, _, copies = _check(ledger)
            report["remaining"] = [p.to_dict() for p in remaining]
            report["notes"] = len(notes)
        else:
            report["remaining"] = report["problems"]
            remaining = problems
        report["ok"] = not report["remaining"]
        report["repairable"] = (any(p["code"] in REPAIRABLE for p in report["remaining"])
                                or bool(_identical_duplicates(remaining, copies)))
    return DoctorReport(**report)
