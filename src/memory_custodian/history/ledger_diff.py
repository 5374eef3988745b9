"""What changed in the ledger between two snapshots: the events the head has and the base has not, told as
what they did to each note (created, superseded, revoked, flagged stale, expired, reinstated, promoted,
forgotten), plus notes whose expiry date passed in between.

A note forgotten at the head is told by its id alone: its kind, title, body, tags, paths and quote come
from the base, which still holds them, and never reach the result.
"""

from __future__ import annotations

from ..base.records import Record, field
from .curated_diff import Flag, text_diff

CHANGE_OF = {"create": "created", "supersede": "superseded", "revoke": "revoked", "flag_stale": "flagged-stale",
             "expire": "expired", "reinstate": "reinstated", "promote": "promoted", "forget": "forgotten"}
AGENTS = ("agent", "auto", "system")


class NoteChange(Record):
    """One change to one note. For `superseded`, `note` is the replaced note and `by` its replacement
    (`title`, `kind` and `diff` are the replacement's, the diff from the old text to the new)."""

    change: str
    note: str
    at: str
    actor: str
    kind: str | None = None
    priority: str | None = None
    title: str | None = None
    provenance: str | None = None
    reason: str | None = None
    by: str | None = None
    to: str | None = None
    quote: str | None = None
    old_title: str | None = None
    diff: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.as_dict().items() if v not in (None, [])}

    @property
    def directive(self) -> bool:
        return self.kind == "directive"


def _hidden(base_notes: dict, head_notes: dict) -> set:
    gone = {i for i, n in head_notes.items() if n.state == "forgotten"}
    return gone | {i for i in base_notes if i not in head_notes}


def _about(change: NoteChange, note) -> NoteChange:
    if note is not None:
        change.kind, change.priority, change.title, change.provenance = (note.kind, note.priority, note.title,
                                                                         note.provenance)
        change.quote = note.quote
    return change


def ledger_changes(base, head) -> list[NoteChange]:
    """Every note the head changed, in the order of its events (time, then event id)."""
    base_notes, base_applied = base.ledger()
    head_notes, head_applied = head.ledger()
    known = {ev["id"] for evs in base_applied.values() for ev in evs}
    hidden = _hidden(base_notes, head_notes)
    new = sorted((ev for evs in head_applied.values() for ev in evs if ev["id"] not in known),
                 key=lambda ev: (ev["at"], ev["id"]))
    replaced = {ev["by"] for ev in new if ev["op"] == "supersede"}
    out, told_forgotten = [], set()
    for ev in new:
        note_id, op = ev["note"], ev["op"]
        if note_id in hidden:
            if note_id not in told_forgotten and (op == "forget" or note_id in base_notes):
                told_forgotten.add(note_id)
                out.append(NoteChange("forgotten", note_id, ev["at"], ev["actor"]))
            continue
        if op == "create" and note_id in replaced:
            continue  # told with the supersede it came with
        change = NoteChange(CHANGE_OF[op], note_id, ev["at"], ev["actor"], reason=ev.get("reason"), to=ev.get("to"))
        if op == "supersede":
            change.by = ev["by"]
            old = head_notes.get(note_id)
            if ev["by"] in hidden:
                change = _about(change, None)
                change.kind, change.old_title = old.kind, old.title
            else:
                newer = head_notes.get(ev["by"])
                change = _about(change, newer)
                change.old_title = old.title
                change.diff = text_diff(old.body, newer.body) if newer is not None else []
        else:
            change = _about(change, head_notes.get(note_id))
        out.append(change)
    for note_id in sorted(hidden - told_forgotten):
        if note_id in base_notes and base_notes[note_id].state != "forgotten":
            out.append(NoteChange("forgotten", note_id, head.at, "system"))  # gone without a forget event
    out.extend(_expired_by_date(base, head, base_notes, head_notes, hidden, {ev["note"] for ev in new
                                                                              if ev["op"] == "expire"}))
    return out


def _expired_by_date(base, head, base_notes, head_notes, hidden, expired_by_event) -> list[NoteChange]:
    out = []
    for note_id in sorted(set(base_notes) & set(head_notes) - hidden - expired_by_event):
        note = head_notes[note_id]
        if (base_notes[note_id].state_at(base.at) in ("active", "stale") and note.state_at(head.at) == "expired"
                and note.expires):
            out.append(_about(NoteChange("expired", note_id, note.expires, "system",
                                         reason="its expiry date passed"), note))
    return out


def ledger_flags(changes: list[NoteChange], head) -> list[Flag]:
    """Directives an agent wrote with no quote of the user's, and a person's directive an agent withdrew."""
    head_notes = head.ledger()[0]
    flags = []
    for c in changes:
        new_id = c.by if c.change == "superseded" else c.note if c.change == "created" else None
        note = head_notes.get(new_id) if new_id else None
        if note is not None and note.kind == "directive" and note.provenance in AGENTS and not note.quote:
            flags.append(Flag("agent-directive-unquoted", f"directive #{note.id} {note.title!r} was written by an "
                              f"{note.created_by} with no quote of the user's: check that a person asked for it",
                              note=note.id))
        old = head_notes.get(c.note)
        if (c.change in ("revoked", "expired", "superseded") and c.actor in AGENTS and old is not None
                and old.kind == "directive" and old.provenance in ("human", "user-stated") and c.reason
                != "its expiry date passed"):
            flags.append(Flag("agent-withdrew-directive", f"an {c.actor} {c.change} the {old.provenance} directive "
                              f"#{old.id} {old.title!r}: check that a person agreed", note=old.id))
    return flags
