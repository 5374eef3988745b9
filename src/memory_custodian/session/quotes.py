"""Capture-layer quote binding: a note that repeats the user verbatim is bound as `user-stated`.

Agents forget to pass a quote, so the capture layer finds it: the prompt hook keeps the user's
last message, and when a note shares a span of 30+ characters with it, that span becomes the
note's quote. An explicit quote that the user never said is refused, never trusted.
"""

from __future__ import annotations

import re

from ..base.records import Record
from .sessions import MAX_MESSAGE_CHARS

MIN_QUOTE_CHARS = 30

_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Whitespace runs collapse to one space: a quote survives re-wrapping, nothing else changes."""
    return _WS.sub(" ", text).strip()


class QuoteBinding(Record):
    """How an agent's note is bound: `provenance` "user-stated" (with the user's `quote`) or "agent";
    `refused_reason` is set when an explicit quote was refused."""

    provenance: str
    quote: str | None
    refused_reason: str | None = None


def _fold(text: str) -> str:
    """Lower case, one character for one, so positions in the folded text are positions in the
    original: a quote may differ in case (a sentence start), but what is stored is what the user
    typed."""
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def find_shared_span(note_text: str, message: str, *, min_chars: int = MIN_QUOTE_CHARS) -> str | None:
    """The longest span of `note_text` that appears in `message` (whitespace-normalized, case
    aside), as the user wrote it, trimmed to whole words, if it is at least `min_chars` long."""
    from difflib import SequenceMatcher

    a = normalize(note_text)
    b = normalize(message)[:MAX_MESSAGE_CHARS]
    if len(a) < min_chars or len(b) < min_chars:
        return None
    matcher = SequenceMatcher(None, _fold(a), _fold(b), autojunk=False)
    match = matcher.find_longest_match(0, len(a), 0, len(b))
    if match.size < min_chars:
        return None
    span = b[match.b: match.b + match.size]
    # Trim partial words at the edges so the quote reads as what was said.
    start, end = match.b, match.b + match.size
    if start > 0 and b[start - 1].isalnum() and span[:1].isalnum():
        cut = span.find(" ")
        span = span[cut + 1:] if cut >= 0 else ""
    if end < len(b) and b[end:end + 1].isalnum() and span[-1:].isalnum():
        cut = span.rfind(" ")
        span = span[:cut] if cut >= 0 else ""
    span = span.strip().lstrip(":;,.!?)]}—–- ").strip()
    return span if len(span) >= min_chars else None


def quote_in_message(quote: str, message: str) -> str | None:
    """The user's own words for `quote` if it appears in `message` (case aside), else None."""
    q = normalize(quote)
    m = normalize(message)
    if not q:
        return None
    if len(q) < MIN_QUOTE_CHARS and _fold(q) != _fold(m):
        return None
    at = _fold(m).find(_fold(q))
    return m[at: at + len(q)] if at >= 0 else None


def bind_quote(note_text: str, explicit_quote: str | None, messages: list[str]) -> QuoteBinding:
    """Decide the provenance of an agent's note from the user's recent messages (newest first)."""
    if explicit_quote is not None and explicit_quote.strip():
        for message in messages:
            words = quote_in_message(explicit_quote, message)
            if words:
                return QuoteBinding("user-stated", words)
        if not messages:
            reason = ("quote refused: no user message from the last 10 minutes is on record "
                      "(the prompt hook keeps it; is it installed?)")
        elif len(normalize(explicit_quote)) < MIN_QUOTE_CHARS:
            reason = (f"quote refused: a quote must be at least {MIN_QUOTE_CHARS} characters "
                      "of the user's message, or the whole message")
        else:
            reason = "quote refused: it does not appear verbatim in the user's last message"
        return QuoteBinding("agent", None, reason)
    for message in messages:
        span = find_shared_span(note_text, message)
        if span:
            return QuoteBinding("user-stated", span)
    return QuoteBinding("agent", None)
