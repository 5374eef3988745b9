"""What a context pack is made of, shared by the curated tier, the ledger tier and the adapters.

`read` (CLI), `memory_context` (MCP) and the session-start hook all build the same pack: a list of
sections, each packed under its own budget, plus the explain records of everything considered.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Omission:
    """Something a budget or a rule left out, named so nothing is dropped silently."""

    module: str  # file (e.g. "decisions.md") or ledger section (e.g. "ledger:directives")
    ref: str  # unit heading / first line, or "#noteid"
    reason: str  # reason code, e.g. "omitted-by-budget"


@dataclass
class Section:
    """One block of the pack, rendered under `## {name}`."""

    name: str
    text: str
    tokens: int
    budget: int | None
    omitted: list[Omission] = field(default_factory=list)
    oversized: bool = False
    note_ids: list[str] = field(default_factory=list)  # ledger notes shown in this section
