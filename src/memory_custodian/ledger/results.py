"""What the ledger's verbs return besides notes: a note's history, expanded notes, a reindex, a hard delete.

Each is a `Record`; `to_dict()` is the JSON document `--format json` prints. A write's record
also carries `mirror_warning` (None, or the line saying the export mirror is stale and how to fix it).
"""

from __future__ import annotations

from ..base.records import Record


class History(Record):
    """A note's applied events in replay order (each the event as stored: op, at, actor, reason, …)."""

    FIELDS = ("events",)

    def to_dict(self) -> dict:
        return {"events": self.events}


class Expansion(Record):
    """Full notes by id: each `{"id", "note", "state", "warning", "provenance_frame", "chain", "text"}`."""

    FIELDS = ("notes",)
    usage_warning: str | None = None  # set by `Memory.expand` when the usage log could not be written

    def to_dict(self) -> dict:
        return {"notes": self.notes}


class Reindexed(Record):
    """A rebuilt index: how many shards, events and notes it was built from."""

    FIELDS = ("mode", "events", "notes", "shards")

    def to_dict(self) -> dict:
        return self.as_dict()


class NoteForgotten(Record):
    """A hard delete: the forget event kept, the shards rewritten, and what git still holds."""

    FIELDS = ("note", "forget_event", "rewritten", "warning")
    mirror_warning = None

    def to_dict(self) -> dict:
        return self.as_dict()


class Exported(Record):
    """An export, its check (`up_to_date`, `diff`) or a switch of the mirror (`enabled`, `config`);
    what does not apply is None and left out of `to_dict()`."""

    FIELDS = ("path", "notes", "bytes", "written", "up_to_date", "diff", "enabled", "config")
    DEFAULTS = dict.fromkeys(FIELDS)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.as_dict().items() if v is not None}


class CheckedOut(Record):
    """An edit buffer written: where, how many notes, and when (what a check-in compares against)."""

    FIELDS = ("path", "notes", "checked_out_at")

    def to_dict(self) -> dict:
        return self.as_dict()


class CheckedIn(Record):
    """An edit buffer turned into one txn: the events written, each change, counts by action."""

    FIELDS = ("path", "events", "txn", "changes", "counts", "unchanged")
    mirror_warning = None

    def to_dict(self) -> dict:
        return self.as_dict()
