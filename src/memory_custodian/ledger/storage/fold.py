"""The state machine and the fold: events in, notes out, with no I/O.

State is never stored. Replay dedupes events by id, drops txns that are not complete, sorts by
`(at, id)` and folds each note through `LEGAL_NEXT`, so the order of lines inside or across shard
files never matters. A transition is judged against the note's state *at the event's time*
(`Note.state_at(at)`), which keeps time-derived expiry deterministic. Illegal events (only a merge
can bring them: writers refuse them) are skipped and reported.
"""

from __future__ import annotations

import re

from ...base.records import Record
from .ids import add_days, is_iso_utc, is_note_id
from .model import (
    ACTORS,
    CREATE_FIELDS,
    DEFAULT_LIFETIME_DAYS,
    FORMAT_VERSION,
    KINDS,
    LEGAL_NEXT,
    OPS,
    PRIORITIES,
    PROVENANCES,
    REASON_ACTORS,
    REASON_REQUIRED,
    SCOPES,
    Note,
    encode_event,
)

TXN_N_MAX = 1_000_000  # far above any check-in; an absurd count must not reach SQLite's 64-bit integers
ENVELOPE = ("v", "id", "at", "op", "note", "actor", "txn", "txn_n")
_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a txn id: named in problem lines, so never free text


class Problem(Record):
    """Something replay skipped or doctor found; `code` is stable, `message` says what to do."""

    code: str  # torn-tail, incomplete-txn, illegal-transition, duplicate-event, bad-event, ...
    message: str
    where: str | None = None  # "ledger/2026-11.jsonl:12"
    note: str | None = None
    event: str | None = None

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "where": self.where, "note": self.note,
                "event": self.event}


def shape_error(ev) -> str | None:
    """Why `ev` is not a well-formed v1 event, or None. (Version > 1 is checked by the reader.)

    The reason names the field and the kind of fault, never the value: a shard line comes from
    whoever could commit to the repository, and this reason reaches an agent's context in the
    tool's own voice (a problem line), outside every fence."""
    if not isinstance(ev, dict):
        return "not a JSON object"
    for key in ENVELOPE:
        if key not in ev:
            return f"missing field {key}"
    if ev["v"] != FORMAT_VERSION:
        return "unsupported format version"
    if not isinstance(ev["id"], str) or len(ev["id"]) != 26 or not ev["id"].isalnum() or not ev["id"].isascii():
        return "event id is not a ULID"
    if not is_iso_utc(ev["at"]):
        return "`at` is not UTC ISO 8601 with milliseconds and Z"
    if ev["op"] not in OPS:
        return "unknown op (an event type a newer version may write)"
    if not isinstance(ev["note"], str) or not is_note_id(ev["note"]):
        return "note id is not 8 Crockford base32 characters"
    if ev["actor"] not in ACTORS:
        return "unknown actor"
    if not isinstance(ev["txn"], str) or not _TOKEN.fullmatch(ev["txn"]) or not isinstance(ev["txn_n"], int) \
            or not 1 <= ev["txn_n"] <= TXN_N_MAX:
        return f"bad txn or txn_n (a txn has 1 to {TXN_N_MAX} events)"
    op = ev["op"]
    if op == "create":
        if ev.get("kind") not in KINDS:
            return "unknown kind"
        if ev.get("priority") not in PRIORITIES:
            return "unknown priority"
        if not isinstance(ev.get("title"), str) or not isinstance(ev.get("body"), str):
            return "title and body must be strings"
        for key in ("tags", "paths"):
            val = ev.get(key, [])
            if not isinstance(val, list) or not all(isinstance(x, str) for x in val):
                return f"{key} must be a list of strings"
        if ev.get("provenance", "human") not in PROVENANCES:
            return "unknown provenance"
        if ev.get("scope", "workspace") not in SCOPES:
            return "unknown scope"
        if ev.get("expires") is not None and not is_iso_utc(ev["expires"]):
            return "expires is not a UTC ISO time"
        for key in ("quote", "branch"):
            if ev.get(key) is not None and not isinstance(ev[key], str):
                return f"{key} must be a string"
        if ev.get("supersedes") is not None and not is_note_id(str(ev["supersedes"])):
            return "supersedes is not a note id"
    if op in REASON_REQUIRED and ev["actor"] in REASON_ACTORS and (
            not isinstance(ev.get("reason"), str) or not ev["reason"].strip()):
        return f"{op} by {ev['actor']} needs a reason"
    if op == "supersede" and not is_note_id(str(ev.get("by", ""))):
        return "supersede needs `by`, the id of the replacing note"
    if op == "forget" and not all(isinstance(t, str) for t in ev.get("stripped", [])):
        return "forget's `stripped` must be a list of txn ids"
    if op == "promote" and ev.get("to") not in PROVENANCES:
        return f"promote needs `to`, one of {', '.join(PROVENANCES)}"
    return None


def transition_error(note: Note | None, ev: dict) -> str | None:
    """Why `ev` may not follow `note` (None: the note does not exist yet), or None if legal."""
    op = ev["op"]
    if op == "create":
        if note is not None:
            return f"note #{ev['note']} already exists ({note.state})"
        if ev.get("provenance", "human") == "human" and ev["actor"] != "human":
            return f"an {ev['actor']} cannot record a note with human provenance"
        return None
    if op == "forget":
        if note is not None and note.state == "forgotten" and not note.extra.get("forgotten_with"):
            return f"note #{ev['note']} is already forgotten"
        return None
    if note is None:
        return f"note #{ev['note']} does not exist"
    state = note.state_at(ev["at"])
    if op not in LEGAL_NEXT[state]:
        allowed = ", ".join(LEGAL_NEXT[state]) or "nothing (it is gone)"
        return f"cannot {op.replace('_', '-')} note #{note.id}: it is {state} (allowed: {allowed})"
    if op == "promote":
        to = ev["to"]
        if PROVENANCES.index(to) <= PROVENANCES.index(note.provenance):
            return f"cannot promote note #{note.id} to {to}: it is already {note.provenance}"
        if to == "human" and ev["actor"] != "human":
            return f"an {ev['actor']} cannot promote a note to human provenance; only a person can"
        if to == "user-stated" and not note.quote:
            return f"cannot promote note #{note.id} to user-stated: it has no bound user quote"
    return None


def _default_expiry(kind: str, from_at: str) -> str | None:
    days = DEFAULT_LIFETIME_DAYS.get(kind)
    return add_days(from_at, days) if days else None


def apply(note: Note | None, ev: dict) -> Note:
    """The note after a legal event (mutates and returns `note`, or a new one for create/forget)."""
    op, at = ev["op"], ev["at"]
    if op == "create":
        extra = {k: v for k, v in ev.items() if k not in ENVELOPE and k not in CREATE_FIELDS and k[0] != "_"}
        expires = ev.get("expires")
        if expires is None:
            expires = _default_expiry(ev["kind"], at)
            if expires:
                extra["expires_default"] = True
        fields = {name: ev[name] for name in CREATE_FIELDS if name in ev}
        fields["tags"], fields["paths"] = tuple(ev.get("tags", ())), tuple(ev.get("paths", ()))
        fields["expires"] = expires
        note = Note(id=ev["note"], created_at=at, created_by=ev["actor"], created_event=ev["id"], extra=extra, **fields)
    elif op == "forget":
        note = Note(id=ev["note"], kind="", priority="", title="", body="", provenance="",
                    created_at=note.created_at if note else "", created_by=note.created_by if note else "",
                    state="forgotten", event_count=note.event_count if note else 0,
                    created_event=note.created_event if note else "")
    else:
        assert note is not None
        if op == "supersede":
            note.state, note.superseded_by = "superseded", ev["by"]
        elif op == "revoke":
            note.state = "revoked"
        elif op == "flag_stale":
            note.state = "stale"
        elif op == "expire":
            note.state = "expired"
        elif op == "promote":
            note.provenance = ev["to"]
        elif op == "reinstate":
            # `state_at` derives expiry only for active/stale notes: a revoked or superseded note
            # whose own `expires` has passed must have it lifted too, or it would be expired at once
            was_expired = note.state_at(at) == "expired" or bool(note.expires and note.expires <= at)
            note.state, note.superseded_by = "active", None
            if ev.get("expires") and ev["expires"] > at:  # a reinstate leaves the note active at its time
                note.expires = ev["expires"]
                note.extra.pop("expires_default", None)
            elif note.extra.get("expires_default") or was_expired:
                # A reinstate renews: a default lifetime restarts, a passed explicit expiry is lifted.
                note.expires = _default_expiry(note.kind, at)
                if note.expires:
                    note.extra["expires_default"] = True
                else:
                    note.extra.pop("expires_default", None)
        if op != "promote":
            note.state_reason = ev.get("reason")
    note.updated_at = at
    note.last_event = ev["id"]
    note.event_count += 1
    return note


def sort_key(ev: dict) -> tuple[str, str]:
    return (ev["at"], ev["id"])


def fold_note_events(events: list[dict], problems: list[Problem] | None = None,
                     locations: dict | None = None) -> tuple[Note | None, list[dict]]:
    """Fold one note's events (already deduped, complete-txn, sorted). Returns (note, applied events)."""
    note: Note | None = None
    applied: list[dict] = []
    for ev in events:
        why = transition_error(note, ev)
        if why is not None:
            if problems is not None:
                problems.append(Problem("illegal-transition", f"skipped: {why} (arrived through a merge?)",
                                        where=(locations or {}).get(ev["id"]), note=ev["note"], event=ev["id"]))
            continue
        note = apply(note, ev)
        if ev["op"] == "forget":
            applied = []
        applied.append(ev)
    return note, applied


def replay(events: list[dict], *, locations: dict | None = None, check_txns: bool = True):
    """Fold well-formed events into notes. Returns (notes, events_by_note, problems).

    `locations` maps event id -> "file:line" for the messages. Duplicate ids keep the smallest
    encoded line (deterministic whatever the order); identical copies are reported as duplicates.
    """
    problems: list[Problem] = []
    loc = locations or {}
    unique: dict[str, dict] = {}
    for ev in events:
        prev = unique.get(ev["id"])
        if prev is None:
            unique[ev["id"]] = ev
            continue
        a, b = encode_event(prev), encode_event(ev)
        same = a == b
        problems.append(Problem(
            "duplicate-event",
            f"event {ev['id']} appears more than once" + ("" if same else " with different content; kept one deterministically"),
            where=loc.get(ev["id"]), note=ev["note"], event=ev["id"]))
        if b < a:
            unique[ev["id"]] = ev
    kept = list(unique.values())
    if check_txns:
        counts: dict[str, int] = {}
        want: dict[str, int] = {}
        for ev in kept:
            counts[ev["txn"]] = counts.get(ev["txn"], 0) + 1
            want[ev["txn"]] = max(want.get(ev["txn"], 0), ev["txn_n"])
        # A forget strips a note's events out of older txns and names those txns: they stay valid.
        waived = {t for ev in kept if ev["op"] == "forget" for t in ev.get("stripped", ())}
        broken = {t for t, n in counts.items() if n < want[t] and t not in waived}
        if broken:
            for t in sorted(broken):
                first = min((ev for ev in kept if ev["txn"] == t), key=sort_key)
                problems.append(Problem(
                    "incomplete-txn",
                    f"txn {t} has {counts[t]} of {want[t]} events (an interrupted write); ignored — "
                    "`doctor --repair` removes it",
                    where=loc.get(first["id"]), note=first["note"], event=first["id"]))
            kept = [ev for ev in kept if ev["txn"] not in broken]
    kept.sort(key=sort_key)
    by_note: dict[str, list[dict]] = {}
    for ev in kept:
        by_note.setdefault(ev["note"], []).append(ev)
    notes: dict[str, Note] = {}
    applied_by_note: dict[str, list[dict]] = {}
    for note_id, evs in by_note.items():
        note, applied = fold_note_events(evs, problems, loc)
        if note is not None:
            notes[note_id] = note
            applied_by_note[note_id] = applied
    _forget_successors(notes, applied_by_note, problems, loc)
    return notes, applied_by_note, problems


def _forget_successors(notes: dict, applied_by_note: dict, problems: list, loc: dict) -> None:
    """A note that supersedes a forgotten one, written where that forget was not known (a branch merged
    in: the forget's `stripped` does not name its txn), is forgotten with it — a forget wins over any
    edit of what it removed. A successor the forget did know about (an older version forgotten on
    purpose) stays. In creation order, so a chain of successors goes together."""
    # a forget without `stripped` (written by hand, or by a version before it) says nothing of what it knew
    stripped = {note_id: set(evs[0]["stripped"]) for note_id, evs in applied_by_note.items()
                if notes[note_id].state == "forgotten" and evs and evs[0]["op"] == "forget"
                and isinstance(evs[0].get("stripped"), list)}
    if not stripped:
        return
    gone = set(stripped)
    for note in sorted(notes.values(), key=lambda n: (n.created_at, n.created_event)):
        old = note.supersedes
        if note.state == "forgotten" or not old or old not in gone:
            continue
        create = applied_by_note[note.id][0]
        if create["op"] != "create" or create["txn"] in stripped.get(old, ()):
            continue
        notes[note.id] = Note(id=note.id, kind="", priority="", title="", body="", provenance="",
                              created_at=note.created_at, created_by=note.created_by, state="forgotten",
                              event_count=note.event_count, created_event=note.created_event,
                              extra={"forgotten_with": old})
        gone.add(note.id)
        stripped[note.id] = set()
        problems.append(Problem("forgotten-successor",
                                f"note #{note.id} supersedes #{old}, which was forgotten where this edit was not "
                                "known (a merge): the forget wins, so it is forgotten too",
                                where=loc.get(create["id"]), note=note.id, event=create["id"]))


def fold(events: list[dict]) -> dict[str, Note]:
    """The notes that `events` fold to (pure; order of `events` does not matter)."""
    return replay(events)[0]
