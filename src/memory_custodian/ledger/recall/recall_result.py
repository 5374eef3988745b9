"""What a recall returns: the hits, and an account of everything it did not show.

A recall never hides anything silently: besides the hits it counts what matched below the cutoff
and what its state or scope excluded (with the ids), and the text form always ends with that line.
"""

from __future__ import annotations

from ...base.errors import LIBRARY_TERMS, Terms
from ...base.limits import RANKED_NOTES
from ...base.records import Record, field
from ..frames import index_line
from ..index.background import unread_phrase
from ..storage.model import Note

EXCLUSION_ORDER = ("active", "revoked", "superseded", "stale", "expired", "other scope")
# What shows the rest of a recall, in the caller's terms (`errors.Terms.phrase`): the result names the
# hint (`RecallResult.hint`), each door words it.
HINTS = {"more_states": "{set:include_all} to include", "more_lines": "raise {field:limit} to see more",
         "full_recall": "run {verb:recall} to see it", "unread": "{verb:reindex} reads it now"}


def unranked_phrase(count: int) -> str:
    """The words for `RecallResult.unranked`: notes that matched past `limits.RANKED_NOTES`."""
    return (f"{count} older notes match its words and were not ranked (past {RANKED_NOTES:,} matches a recall ranks "
            "the newest, and those holding a rare word of the question)")


class RecallHit(Record):
    """rank, score, note, and its state as of `now` (time-derived expiry applied)."""

    rank: int
    score: float
    note: Note
    state: str

    def __init__(self, rank: int, score: float, note: Note, state: str):
        self.rank, self.score, self.note, self.state = rank, score, note, state

    def line(self) -> str:
        return index_line(self.note, self.state)

    def to_dict(self) -> dict:
        n = self.note
        return {"rank": self.rank, "score": round(self.score, 6), "id": n.id, "kind": n.kind, "priority": n.priority,
                "title": n.title, "date": n.created_at[:10], "state": self.state, "provenance": n.provenance,
                "tags": list(n.tags), "paths": list(n.paths), "line": self.line()}


class RecallResult(Record):
    """What a recall returns: the hits, and an account of everything it did not show."""

    query: str | None
    hits: list[RecallHit] = field(default_factory=list)  # what is shown
    matched: int = 0  # notes that passed every filter (hits + below the cutoff)
    below_ids: list[str] = field(default_factory=list)
    excluded_ids: dict[str, list[str]] = field(default_factory=dict)  # reason -> ids (capped)
    excluded_counts: dict[str, int] = field(default_factory=dict)  # reason -> exact count
    filters: dict = field(default_factory=dict)
    accounting: str = "full"  # "full"; "matched": what matched, not what was excluded; "hits": the hits only
    ids_listed: bool = True  # False when the caller asked for counts without excluded ids (ids=False)
    partial: int = 0  # broad queries on big ledgers: notes matching outside the ranked tier (unfiltered)
    partial_exact: bool = True  # False: `partial` is a lower bound (the broad match was not counted in full)
    usage_warning: str | None = None  # set by `Memory.recall` when the usage log could not be written
    unread: tuple[int, int] = (0, 0)  # (bytes, shards) of the ledger not indexed yet (`Index.unread`): not searched
    unread_failure: str | None = None  # why the background read of the rest failed, if it did
    unranked: int = 0  # notes that matched past `limits.RANKED_NOTES` (older than those ranked): not ranked

    @property
    def counted(self) -> bool:
        """False when the caller asked for the hits only (counts=False)."""
        return self.accounting != "hits"

    @property
    def excluded_counted(self) -> bool:
        """False: counts="matched" counted what matched, not what was excluded (with the hits only,
        `counted` already says nothing was)."""
        return self.accounting != "matched"

    @property
    def below_cutoff(self) -> int:
        return self.matched - len(self.hits)

    @property
    def excluded(self) -> dict[str, int]:
        return {r: n for r, n in self.excluded_counts.items() if n}

    @property
    def hint(self) -> str | None:
        """What would show the rest, as a key of HINTS: "more_states" (notes were excluded by state or
        scope), "more_lines" (more matched below the cutoff), "full_recall" (nothing was counted), or None."""
        if not self.counted:
            return "full_recall"
        if sum(self.excluded.values()):
            return "more_states"
        return "more_lines" if self.below_cutoff else None

    def footer(self, terms: Terms = LIBRARY_TERMS) -> str:
        """The line saying what was not shown, its hint worded in the caller's `terms`."""
        if not self.counted:
            return "top hits only; what matched below the cutoff or was excluded was not counted — " + terms.phrase(
                HINTS["full_recall"])
        excl = self.excluded
        total = sum(excl.values())
        reasons = ", ".join(f"{excl[r]} {r}" for r in EXCLUSION_ORDER if excl.get(r))
        text = f"{self.below_cutoff} more matched below the cutoff; {total} excluded"
        if not self.excluded_counted:
            text = f"{self.below_cutoff} more matched below the cutoff; excluded notes (revoked, superseded, ...) not counted"
        elif reasons:
            text += f" ({reasons})"
        if self.partial:
            at_least = "" if self.partial_exact else "at least "
            text += f"; {at_least}{self.partial} more match loosely (not every word, or not in a title or tag), unranked"
        hint = self.hint
        text += " — " + terms.phrase(HINTS[hint]) if hint else ""
        if self.unranked:
            text += f"; {unranked_phrase(self.unranked)} — a narrower question ranks them"
        if self.unread[0]:
            text += f"; {unread_phrase(self.unread, self.unread_failure)} — " + terms.phrase(HINTS["unread"])
        return text

    def render_text(self, terms: Terms = LIBRARY_TERMS) -> str:
        lines = [h.line() for h in self.hits]
        if not self.hits:
            lines.append("(no notes matched)" if self.query else "(no notes)")
        lines.append(self.footer(terms))
        return "\n".join(lines) + "\n"

    def to_dict(self, terms: Terms = LIBRARY_TERMS) -> dict:
        return {
            "query": self.query, "filters": self.filters, "hits": [h.to_dict() for h in self.hits],
            "matched": self.matched,
            "below_cutoff": {"count": self.below_cutoff, "ids": self.below_ids,
                             "ids_complete": len(self.below_ids) == self.below_cutoff},
            "excluded": {"count": sum(self.excluded.values()), "by_reason": self.excluded,
                         "ids": {r: ids for r, ids in sorted(self.excluded_ids.items()) if ids},
                         "ids_complete": sum(len(v) for v in self.excluded_ids.values()) == sum(self.excluded.values()),
                         "ids_listed": self.ids_listed},
            "summary": self.footer(terms), "hint": self.hint, "counted": self.counted, "partial": self.partial,
            "partial_exact": self.partial_exact, "excluded_counted": self.excluded_counted,
            "unread": {"bytes": self.unread[0], "shards": self.unread[1]}, "unranked": self.unranked,
        }
