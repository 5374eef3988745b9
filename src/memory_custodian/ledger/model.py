"""The ledger's vocabulary (format v1, fixed in DESIGN.md) and the folded note it produces.

State is never stored: `Note` is what replaying a note's events yields. Everything that reads the
ledger (recall, export, edit, hooks, MCP) works on these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass
class Note:
    """One note as the fold leaves it."""

    id: str
    kind: str
    priority: str
    title: str
    body: str
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    provenance: str = "human"
    quote: str | None = None
    scope: str = "workspace"
    branch: str | None = None
    expires: str | None = None  # ISO UTC timestamp; expiry is derived at read time
    supersedes: str | None = None  # the note this one replaced
    created_at: str = ""  # ISO UTC with milliseconds and Z
    created_by: str = "human"  # actor of the create event
    state: str = "active"  # one of STATES, as of the fold (see `state_at` for time-derived expiry)
    superseded_by: str | None = None
    state_reason: str | None = None  # the reason of the event that set the current state
    updated_at: str = ""  # `at` of the last event
    last_event: str = ""  # id of the last event (edit check-in conflict detection)
    event_count: int = 0
    extra: dict = field(default_factory=dict)
    created_event: str = ""  # id of the create event: the total order among notes created in one millisecond

    def state_at(self, now_iso: str) -> str:
        """The state at `now_iso`: an active or stale note whose `expires` has passed is expired."""
        if self.state in ("active", "stale") and self.expires and self.expires <= now_iso:
            return "expired"
        return self.state

    @property
    def short(self) -> str:
        return f"#{self.id}"
