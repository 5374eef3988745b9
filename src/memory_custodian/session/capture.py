"""Agent writes with capture-layer quote binding: the provenance is decided here, not by the agent.

An agent may claim the user said something; the claim is checked against the user's recent
messages (kept by the prompt hook). A verified quote makes the note `user-stated`; anything else
is recorded at `agent` provenance, and a refused quote says why.
"""

from __future__ import annotations

from .quotes import QuoteBinding, bind_quote
from .sessions import recent_user_messages

ACTOR = "agent"


def _binding(memory, text: str, quote: str | None) -> QuoteBinding:
    return bind_quote(text, quote, recent_user_messages(memory.memory_dir_str))


def remember_as_agent(memory, text: str, *, quote: str | None = None, **fields):
    """`Memory.remember` as an agent; returns (note, binding)."""
    binding = _binding(memory, text, quote)
    note = memory.remember(text, quote=binding.quote, provenance=binding.provenance, actor=ACTOR,
                           **{k: v for k, v in fields.items() if v is not None})
    return note, binding


def supersede_as_agent(memory, note_id: str, text: str, *, reason: str, quote: str | None = None, **fields):
    """`Memory.supersede` as an agent; returns (new note, binding)."""
    binding = _binding(memory, text, quote)
    kept = {k: v for k, v in fields.items() if v not in (None, ())}
    note = memory.supersede(note_id, text, reason=reason, actor=ACTOR, quote=binding.quote,
                            provenance=binding.provenance, **kept)
    return note, binding
