"""Browse the ledger a page at a time: every note matching the filters, newest first, with the total.

Recall ranks a query and cuts to what an agent should read; a person looking through the ledger
wants the other thing, every matching note in a fixed order, one page at a time, without folding
74,900 notes to show fifty. Filters are SQL on the index, applied before the page is cut.
"""

from __future__ import annotations

from ...base.errors import InvalidInput
from ...base.records import Record, field
from ..recall.recall_plan import EFFECTIVE_STATE, path_filter
from ..storage.ids import now_iso
from ..storage.model import KINDS, PROVENANCES, STATES, Note
from .index_rows import NOTE_COLS, NOTE_FROM, row_note

PAGE_MAX = 500
# provenance is left out of a note's index JSON when it holds the default
PROVENANCE_SQL = "(SELECT coalesce(json_extract(json, '$.provenance'), 'human') FROM note_text WHERE rowid = n.rowid)"


class NotePage(Record):
    """One page of notes (`notes`: (note, state as of `now`) pairs, newest first), the `total`
    matching the filters, and where the page starts (`offset`) and how long it may be (`limit`)."""

    total: int
    offset: int
    limit: int
    now: str
    notes: list[tuple[Note, str]] = field(default_factory=list)
    filters: dict[str, list[str]] = field(default_factory=dict)
    unread: str | None = None  # what of the ledger the index has not read yet (`Index.unread_said`), if anything

    def to_dict(self) -> dict:
        return {"total": self.total, "offset": self.offset, "limit": self.limit, "filters": self.filters,
                "now": self.now, "notes": [dict(n.to_dict(), state=s) for n, s in self.notes], "unread": self.unread}


def _one_of(name: str, values, allowed, params: dict, column: str) -> str:
    bad = sorted(set(values) - set(allowed))
    if bad:
        raise InvalidInput(f"unknown {name} {', '.join(bad)} in {{field}}: use one of {', '.join(allowed)}",
                           field=name + "s")
    params.update({f"{name}{i}": v for i, v in enumerate(values)})
    return f"{column} IN ({','.join(f':{name}{i}' for i in range(len(values)))})"


def browse_notes(index, *, kinds=(), states=(), provenances=(), tags=(), paths=(), offset=0, limit=50,
                 now=None) -> NotePage:
    """The notes matching every filter given (each a list: any of its values), newest first."""
    if not isinstance(offset, int) or offset < 0 or not isinstance(limit, int) or not 1 <= limit <= PAGE_MAX:
        raise InvalidInput(f"{{field}} must be 1..{PAGE_MAX} and the offset 0 or more", field="limit")
    now = now or now_iso()
    params: dict = {"now": now}
    where = ["n.state != 'forgotten'"]
    if kinds:
        where.append(_one_of("kind", kinds, KINDS, params, "n.kind"))
    if states:
        where.append(_one_of("state", states, [s for s in STATES if s != "forgotten"], params, EFFECTIVE_STATE))
    if provenances:
        where.append(_one_of("provenance", provenances, PROVENANCES, params, PROVENANCE_SQL))
    if tags:
        params.update({f"tag{i}": v for i, v in enumerate(tags)})
        marks = ",".join(f":tag{i}" for i in range(len(tags)))
        where.append(f"n.rowid IN (SELECT note FROM note_tags WHERE tag IN ({marks}))")
    if paths:
        where.append(path_filter(list(paths), "p", params))
    cond = " AND ".join(where)

    # the page is chosen on `notes` alone and only its rows are joined to their text: joining every
    # match costs five times the count at 74,900 notes
    def work():
        total = index.db.execute(f"SELECT count(*) FROM notes n WHERE {cond}", params).fetchone()[0]
        page = index.db.execute(
            f"SELECT n.rowid, {EFFECTIVE_STATE} FROM notes n WHERE {cond} "
            "ORDER BY n.created_at DESC, n.created_event DESC, n.id DESC LIMIT :limit OFFSET :offset",
            dict(params, limit=limit, offset=offset)).fetchall()
        marks = ",".join("?" * len(page))
        rows = {r[0]: row_note(r[1:]) for r in index.db.execute(
            f"SELECT n.rowid, {NOTE_COLS} FROM {NOTE_FROM} WHERE n.rowid IN ({marks})", [r[0] for r in page])}
        return total, [(rows[rowid], state) for rowid, state in page]

    total, notes = index.guarded(work)
    filters = {"kinds": list(kinds), "states": list(states), "provenances": list(provenances), "tags": list(tags),
               "paths": list(paths)}
    return NotePage(notes=notes, total=total, offset=offset, limit=limit, filters=filters, now=now,
                    unread=index.unread_said() if index.unread()[0] else None)
