"""What memory is used for: the `stats` report over the usage log (`usage_log.py`).

A memory nobody writes to or reads from fails without an error, so the hooks keep count: one JSON
line per hook call in `.cache/adoption.jsonl`. `report` joins it with the ledger's own events (who wrote what, when) and
flags what nobody would otherwise notice: sessions that edited files and recorded nothing, notes
injected over and over and never expanded, hooks that stopped firing.
"""

from __future__ import annotations

import os
import time

from ..base.errors import NotFound
from ..base.records import Record, field
from ..ledger.storage.ids import iso_to_ms
from .auto_checkpoint import written_since
from .usage_log import iso_at, read_store, store_path

TYPE_CHECKING = False  # not `typing`'s: importing it costs every fresh process
if TYPE_CHECKING:
    from typing import Any

SILENT_SESSIONS = 5  # this many latest sessions in a row that edited files and recorded nothing: flagged
INJECTED_UNREAD = 40  # a note injected this often and never expanded: flagged
QUIET_DAYS = 7  # no hook for this long: flagged (the wiring broke, or nobody works here)


class SessionStats(Record):
    """One host session as the hooks saw it."""

    session: str
    host: str
    first: str
    last: str
    hooks: dict[str, int] = field(default_factory=dict)
    injected_notes: int = 0
    injected_tokens: int = 0
    files_edited: bool = False
    written: dict[str, int] = field(default_factory=dict)
    checkpoints: dict[str, int] = field(default_factory=dict)
    subagent_checkpoints: dict[str, int] = field(default_factory=dict)


class AdoptionReport(Record):
    """The `stats` report: per session and in total; `flags` say what needs a person's eye."""

    sessions: list[SessionStats]
    store: str
    totals: dict[str, Any]  # counts by name: "hooks", "written" and the checkpoints map a name to a count
    flags: list[str] = field(default_factory=list)
    unreadable_lines: int = 0

    def to_dict(self) -> dict:
        return self.as_dict()

    def text(self) -> str:
        t = self.totals
        lines = [f"memory-custodian stats · {len(self.sessions)} session(s) logged in {self.store}",
                 "hooks fired: " + _pairs(t["hooks"]),
                 f"injected: {t['injected_notes']} notes, {t['injected_tokens']} tokens · recalls {t['recalls']} · "
                 f"expands {t['expands']}",
                 "notes written: " + _pairs(t["written"]),
                 "checkpoints: main agent " + _pairs(t["checkpoints"]) + " · subagents " +
                 _pairs(t["subagent_checkpoints"])]
        if self.sessions:
            lines.append("")
            lines.append("sessions (newest first):")
            for s in self.sessions[:SHOWN_SESSIONS]:
                lines.append(f"  {s.last[:16]}Z {s.host:<6} {s.session[:18]:<18} hooks {sum(s.hooks.values()):>3} · "
                             f"injected {s.injected_notes} ({s.injected_tokens} tok) · "
                             f"{'edited files' if s.files_edited else 'no edits'} · wrote {_pairs(s.written)}"
                             f" · checkpoints {_pairs(s.checkpoints)}" +
                             (f" · subagents {_pairs(s.subagent_checkpoints)}" if s.subagent_checkpoints else ""))
            if len(self.sessions) > SHOWN_SESSIONS:
                lines.append(f"  … {len(self.sessions) - SHOWN_SESSIONS} older (--format json lists them all)")
        if self.unreadable_lines:
            lines.append(f"{self.unreadable_lines} unreadable line(s) in the log were skipped (a torn write)")
        lines.append("")
        lines.extend(f"FLAG {flag}" for flag in self.flags) if self.flags else lines.append("no flags")
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        """One line for `status` and `doctor`."""
        t = self.totals
        head = (f"adoption: {len(self.sessions)} session(s), {sum(t['hooks'].values())} hook calls, "
                f"{sum(t['written'].values())} note(s) written")
        return head + (f" — {len(self.flags)} flag(s): {self.flags[0]} (`memory-custodian stats`)" if self.flags
                       else " — no flags")


SHOWN_SESSIONS = 20
# "off": a subagent's stop that asked nothing because subagents have no checkpoint (the default)
COUNTED_OUTCOMES = ("blocked", "answered", "declined", "off")


def _pairs(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def summary_line(memory) -> str | None:
    """The `status`/`doctor` line, or None when no hook or read was ever logged here."""
    if not os.path.isfile(store_path(memory.memory_dir_str, create=False)):
        return None
    return report(memory).summary()


def report(memory, *, now: float | None = None) -> AdoptionReport:
    """The adoption report over everything logged (newest session first)."""
    entries, bad = read_store(memory.memory_dir_str)
    now_iso = iso_at(time.time() if now is None else now)
    since = entries[0]["at"] if entries else now_iso
    # creates read from the shards (not a fold of the ledger): `status` prints this on every call;
    # a create whose txn never completed would count, which only a `doctor` repair can settle anyway
    writes = [(at, kind, actor) for at, _, kind, actor in written_since(memory.memory_dir_str, {}, since)]
    # the automatic checkpoint is the harness writing, not the session recording what it learned
    sessions = _sessions(entries, [w for w in writes if w[2] != "auto"])
    totals: dict[str, Any] = {"hooks": {}, "injected_notes": 0, "injected_tokens": 0, "checkpoints": {},
                              "subagent_checkpoints": {},
                              "recalls": sum(1 for e in entries if e.get("kind") == "recall"),
                              "expands": sum(1 for e in entries if e.get("kind") == "expand"), "written": {}}
    for s in sessions:
        for key in ("hooks", "checkpoints", "subagent_checkpoints"):
            for name, n in getattr(s, key).items():
                totals[key][name] = totals[key].get(name, 0) + n
        totals["injected_notes"] += s.injected_notes
        totals["injected_tokens"] += s.injected_tokens
    for _, kind, actor in writes:
        key = f"{kind}/{actor}"
        totals["written"][key] = totals["written"].get(key, 0) + 1
    flags = _flags(memory, entries, sessions, now_iso, lambda: bool(writes) or bool(memory.notes()))
    return AdoptionReport(sessions=sessions, totals=totals, flags=flags, unreadable_lines=bad,
                          store=os.path.relpath(store_path(memory.memory_dir_str, create=False), memory.root_str))


def _sessions(entries: list[dict], writes: list[tuple]) -> list[SessionStats]:
    by: dict[str, SessionStats] = {}
    for e in entries:
        if e.get("kind") != "hook":
            continue
        session, event = str(e.get("session")), str(e.get("event"))
        s = by.get(session)
        if s is None:
            s = by[session] = SessionStats(session=session, host=str(e.get("host")), first=e["at"], last=e["at"])
        s.last = e["at"]
        s.hooks[event] = s.hooks.get(event, 0) + 1
        s.injected_notes += len(e.get("injected") or ())
        s.injected_tokens += int(e.get("tokens") or 0)
        s.files_edited = s.files_edited or bool(e.get("wrote"))
        # each agent's budget is its own (checkpoint.py): a subagent's outcome never counts as the main agent's
        counted = s.subagent_checkpoints if e.get("subagent") else s.checkpoints
        if e.get("checkpoint") in COUNTED_OUTCOMES and (e["checkpoint"] != "off" or e.get("subagent")):
            name = "fired" if e["checkpoint"] == "blocked" else e["checkpoint"]
            counted[name] = counted.get(name, 0) + 1
    for s in by.values():
        for at, kind, actor in writes:
            if s.first <= at <= s.last:
                s.written[f"{kind}/{actor}"] = s.written.get(f"{kind}/{actor}", 0) + 1
    return sorted(by.values(), key=lambda s: (s.last, s.session), reverse=True)


def _flags(memory, entries, sessions, now_iso: str, memory_in_use) -> list[str]:
    flags: list[str] = []
    silent = 0
    for s in sessions:  # newest first: the run of silent sessions up to now
        if not (s.files_edited and not s.written and "answered" not in s.checkpoints):
            break
        silent += 1
    if silent >= SILENT_SESSIONS:
        flags.append(f"the last {silent} sessions edited files and recorded nothing in memory")
    flags.extend(_unread(memory, entries))
    hooks = [e["at"] for e in entries if e.get("kind") == "hook"]
    if hooks:
        days = (iso_to_ms(now_iso) - iso_to_ms(hooks[-1])) // 86_400_000
        if days >= QUIET_DAYS:
            flags.append(f"no hook has fired for {days} days (last {hooks[-1][:10]}): the hook wiring may be "
                         "broken — run `memory-custodian doctor`")
    elif memory_in_use():  # asked only when no hook ever fired: listing the notes costs a read
        flags.append("no hook has fired yet: the agents read no memory on their own — "
                     "`memory-custodian init --agent …`, then `memory-custodian doctor`")
    return flags


def _unread(memory, entries) -> list[str]:
    injected: dict[str, int] = {}
    expanded: set[str] = set()
    for e in entries:
        for note_id in e.get("injected") or ():
            injected[note_id] = injected.get(note_id, 0) + 1
        if e.get("kind") == "expand":
            expanded.update(e.get("ids") or ())
    out = []
    for note_id, n in sorted(injected.items(), key=lambda item: (-item[1], item[0])):
        if n < INJECTED_UNREAD or note_id in expanded:
            continue
        try:
            kind = memory.note(note_id).kind
        except NotFound:
            continue  # forgotten since: nothing left to read
        out.append(f"{kind} #{note_id} injected {n} times, never expanded")
    return out
