"""The ledger's vocabulary (format v1, fixed in DESIGN.md) and the folded note it produces.

State is never stored: `Note` is what replaying a note's events yields. Everything that reads the
ledger (recall, export, edit, hooks, MCP) works on these objects.
"""

from __future__ import annotations

from ..records import Record

FORMAT_VERSION = 1

KINDS = ("directive", "task", "gotcha", "finding", "decision", "reference", "operational")
PRIORITIES = ("high", "medium", "low")
# weakest first; only a person reaches `human`
PROVENANCES = ("auto", "agent", "user-stated", "human")
ACTORS = ("human", "agent", "auto", "system")
OPS = ("create", "supersede", "revoke", "flag_stale", "reinstate", "promote", "expire", "forget")
SCOPES = ("workspace", "branch")

# Derived states. `stale` is "active + flagged stale".
STATES = ("active", "stale", "superseded", "revoked", "expired", "forgotten")
RECALL_STATES = STATES[:-1]  # what `recall --state` can ask for (a forgotten note keeps no text)

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
    """One note as the fold leaves it. (A plain record: see `records.py` for why not a dataclass.)"""

    FIELDS = ("id", "kind", "priority", "title", "body", "tags", "paths", "provenance", "quote", "scope", "branch",
              "expires", "supersedes", "created_at", "created_by", "state", "superseded_by", "state_reason",
              "updated_at", "last_event", "event_count", "extra", "created_event")

    def __init__(self, id: str, kind: str, priority: str, title: str, body: str, tags: tuple[str, ...] = (),
                 paths: tuple[str, ...] = (), provenance: str = "human", quote: str | None = None,
                 scope: str = "workspace", branch: str | None = None, expires: str | None = None,
                 supersedes: str | None = None, created_at: str = "", created_by: str = "human",
                 state: str = "active", superseded_by: str | None = None, state_reason: str | None = None,
                 updated_at: str = "", last_event: str = "", event_count: int = 0, extra: dict | None = None,
                 created_event: str = ""):
        self.id = id
        self.kind = kind
        self.priority = priority
        self.title = title
        self.body = body
        self.tags = tags
        self.paths = paths
        self.provenance = provenance
        self.quote = quote
        self.scope = scope
        self.branch = branch
        self.expires = expires  # ISO UTC timestamp; expiry is derived at read time
        self.supersedes = supersedes  # the note this one replaced
        self.created_at = created_at  # ISO UTC with milliseconds and Z
        self.created_by = created_by  # actor of the create event
        self.state = state  # one of STATES, as of the fold (see `state_at` for time-derived expiry)
        self.superseded_by = superseded_by
        self.state_reason = state_reason  # the reason of the event that set the current state
        self.updated_at = updated_at  # `at` of the last event
        self.last_event = last_event  # id of the last event (edit check-in conflict detection)
        self.event_count = event_count
        self.extra = {} if extra is None else extra
        self.created_event = created_event  # the create event's id: total order among notes of one millisecond

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
