"""What a context pack is made of, shared by the curated tier, the ledger tier and the adapters.

`read` (CLI), `memory_context` (MCP) and the session-start hook all build the same pack: a list of
sections, each packed under its own budget, plus the explain records of everything considered.
"""

from __future__ import annotations

from .records import Record, field


class Omission(Record):
    """Something a budget or a rule left out, named so nothing is dropped silently: `module` (a file
    such as "decisions.md" or a ledger section such as "ledger:directives"), `ref` (unit heading or
    first line, or "#noteid") and `reason` (a reason code such as "omitted-by-budget")."""

    module: str
    ref: str
    reason: str


class Section(Record):
    """One block of the pack, rendered under `## {name}`; `note_ids` are the ledger notes it shows."""

    name: str
    text: str
    tokens: int
    budget: int | None
    omitted: list[Omission] = field(default_factory=list)
    oversized: bool = False
    note_ids: list[str] = field(default_factory=list)


class ModuleResult(Record):
    """One module considered for the pack: what happened to it (`disposition`: loaded, skipped,
    missing-required or missing-optional) and why (`reason`, a code; `detail`: which heading, glob
    or flag routed it, or why not); for a loaded module its packed `text`, `tokens` and `budget`,
    and the refs and source lines of the units its budget left out."""

    module: str
    disposition: str
    reason: str
    required: bool = False
    detail: str = ""
    tokens: int | None = None
    budget: int | None = None
    omitted: list[str] = field(default_factory=list)
    omitted_lines: list[int] = field(default_factory=list)
    oversized: bool = False
    text: str | None = None

    def to_dict(self) -> dict:
        return {
            "module": self.module, "disposition": self.disposition, "reason": self.reason,
            "required": self.required, "detail": self.detail, "tokens": self.tokens,
            "budget": self.budget, "omitted": list(self.omitted), "omitted_lines": list(self.omitted_lines),
            "oversized": self.oversized,
        }
