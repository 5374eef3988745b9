"""The ledger's vocabulary (format v1, fixed in DESIGN.md) and the folded note it produces.

State is never stored: `Note` is what replaying a note's events yields. Everything that reads the
ledger (recall, export, edit, hooks, MCP) works on these objects.
"""

from __future__ import annotations

import json

from ...base.limits import TITLE_CHARS
from ...base.records import Record, copy_plain, field

TYPE_CHECKING = False  # not `typing`'s: importing it costs every fresh process (the hooks read notes)
if TYPE_CHECKING:
    from typing import Any

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


class Note(Record):
    """One note as the fold leaves it. (A plain record: see `records.py` for why not a dataclass.)

    The fields are declared here once, in the order a `Note` takes positional arguments; how the
    ledger, the index and the export keep each of them is `NOTE_FIELDS`, below."""

    id: str
    kind: str
    priority: str
    title: str
    body: str
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    provenance: str = "human"
    quote: str | None = None  # the verbatim user quote a user-stated note is bound to
    scope: str = "workspace"
    branch: str | None = None
    expires: str | None = None  # ISO UTC; expiry is derived at read time
    supersedes: str | None = None  # the note this one replaced
    created_at: str = ""  # ISO UTC with milliseconds and Z
    created_by: str = "human"  # actor of the create event
    state: str = "active"  # one of STATES, as of the fold (see `state_at`)
    superseded_by: str | None = None
    state_reason: str | None = None  # the reason of the event that set the current state
    updated_at: str = ""  # `at` of the last event
    last_event: str = ""  # id of the last event (edit check-in conflict detection)
    event_count: int = 0
    extra: dict[str, Any] = field(default_factory=dict)  # create-event keys the format does not name, kept and shown
    created_event: str = ""  # the create's id: total order among notes of one ms

    # A note `Memory` returns from a write also carries what the write says beside it, never part of the
    # note (so not a field, and not in its JSON): `mirror_warning` (the export mirror could not be
    # re-rendered, and how to fix it) and, from remember and supersede, `quote_refused` (why a writer's
    # quote was not bound). Each is None on a note no write returned.
    @property
    def mirror_warning(self) -> str | None:
        return self.__dict__.get("_mirror_warning")

    @mirror_warning.setter
    def mirror_warning(self, value: str | None) -> None:
        self.__dict__["_mirror_warning"] = value

    @property
    def quote_refused(self) -> str | None:
        return self.__dict__.get("_quote_refused")

    @quote_refused.setter
    def quote_refused(self, value: str | None) -> None:
        self.__dict__["_quote_refused"] = value

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


class NoteField(Record):
    """How the ledger, the index and the export keep one field of `Note`: everything else (the fold's
    create, the index's columns and its JSON, the export) is derived from `NOTE_FIELDS`.

    `default`: the note's own (REQUIRED when a note cannot lack it; a `Factory` for a fresh dict).
    `stored`: where the index keeps it — "text" (a `note_text` column FTS5 searches; a tuple is
    kept newline-joined), "column" (a column of `notes`, for filters and order), "json" (a key of
    the note's JSON object, left out when it holds the default).
    `shown`: how the export renders it — "block" (a fixed line of the note's block, written by
    hand in `export.py`), "line" (`- name: value`, as JSON, when not the default), "no" (never).
    `from_create`: copied from the create event's key of the same name (the ledger format's field).
    """

    name: str
    default: object
    stored: str
    shown: str = "block"
    from_create: bool = False


REQUIRED = object()  # a NoteField default: the field has none

# (stored, shown, from_create) of each field of `Note`; a field missing here fails at import.
_KEPT = {
    "id": ("column", "block", False),
    "kind": ("column", "block", True),
    "priority": ("column", "block", True),
    "title": ("text", "block", True),
    "body": ("text", "block", True),
    "tags": ("text", "block", True),
    "paths": ("text", "block", True),
    "provenance": ("json", "block", True),
    "quote": ("json", "block", True),
    "scope": ("column", "block", True),
    "branch": ("column", "block", True),
    "expires": ("column", "block", True),
    "supersedes": ("json", "block", True),
    "created_at": ("column", "block", False),
    "created_by": ("json", "block", False),
    "state": ("column", "block", False),
    "superseded_by": ("json", "block", False),
    "state_reason": ("json", "block", False),
    "updated_at": ("json", "block", False),
    "last_event": ("json", "no", False),
    "event_count": ("json", "no", False),
    "extra": ("json", "block", False),
    "created_event": ("column", "no", False),
}
NOTE_FIELDS = tuple(NoteField(name, Note.DEFAULTS.get(name, REQUIRED), *_KEPT[name]) for name in Note.FIELDS)
CREATE_FIELDS = tuple(f.name for f in NOTE_FIELDS if f.from_create)


def copy_note(note: Note) -> Note:
    """A copy a caller may change: the fields are immutable (str, tuples) but for `extra`, copied too."""
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
