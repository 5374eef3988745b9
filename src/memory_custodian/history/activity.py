"""Memory's activity, newest first: every ledger event (from the index's event table, never a replay) and every
commit that changed a curated file (from git), filterable by time, kind, operation and actor.

A forgotten note's activity is its `forget` event alone, by id: the index holds nothing else of it. The
curated commits are read once per HEAD and kept: a page of activity is one SQL query and a slice.
"""

from __future__ import annotations

import json

from ..base.errors import InvalidInput, Refused
from ..base.records import Record, field
from ..ledger.storage.ids import ms_to_iso
from ..ledger.storage.model import KINDS, OPS
from .gitsource import Repo
from .snapshot import is_curated

CURATED = "curated"  # the kind of a commit that changed curated files
COMMIT = "commit"  # its operation
ACTORS = ("human", "agent", "auto", "system")
PAGE = 200
_COMMITS: dict[tuple, list] = {}  # (repository top, HEAD) -> the curated commits, newest first


class Activity(Record):
    """One thing that happened: a ledger event (`note` set) or a curated commit (`commit` and `files` set)."""

    at: str
    kind: str
    op: str
    actor: str
    note: str | None = None
    title: str = ""
    reason: str | None = None
    commit: str | None = None
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.as_dict().items() if v not in (None, [], "")}


class ActivityPage(Record):
    items: list[Activity] = field(default_factory=list)
    more: bool = False
    git: bool = True  # False outside a repository: curated commits cannot be listed


def _check(name: str, value: str | None, allowed) -> None:
    if value and value not in allowed:
        raise InvalidInput(f"unknown {name} {value!r} in {{field}}: use one of {', '.join(allowed)}", field=name)


def _iso(day: str | None, end: bool) -> str | None:
    if not day:
        return None
    if len(day) == 10 and day[4] == "-" and day[7] == "-" and (day[:4] + day[5:7] + day[8:]).isdigit():
        return day + ("T23:59:59.999Z" if end else "T00:00:00.000Z")
    raise InvalidInput(f"{day!r} is not a date: write it as YYYY-MM-DD (UTC)", field="since" if not end else "until")


def _events(memory, since, until, kind, op, actor, limit, before=None) -> list[Activity]:
    """The newest `limit` events matching, walked newest first on the index's `events_at`. An event's line is
    canonical JSON (sorted keys, no spaces), so `"op":"create"` is a substring of every create's line: the
    filters run as a LIKE, and each row found is checked on its parsed fields (a note's text could hold the
    same words), another chunk read while some were not."""
    where, params = ["1"], {}
    for name, value, sql in (("before", before, "e.at < :before"), ("since", since, "e.at >= :since"),
                             ("until", until, "e.at <= :until"), ("kind", kind, "n.kind = :kind")):
        if value:
            where.append(sql)
            params[name] = value
    wanted = {k: v for k, v in (("op", op), ("actor", actor)) if v}
    for name, value in wanted.items():
        where.append(f"e.line LIKE :{name}_like")
        params[f"{name}_like"] = f'%"{name}":"{value}"%'
    index = memory.index()
    # events first, newest first (CROSS JOIN keeps SQLite from starting at the notes of a kind and sorting them all)
    join = "CROSS JOIN" if kind else "LEFT JOIN"
    sql = (f"SELECT e.line, n.kind, t.title, n.state FROM events e {join} notes n ON n.id = e.note "
           f"LEFT JOIN note_text t ON t.rowid = n.rowid WHERE {' AND '.join(where)} "
           "ORDER BY e.at DESC, e.id DESC LIMIT :limit OFFSET :offset")
    out: list[Activity] = []
    offset = 0
    while len(out) < limit:
        rows = index.guarded(lambda at=offset: index.db.execute(sql, dict(params, limit=limit, offset=at)).fetchall())
        for line, note_kind, title, state in rows:
            ev = json.loads(line)
            if any(ev.get(k) != v for k, v in wanted.items()):
                continue
            gone = state == "forgotten" or note_kind is None
            out.append(Activity(ev["at"], "" if gone else note_kind, ev["op"], ev["actor"], ev["note"],
                                "" if gone else (title or ""), None if gone else ev.get("reason")))
        if len(rows) < limit:
            break
        offset += limit
    return out[:limit]


def curated_commits(memory) -> list[Activity] | None:
    """Every commit that changed a curated file, newest first (None outside a repository)."""
    try:
        repo = Repo(memory.root_str, memory.memory_dir_str)
    except Refused:
        return None
    head = repo.head()
    key = (repo.top, repo.memory_rel, head)
    if key not in _COMMITS:
        _COMMITS.clear()  # one repository's history at a time: a viewer serves one memory
        _COMMITS[key] = _read_commits(repo) if head else []
    return _COMMITS[key]


def _read_commits(repo) -> list[Activity]:
    prefix = repo.memory_rel.rstrip("/") + "/"
    out = repo.log_text(prefix, raw=False)
    found = []
    for record in out.split("\x1e")[1:]:
        head, _, names = record.partition("\n")
        sha, seconds, author, subject = [*head.split("\x1f"), "", "", "", ""][:4]
        files = sorted(n[len(prefix):] for n in names.split("\n")
                       if n.startswith(prefix) and is_curated(n[len(prefix):]))
        if files:
            found.append(Activity(ms_to_iso(int(seconds) * 1000), CURATED, COMMIT, author, title=subject, commit=sha,
                                  files=files))
    return found


def activity(memory, *, since: str | None = None, until: str | None = None, kind: str | None = None,
             op: str | None = None, actor: str | None = None, before: str | None = None,
             limit: int = PAGE) -> ActivityPage:
    """The newest `limit` things that happened from `since` to `until` (UTC dates, both included) and before
    `before` (a UTC time, excluded: where the previous page ended)."""
    _check("kind", kind, (*KINDS, CURATED))
    _check("op", op, (*OPS, COMMIT))
    _check("actor", actor, ACTORS)
    if not 1 <= limit <= 2000:
        raise InvalidInput("{field} must be 1..2000", field="limit")
    start, end = _iso(since, False), _iso(until, True)
    if before is not None and not (len(before) == 24 and before.endswith("Z") and before[10] == "T"):
        raise InvalidInput(f"{before!r} is not a UTC time like 2026-12-01T09:30:00.000Z", field="before")
    items: list[Activity] = []
    if kind != CURATED and op != COMMIT:
        items = _events(memory, start, end, kind, op, actor, limit + 1, before)
    commits = curated_commits(memory)
    if commits is not None and (not kind or kind == CURATED) and (not op or op == COMMIT) and not actor:
        items += [c for c in commits if (not start or c.at >= start) and (not end or c.at <= end)
                  and (not before or c.at < before)][:limit + 1]
    items.sort(key=lambda a: (a.at, a.commit or "", a.note or ""), reverse=True)
    return ActivityPage(items[:limit], len(items) > limit, commits is not None)
