"""One session as `stats` saw it, opened: each hook call with the notes it injected, and the notes written
while it ran (by its time span, as `stats` counts them)."""

from __future__ import annotations

from ..base.errors import NotFound
from ..base.records import Record, field
from .adoption import report
from .usage_log import read_store


class SessionView(Record):
    session: str
    stats: object
    calls: list[dict] = field(default_factory=list)
    injected: list[tuple] = field(default_factory=list)  # (note id, times injected), most first
    written: list = field(default_factory=list)  # notes created from the session's first to last hook call
    titles: dict = field(default_factory=dict)  # note id -> (title, kind), for the notes named here


def session_view(memory, session: str) -> SessionView:
    found = [s for s in report(memory).sessions if s.session == session]
    if not found:
        raise NotFound(f"no session {session!r} in the usage log: {{verb:stats}} lists the sessions", field="session")
    stats = found[0]
    entries, _ = read_store(memory.memory_dir_str)
    calls = [e for e in entries if e.get("kind") == "hook" and e.get("session") == session]
    counts: dict[str, int] = {}
    for e in calls:
        for note_id in e.get("injected") or ():
            counts[note_id] = counts.get(note_id, 0) + 1
    index = memory.index()
    rows = index.guarded(lambda: index.db.execute(
        "SELECT id FROM notes WHERE created_at >= ? AND created_at <= ? AND state != 'forgotten' "
        "ORDER BY created_at, id", (stats.first, stats.last)).fetchall())
    written = list(index.get_notes([r[0] for r in rows]).values())
    known = index.get_notes(list(counts))
    titles = {i: (n.title, n.kind) for i, n in known.items() if n.state != "forgotten"}
    titles.update({n.id: (n.title, n.kind) for n in written})
    injected = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return SessionView(session, stats, calls, injected, sorted(written, key=lambda n: (n.created_at, n.id)), titles)
