"""The ledger's vocabulary (format v1, fixed in DESIGN.md) and the folded note it produces.

State is never stored: `Note` is what replaying a note's events yields. Everything that reads the
ledger (recall, export, edit, hooks, MCP) works on these objects.
"""

from __future__ import annotations

import json

from ...base.limits import TITLE_CHARS
from ...base.records import Factory, Record, copy_plain

FORMAT_VERSION = 1

KINDS = ("directive", "task", "gotcha", "finding", "decision", "reference", "operational")
PRIORITIES = ("high", "medium", "low")
# weakest first; only a person reaches `human`
PROVENANCES = ("auto", "agent", "user-stated", "human")
ACTORS = ("human", "agent", "auto", "system")
OPS = ("create", "supersede", "revoke", "flag_stale", "reinstate", "promote", "expire", "forget")
SCOPES = ("workspace", "branch")
TITLE_MAX = TITLE_CHARS  # characters of a note's one-line title (base/limits.py)

# Derived states. `stale` is "active + flagged stale".
STATES = ("active", "stale", "superseded", "revoked", "expired", "forgotten")
RECALL_STATES = STATES[:-1]  # what a recall can ask for by state (a forgotten note keeps no text)
RECALL_DEFAULT_STATES = ("active",)  # what a recall shows when no state is asked for

# Ops that need a reason when a person or an agent acts.
REASON_REQUIRED = ("supersede", "revoke", "flag_stale", "reinstate", "expire")
REASON_ACTORS = ("human", "agent")

# The state machine: from a derived state, which ops may follow. `forget` is legal from any state
# but `forgotten` (it is the hard delete, outside the lifecycle).
LEGAL_NEXT = {
    "active": ("supersede", "revoke", "flag_stale", "expire", "promote"),
    "stale": ("reinstate", "supersede", "revoke", "expire"),
    "superseded": ("reinstate", "revoke"),
    "revoked": ("reinstate",),
    "expired": ("reinstate",),
    "forgotten": (),
}

# Default lifetimes by kind, in days, counted from the create (or the last reinstate, which renews).
# Derived at read time: nothing ever writes an expiry on a timer.
DEFAULT_LIFETIME_DAYS = {"task": 30}


class NoteField(Record):
    """One field of a note, declared once: everything else (the fold's create, the index's columns
    and its JSON, the export) is derived from `NOTE_FIELDS`.

    `default`: REQUIRED when a note cannot lack it (a `Factory` for a fresh list or dict).
    `stored`: where the index keeps it — "text" (a `note_text` column FTS5 searches; a tuple is
    kept newline-joined), "column" (a column of `notes`, for filters and order), "json" (a key of
    the note's JSON object, left out when it holds the default).
    `shown`: how the export renders it — "block" (a fixed line of the note's block, written by
    hand in `export.py`), "line" (`- name: value`, as JSON, when not the default), "no" (never).
    `from_create`: copied from the create event's key of the same name (the ledger format's field).
    """

    FIELDS = ("name", "default", "stored", "shown", "from_create")
    DEFAULTS = {"shown": "block", "from_create": False}


REQUIRED = object()  # a NoteField default: the field has none

# In this order a `Note` takes positional arguments and lists its fields.
NOTE_FIELDS = (
    NoteField("id", REQUIRED, "column"),
    NoteField("kind", REQUIRED, "column", from_create=True),
    NoteField("priority", REQUIRED, "column", from_create=True),
    NoteField("title", REQUIRED, "text", from_create=True),
    NoteField("body", REQUIRED, "text", from_create=True),
    NoteField("tags", (), "text", from_create=True),
    NoteField("paths", (), "text", from_create=True),
    NoteField("provenance", "human", "json", from_create=True),
    NoteField("quote", None, "json", from_create=True),  # the verbatim user quote a user-stated note is bound to
    NoteField("scope", "workspace", "column", from_create=True),
    NoteField("branch", None, "column", from_create=True),
    NoteField("expires", None, "column", from_create=True),  # ISO UTC; expiry is derived at read time
    NoteField("supersedes", None, "json", from_create=True),  # the note this one replaced
    NoteField("created_at", "", "column"),  # ISO UTC with milliseconds and Z
    NoteField("created_by", "human", "json"),  # actor of the create event
    NoteField("state", "active", "column"),  # one of STATES, as of the fold (see `state_at`)
    NoteField("superseded_by", None, "json"),
    NoteField("state_reason", None, "json"),  # the reason of the event that set the current state
    NoteField("updated_at", "", "json"),  # `at` of the last event
    NoteField("last_event", "", "json", "no"),  # id of the last event (edit check-in conflict detection)
    NoteField("event_count", 0, "json", "no"),
    NoteField("extra", Factory(dict), "json"),  # create-event keys the format does not name, kept and shown
    NoteField("created_event", "", "column", "no"),  # the create's id: total order among notes of one ms
)
CREATE_FIELDS = tuple(f.name for f in NOTE_FIELDS if f.from_create)


class Note(Record):
    """One note as the fold leaves it; its fields are `NOTE_FIELDS`. (A plain record: see
    `records.py` for why not a dataclass.)"""

    FIELDS = tuple(f.name for f in NOTE_FIELDS)
    DEFAULTS = {f.name: f.default for f in NOTE_FIELDS if f.default is not REQUIRED}
    # A note `Memory` returns from a write also carries what the write says beside it, never part of the
    # note (so not a field): `mirror_warning` (the export mirror could not be re-rendered, and how to fix
    # it) and, from remember and supersede, `quote_refused` (why a writer's quote was not bound).

    def to_dict(self) -> dict:
        """The note as JSON-ready data (tags and paths as lists), for `--format json` and MCP."""
        d = self.as_dict()
        d["tags"], d["paths"] = list(self.tags), list(self.paths)
        return d

    def state_at(self, now_iso: str) -> str:
        """The state at `now_iso`: an active or stale note whose `expires` has passed is expired."""
        if self.state in ("active", "stale") and self.expires and self.expires <= now_iso:
            return "expired"
        return self.state

    @property
    def short(self) -> str:
        return f"#{self.id}"


def copy_note(note: Note | None) -> Note | None:
    """A copy a caller may change: the fields are immutable (str, tuples) but for `extra`, copied too."""
    if note is None:
        return None
    twin = object.__new__(Note)
    twin.__dict__.update(note.__dict__)
    twin.extra = copy_plain(note.extra) if note.extra else {}
    return twin


def encode_event(ev: dict) -> str:
    """The one serialisation of an event: sorted keys, compact separators, UTF-8 text, one line."""
    return json.dumps({k: v for k, v in ev.items() if not k.startswith("_")}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False) + "\n"

# The derived index's file in `.cache/` (its WAL files share the prefix); named here, below both
# the index and the store, because a hard delete drops it.
INDEX_FILE = "index.sqlite"
