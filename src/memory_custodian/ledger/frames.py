"""How a full note is shown: framed by its provenance and its state, with its supersession chain.

Trust is the reader's to weigh, so provenance never changes ranking; it changes the frame. A note
that is not active leads with a warning, before anything a reader might act on.
"""

from __future__ import annotations

from .model import Note

PROVENANCE_FRAME = {
    "human": "recorded by a person",
    "user-stated": "the user's own words, bound by a verbatim quote, recorded by an AI session",
    "agent": "memory to verify, recorded by an AI session",
    "auto": "captured automatically — verify before relying on it",
}
CHAIN_MAX = 50


def state_warning(note: Note, state: str) -> str | None:
    when = note.updated_at[:10]
    why = f" Reason: {note.state_reason}." if note.state_reason else ""
    if state == "revoked":
        return f"WARNING: revoked on {when} — do not act on this note.{why}"
    if state == "superseded":
        return f"WARNING: superseded on {when} by #{note.superseded_by} — read that note instead.{why}"
    if state == "stale":
        return f"WARNING: flagged stale on {when} — verify before relying on it.{why}"
    if state == "expired":
        at = (note.expires or note.updated_at)[:10] if note.state != "expired" else when
        return f"WARNING: expired on {at} — reinstate it if it still holds.{why}"
    if state == "forgotten":
        return "WARNING: forgotten — its text was deleted from the ledger."
    return None


def chain(index, note: Note) -> list[str]:
    """Ids from the oldest note this one replaced to the newest that replaced it."""
    return [*reversed(_follow(index, note, "supersedes")), note.id, *_follow(index, note, "superseded_by")]


def _follow(index, note: Note, link: str) -> list[str]:
    """The ids reached by following `link` from `note` (at most CHAIN_MAX, stopping at a loop)."""
    ids: list[str] = []
    cur = note
    while getattr(cur, link) and len(ids) < CHAIN_MAX and getattr(cur, link) not in ids:
        ids.append(getattr(cur, link))
        cur = index.get_note(ids[-1])
        if cur is None:
            break
    return ids


def render(note: Note, state: str, ids: list[str]) -> str:
    lines = [f"## [#{note.id}] {note.kind}/{note.priority} · {note.title}"]
    warning = state_warning(note, state)
    if warning:
        lines.append(warning)
    lines.append(f"provenance: {note.provenance} — {PROVENANCE_FRAME.get(note.provenance, note.provenance)}")
    lines.append(f"state: {state} · created {note.created_at} by {note.created_by} · last change {note.updated_at}")
    if note.expires and state != "forgotten":
        lines.append(f"expires: {note.expires}")
    if note.scope == "branch":
        lines.append(f"scope: branch {note.branch}")
    if note.tags:
        lines.append("tags: " + ", ".join(note.tags))
    if note.paths:
        lines.append("paths: " + ", ".join(note.paths))
    if note.quote:
        lines.append(f'user quote: "{note.quote}"')
    if len(ids) > 1:
        lines.append("supersession: " + " → ".join(f"#{i}" + (" (this)" if i == note.id else "") for i in ids))
    if note.body:
        lines += ["", note.body]
    return "\n".join(lines) + "\n"


def expand_notes(index, ids: list[str], now: str | None = None) -> list[dict]:
    from .ids import now_iso

    now = now or now_iso()
    out = []
    for note_id in ids:
        note = index.get_note(note_id)
        state = note.state_at(now)
        ids_chain = chain(index, note)
        out.append({
            "id": note.id, "note": note.to_dict(), "state": state, "warning": state_warning(note, state),
            "provenance_frame": PROVENANCE_FRAME.get(note.provenance), "chain": ids_chain,
            "text": render(note, state, ids_chain),
        })
    return out
