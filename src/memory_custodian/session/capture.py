"""Quote binding at capture, for every writer that is not a person: the library decides the provenance.

An agent may claim the user said something, through any door (the MCP server, the CLI run with
`actor="agent"`, the Python API); the claim is checked against the user's recent messages (kept
by the prompt hook). A verified quote makes the note `user-stated`; anything else is recorded at the
writer's own provenance, and a refused quote says why. An agent's note that repeats the user
verbatim is bound without being asked; an automatic note (`auto`, `system`) is bound only by a quote
it gives, since what it repeats (a checkpoint quotes the last request) is a record, not the user's rule.
`Memory.remember` and `Memory.supersede` run this; only a person's word is taken as given.
"""

from __future__ import annotations

from ..ledger.storage.inputs import DEFAULT_PROVENANCE, QUOTE_MAX, bounded, require_utf8
from ..ledger.storage.model import PROVENANCES
from .quotes import QuoteBinding, bind_quote
from .sessions import recent_user_messages

PERSON = "human"
FINDS_SPANS = ("agent",)  # writers whose notes are searched for the user's words unasked


def _checked(quote: str) -> str:
    """A quote held to the write's own rules first (UTF-8, its length): bad input is refused, not weighed."""
    return bounded(require_utf8(quote, "{field}", "quote").strip(), QUOTE_MAX, "{field}", "quote")


def bind_writer(memory_dir: str, actor: str, text, quote, provenance) -> QuoteBinding | None:
    """How the note of a writer that is not a person is bound: the `provenance` and the verified `quote`
    to record, and `refused_reason` when a quote was refused. A writer may ask for less than its own
    provenance, or for user-stated, which only a verified quote gives. None for a person, and for what
    the write refuses anyway, naming it (an unknown actor or provenance, `human`, user-stated with no
    quote, a text that is not a string)."""
    if actor == PERSON or actor not in DEFAULT_PROVENANCE or not isinstance(text, str):
        return None
    own = DEFAULT_PROVENANCE[actor]
    lower = provenance in PROVENANCES and PROVENANCES.index(provenance) <= PROVENANCES.index(own)
    if provenance is not None and not lower and provenance != "user-stated":
        return None
    explicit = _checked(quote) if isinstance(quote, str) and quote.strip() else None
    if explicit is None and actor not in FINDS_SPANS:
        if provenance == "user-stated":
            return None
        return QuoteBinding(provenance or own, None)  # nothing to check: no session file is read

    binding = bind_quote(text, explicit, recent_user_messages(memory_dir))
    if binding.quote is None and provenance == "user-stated" and explicit is None:
        return None
    chosen = provenance if lower else ("user-stated" if binding.quote else own)
    return QuoteBinding(chosen, binding.quote, binding.refused_reason)
