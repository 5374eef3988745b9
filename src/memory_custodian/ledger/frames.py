"""How a full note is shown: framed by its provenance and its state, with its supersession chain.

Trust is the reader's to weigh, so provenance never changes ranking; it changes the frame. A note
that is not active leads with a warning, before anything a reader might act on.
"""

from __future__ import annotations

import re

from .storage.ids import now_iso
from .storage.model import Note

PROVENANCE_FRAME = {
    "human": "recorded by a person",
    "user-stated": "the user's own words, bound by a verbatim quote, recorded by an AI session",
    "agent": "memory to verify, recorded by an AI session",
    "auto": "captured automatically — verify before relying on it",
}
# What a hook's index line says of a note that is not active (an agent reads it in passing).
STATE_FRAMES = {
    "active": "",
    "stale": "FLAGGED STALE: check it before relying on it",
    "superseded": "SUPERSEDED: replaced by a newer note",
    "revoked": "REVOKED: do not follow",
    "expired": "EXPIRED: no longer in force",
}
CHAIN_MAX = 50

# A body line a reader could take for the render's own structure: an index or heading line of a
# note (`[#k7m2x9qa] …`, `## [#…`), any Markdown heading (the pack's own `# Memory context pack`,
# `## Ledger directives`, `## decisions.md`, `## Cut to fit …`), a frame line (`provenance:`,
# `WARNING:`, `(memory to verify…)`, `(recorded by a person)`) or a closing line of the pack. It is
# matched on the line's confusable skeleton (`base/skeleton.py`), so look-alike and invisible
# characters spell no frame either.
_SHAPED: list = []  # compiled on first use: most renders hold no structure-shaped body line
_STRUCTURE_WORDS = ("warning", "provenance", "state", "tags", "paths", "expires", "scope", "supersession",
                    "user's words", "task", "not loaded", "ledger lines skipped", "more memory", "full text",
                    "record what", "memory-custodian", "cut to fit")


def _shaped():
    if not _SHAPED:
        _SHAPED.append(re.compile(r"^[\s>*+|-]*(?:#+(?:[ \t]|$)|[\[(][ \t]*#|#[0-9a-z]{8}\b|" + _words(str) + ")", re.I))
        from ..base.skeleton import loose

        # a look-alike line needs no colon after its word: `：`, `︰` and `꞉` fold to no `:` at all
        _SHAPED.append(re.compile(r"^[\s>*+|-]*(?:" + _words(loose).replace("[^:\\n]{0,40}:", "") + ")", re.I))
    return _SHAPED


def _words(fold) -> str:
    """The alternatives of the structure words, frames and states, each folded by `fold`."""
    frames = [v.split(",")[0].split(" \u2014")[0] for v in (*PROVENANCE_FRAME.values(), "recorded by")]
    states = [v.split(":")[0] for v in STATE_FRAMES.values() if v]
    # an apostrophe has look-alikes that fold to another sign (a fullwidth grave, a Greek psili)
    alt = lambda words: "|".join(  # noqa: E731
        re.escape(fold(w.casefold())).replace("'", r"\W{0,3}") for w in words)
    return (f"(?:{alt(_STRUCTURE_WORDS)})\\b[^:\\n]{{0,40}}:|[\\[(]?[ \\t]*(?:{alt(frames)})"
            f"|{alt(['quoted project memory'])}|(?:{alt(states)})\\b")


BODY_MARK = "\u2502 "  # a body line shaped like structure is shown behind this gutter, so it reads as quoted


def shaped_like_structure(line: str) -> bool:
    """Whether `line` (raw or by its confusable skeleton) reads as the render's own structure."""
    exact, folded = _shaped()
    if exact.match(line):
        return True
    if line.isascii():
        return False
    from ..base.skeleton import loose, skeleton

    look = skeleton(line)
    return bool(exact.match(look) or folded.match(loose(look)))


def safe_body(text: str) -> str:
    """`text` with each line a reader could take for a note's frame or index line marked as body."""
    if text.isascii() and "[#" not in text and ":" not in text and "(" not in text and "#" not in text:
        lowered = text.lower()
        if not any(word in lowered for word in ("recorded", "revoked", "superseded", "expired", "flagged",
                                                "captured", "quoted project")):
            return text  # the common case: nothing structure-shaped can start a line
    return "\n".join(BODY_MARK + line if shaped_like_structure(line) else line for line in text.split("\n"))


# A title is one field of an index line (`[#id] kind/prio · TITLE · date · who recorded it · state`):
# it may hold no field separator, and a title that reads as a frame or a state is shown in quotes.
_SEPARATORS = {ord(c): "-" for c in "\u00b7\u0387\u2022\u2027\u2219\u22c5\u30fb\uff65\u16eb\u2e31\u00b8\u02d1"}


def safe_title(title: str) -> str:
    """`title` as an index line shows it: no `·` (or look-alike) to fake another field, and quoted
    when its skeleton holds a frame's or a state's words (`recorded by a person`, `REVOKED`)."""
    if not title:
        return title
    shown = title.translate(_SEPARATORS)
    if title.isascii():
        look = title.casefold()
    else:
        from ..base.skeleton import skeleton

        look = skeleton(title)
    if _FRAME_WORDS.search(look):
        return f"\u201c{shown}\u201d"
    return shown


_FRAME_WORDS = re.compile("|".join(re.escape(w.casefold()) for w in (
    "recorded by", "the user's own words", "memory to verify", "captured automatically", "revoked", "superseded",
    "expired", "flagged stale", "do not follow", "verify before relying", "no longer in force")))


def provenance_frame(provenance: str | None) -> str:
    """Who recorded a note, in the words every renderer uses."""
    return PROVENANCE_FRAME.get(provenance or "", f"provenance {provenance or 'unknown'}; verify")


def state_frame(state: str | None) -> str:
    return STATE_FRAMES.get(state or "active", f"state {state}")


def index_line(note: Note, state: str | None = None, *, framed: bool = False) -> str:
    """One note on one line: `[#k7m2x9qa] gotcha/high · workspace lock released · 2026-11-27`,
    with ` [state]` when it is not active. `framed` (what a hook hands an agent) names who recorded
    it and says the state in words instead."""
    state = state or note.state
    line = f"[#{note.id}] {note.kind}/{note.priority} · {safe_title(note.title)} · {(note.created_at or '')[:10]}"
    if not framed:
        return line if state == "active" else f"{line} [{state}]"
    line += f" · {provenance_frame(note.provenance)}"
    return line if state == "active" else f"{line} · {state_frame(state)}"


def quote_line(note: Note) -> str:
    """The verbatim user quote a note is bound to, as every full rendering shows it."""
    return f"user's words: \u201c{note.quote}\u201d"


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
    lines = [f"## [#{note.id}] {note.kind}/{note.priority} · {safe_title(note.title)}"]
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
        lines.append(quote_line(note))
    if len(ids) > 1:
        lines.append("supersession: " + " → ".join(f"#{i}" + (" (this)" if i == note.id else "") for i in ids))
    if note.body:
        lines += ["", safe_body(note.body)]
    return "\n".join(lines) + "\n"


def expand_notes(index, ids: list[str], now: str | None = None) -> list[dict]:
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
