"""What a context pack is made of, shared by the curated tier, the ledger tier and the adapters.

`read` (CLI), `memory_context` (MCP) and the session-start hook all build the same pack: a list of
sections, each packed under its own budget, plus the explain records of everything considered.
"""

from __future__ import annotations

from .records import Factory, Record


class Omission(Record):
    """Something a budget or a rule left out, named so nothing is dropped silently: `module` (a file
    such as "decisions.md" or a ledger section such as "ledger:directives"), `ref` (unit heading or
    first line, or "#noteid") and `reason` (a reason code such as "omitted-by-budget")."""

    FIELDS = ("module", "ref", "reason")


class Section(Record):
    """One block of the pack, rendered under `## {name}`; `note_ids` are the ledger notes it shows."""

    FIELDS = ("name", "text", "tokens", "budget", "omitted", "oversized", "note_ids")
    DEFAULTS = {"omitted": Factory(list), "oversized": False, "note_ids": Factory(list)}
