"""What the hooks and the MCP tools show of the ledger: the same lines, the same frames.

Kept apart from `mcp_server.py` so the hooks can use it without importing mcp.
"""

from __future__ import annotations

from ..base.limits import PROMPT_QUERY_CHARS
from ..ledger.frames import index_line, provenance_frame, quote_line, safe_body
from ..ledger.index.background import unread_phrase
from ..ledger.recall.ranking import iter_terms, query_terms
from ..ledger.recall.recall_result import unranked_phrase

# The `Memory` verbs the MCP server has a tool for (`mcp_server.TOOLS`; a test holds the two equal), so
# the hooks, which must not import mcp, can name a tool too.
TOOL_VERBS = {"read": "memory_context", **{verb: f"memory_{verb}" for verb in (
    "recall", "expand", "history", "remember", "supersede", "revoke", "flag_stale", "reinstate", "propose")}}

# A prompt hook line must earn its place: its score is at least this share of the best one's,
# and it shares enough of the prompt's words.
RELATIVE_FLOOR = 0.35
MIN_SHARED_TERMS = 2


def _terms(text: str) -> set[str]:
    return {t[:6] for t in query_terms(text)}


def _shares(wanted: set[str], text: str, need: int) -> bool:
    """Whether `_terms(text)` holds at least `need` of `wanted`, reading only as far as it must."""
    found: set[str] = set()
    any_term = False
    for term in iter_terms(text):
        any_term = True
        if term[:6] in wanted:
            found.add(term[:6])
            if len(found) >= need:
                return True
    if not any_term:  # nothing but stop words: `_terms` falls back to every word
        return len(wanted & _terms(text)) >= need
    return len(found) >= need


MAX_QUERY_TERMS = 6


def focus_query(prompt: str, max_terms: int = MAX_QUERY_TERMS) -> str:
    """A long prompt ORs every word and matches half the ledger; its longest words are the most
    telling (a cheap stand-in for rarity) and keep the hook fast."""
    terms = query_terms(prompt)
    if len(terms) <= max_terms:
        return prompt
    keep = sorted(range(len(terms)), key=lambda i: (-len(terms[i]), i))[:max_terms]
    return " ".join(terms[i] for i in sorted(keep))


def relevant_hits(memory, prompt: str, *, limit: int) -> tuple[list, int, str | None]:
    """The top hits (`RecallHit`s) for a prompt that clear the relevance floor, how many matched below
    it, and what the recall did not search (`unsearched`), if anything."""
    prompt = prompt[:PROMPT_QUERY_CHARS]
    # the hook says how many more matched, never what was excluded: one count query, not a scan
    result = memory.recall(focus_query(prompt), limit=limit * 2, counts="matched")
    hits = result.hits
    if not hits:
        return [], 0, unsearched(result)
    wanted = _terms(prompt)
    need = min(MIN_SHARED_TERMS, len(wanted))
    top = max(h.score for h in hits)
    kept = []
    for hit in hits:
        n = hit.note
        if (top <= 0 or hit.score >= RELATIVE_FLOOR * top) and _shares(
                wanted, " ".join([n.title, n.body, *n.tags, *n.paths]), need):
            kept.append(hit)
    below = len(hits) - len(kept[:limit]) + (result.below_cutoff or 0)
    return kept[:limit], below, unsearched(result)


def path_notes(memory, paths: list[str], *, limit: int) -> tuple[list, int, str | None]:
    """Active gotchas anchored to any of `paths` (by priority then recency), how many more matched
    beyond `limit`, and what the recall did not search (`unsearched`), if anything."""
    result = memory.recall(None, kinds=("gotcha",), paths=tuple(paths), limit=limit, ids=False)
    return [h.note for h in result.hits], (result.below_cutoff or 0), unsearched(result)


def unsearched(result) -> str | None:
    """What a recall could not search or rank, for a hook's footer: the ledger not indexed yet (a
    backlog past what one command reads), notes past the ranking limit; None when it saw everything."""
    parts = []
    if result.unread[0]:
        parts.append(unread_phrase(result.unread, result.unread_failure))
    if result.unranked:
        parts.append(unranked_phrase(result.unranked))
    return "; ".join(parts) or None


def note_text(note) -> str:
    """One note in full: its index line, anchors, the user's words if bound, then its body."""
    lines = [index_line(note, framed=True)]
    if note.tags:
        lines.append("tags: " + ", ".join(note.tags))
    if note.paths:
        lines.append("paths: " + ", ".join(note.paths))
    if note.quote:
        lines.append(quote_line(note))
    lines.append(safe_body(note.body.strip()))
    return "\n".join(lines)


def render_recall(result, terms) -> tuple[str, dict]:
    """Index lines framed by who recorded each note, then what was not shown (never silent), its hint
    worded in the caller's `terms`."""
    hits = list(result.hits)
    lines = [index_line(h.note, getattr(h, "state", None), framed=True) for h in hits]
    if not hits:
        lines.append("(no notes matched)" if result.query else "(no notes)")
    lines.append(result.footer(terms))
    return "\n".join(lines), result.to_dict(terms)


def render_expand(expansion) -> tuple[str, dict]:
    """The full notes of an `Expansion`, and its data (ids and notes) for a tool's structured content."""
    notes = expansion.notes
    return "\n\n".join(item["text"] for item in notes), {"ids": [item["id"] for item in notes], "notes": notes}


def render_history(events: list[dict]) -> str:
    lines = []
    for ev in events:
        what = ev.get("op", "?")
        extra = ""
        if ev.get("by"):
            extra = f" by #{ev['by']}"
        if ev.get("to"):
            extra = f" to {ev['to']}"
        why = f" — {ev['reason']}" if ev.get("reason") else ""
        lines.append(f"{ev.get('at', '')} {what}{extra} ({ev.get('actor', '?')}){why}")
    return "\n".join(lines) or "no events"


def render_written(note, verb: str) -> tuple[str, dict]:
    """A note an agent wrote: its frame, the user's words it is bound to, or why a quote was refused."""
    frame = provenance_frame(note.provenance)
    text = f"{verb} #{note.id} ({note.kind}/{note.priority}, {note.provenance}: {frame})"
    if note.quote and note.provenance == "user-stated":
        text += f"\nbound to the user's words: \u201c{note.quote}\u201d"
    if note.quote_refused:
        text += f"\n{note.quote_refused}; the note was stored at {note.provenance} provenance"
    data = {"id": note.id, "provenance": note.provenance, "quote": note.quote,
            "quote_refused": note.quote_refused}
    return text, data
