"""What the ledger's verbs return besides notes: a note's history, expanded notes, a reindex, a hard delete.

Each is a `Record`; `to_dict()` is the JSON document `--format json` prints. A write's record
also carries `mirror_warning` (None, or the line saying the export mirror is stale and how to fix it).
"""

from __future__ import annotations

from ..base.records import Record


class History(Record):
    """A note's applied events in replay order (each the event as stored: op, at, actor, reason, …)."""

    events: list[dict]

    def to_dict(self) -> dict:
        return {"events": self.events}


class Expansion(Record):
    """Full notes by id: each `{"id", "note", "state", "warning", "provenance_frame", "chain", "text"}`."""

    notes: list[dict]
    usage_warning: str | None = None  # set by `Memory.expand` when the usage log could not be written

    def to_dict(self) -> dict:
        return {"notes": self.notes}


class Reindexed(Record):
    """A rebuilt index: how many shards, events and notes it was built from."""

    mode: str
    events: int
    notes: int
    shards: int

    def to_dict(self) -> dict:
        return self.as_dict()


class NoteForgotten(Record):
    """A hard delete: the forget event kept, the shards rewritten, and what git still holds."""

    note: str
    forget_event: str
    rewritten: list[str]
    warning: str
    mirror_warning = None

    def to_dict(self) -> dict:
        return self.as_dict()


class Exported(Record):
    """An export, its check (`up_to_date`, `diff`) or a switch of the mirror (`enabled`, `config`);
    what does not apply is None and left out of `to_dict()`."""

    path: str | None = None
    notes: int | None = None
    bytes: int | None = None
    written: bool | None = None
    up_to_date: bool | None = None
    diff: str | None = None
    enabled: bool | None = None
    config: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.as_dict().items() if v is not None}


class CheckedOut(Record):
    """An edit buffer written: where, how many notes, and when (what a check-in compares against)."""

    path: str
    notes: int
    checked_out_at: str

    def to_dict(self) -> dict:
        return self.as_dict()


class CheckedIn(Record):
    """An edit buffer turned into one txn: the events written, each change, counts by action."""

    path: str
    events: int
    txn: str | None
    changes: list[dict]
    counts: dict[str, int]
    unchanged: int
    mirror_warning = None

    def to_dict(self) -> dict:
        return self.as_dict()
