"""The context pack `read` builds: what each module came to (`ModuleResult`), the pack and its
account (`ReadResult`), and how it is cut to a size (`cut_to`). How it is rendered lives in `pack_text`.
"""

from __future__ import annotations

from ...base.pack_parts import ModuleResult
from ...base.records import Record, field
from .pack_text import LOADED, MISSING_OPTIONAL, MISSING_REQUIRED, OMITTED_BY_BUDGET

TYPE_CHECKING = False  # the idiom without importing typing, which `read` cannot afford at start-up
if TYPE_CHECKING:
    from ...base.pack_parts import Omission, Section


class ReadResult(Record):
    """The context pack (`rendered`) and the account of how it was built: the modules considered,
    the ledger's `sections`, every `omissions` record and the warnings."""

    task: str
    canonical_task: str
    task_heading: str | None
    inputs: dict[str, str | list[str] | None]
    modules: list[ModuleResult]
    sections: list[Section]
    omissions: list[Omission]
    warnings: list[str]
    rendered: str
    names_only: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def loaded(self) -> list[str]:
        return [m.module for m in self.modules if m.disposition == LOADED]

    @property
    def note_ids(self) -> list[str]:
        """Every ledger note the pack shows, section by section."""
        return [i for s in self.sections for i in s.note_ids]

    @property
    def missing_required(self) -> list[str]:
        return [m.module for m in self.modules if m.disposition == MISSING_REQUIRED]

    @property
    def skipped_optional(self) -> list[str]:
        return [m.module for m in self.modules if m.disposition == MISSING_OPTIONAL]

    @property
    def oversized(self) -> list[str]:
        return [m.module for m in self.modules if m.oversized] + [s.name for s in self.sections if s.oversized]

    @property
    def omitted_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for omission in self.omissions:
            if omission.reason == OMITTED_BY_BUDGET:
                counts[omission.module] = counts.get(omission.module, 0) + 1
        return counts

    @property
    def tokens(self) -> int:
        """The pack's size: its loaded files and ledger sections, in tokens."""
        return sum(m.tokens or 0 for m in self.modules if m.disposition == LOADED) + sum(s.tokens or 0 for s in self.sections)

    @property
    def exit_code(self) -> int:
        return 1 if self.missing_required else 0

    def cut_to(self, limit: int, *, frame=None, extra=(), terms=None):
        """The pack in at most `limit` characters (a `cutting.CutPack`), whole when it fits, else cut on
        whole entries by structure with a notice naming what was left out and where the whole pack is,
        in the caller's `terms` (`base.errors.Terms`). `frame(body)` wraps the text as it will be sent
        (counted in the limit); `extra` parts (`cutting.PackPart`) follow the pack."""
        from .cutting import cut_pack

        return cut_pack(self, limit, frame, extra, *(() if terms is None else (terms,)))

    @property
    def sha256(self) -> str:
        import hashlib

        return hashlib.sha256(self.rendered.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict:
        return {
            "task": self.task,
            "canonical_task": self.canonical_task,
            "task_heading": self.task_heading,
            "inputs": self.inputs,
            "modules": [m.to_dict() for m in self.modules],
            "loaded": self.loaded,
            "missing_required": self.missing_required,
            "skipped_optional": self.skipped_optional,
            "oversized": self.oversized,
            "omitted": self.omitted_counts,
            "omissions": [{"module": o.module, "ref": o.ref, "reason": o.reason} for o in self.omissions],
            "packed": {m.module: (m.text or "") + "\n" for m in self.modules if m.disposition == LOADED},
            "sections": [
                {"name": s.name, "tokens": s.tokens, "budget": s.budget, "oversized": s.oversized,
                 "note_ids": list(s.note_ids), "text": s.text}
                for s in self.sections
            ],
            "warnings": list(self.warnings),
            "problems": list(self.problems),
            "rendered": self.rendered,
            "sha256": self.sha256,
            "tokens": self.tokens,
            "exit_code": self.exit_code,
        }

    def explain_text(self) -> str:
        out = ["## Explain", f"Task: {self.task} -> {self.canonical_task}"
               + (f" (manifest heading: {self.task_heading})" if self.task_heading else " (always-load only)"),
               f"Tokens: {self.tokens} in all"]
        for key in ("paths", "areas", "profiles", "rules"):
            listed = self.inputs.get(key)
            if listed:
                out.append(f"{key.capitalize()}: {', '.join(listed)}")
        if self.inputs.get("query"):
            out.append(f"Query: {self.inputs['query']}")
        out.append("Modules considered:")
        for m in self.modules:
            size = ""
            if m.disposition == LOADED:
                size = f" {m.tokens}/{m.budget if m.budget is not None else 'unbudgeted'} tokens"
                if m.omitted:
                    size += f", {len(m.omitted)} omitted"
                if m.oversized:
                    size += ", oversized first entry kept whole"
            detail = f" — {m.detail}" if m.detail else ""
            why = f" ({m.reason})" if m.reason != m.disposition else ""
            out.append(f"- {m.module}: {m.disposition}{why}{size}{detail}")
        for s in self.sections:
            size = f" {s.tokens}/{s.budget if s.budget is not None else 'unbudgeted'} tokens"
            out.append(f"- {s.name}: loaded (ledger){size}")
        out.append("Omitted by budget:")
        budgeted = [o for o in self.omissions if o.reason == OMITTED_BY_BUDGET]
        if not budgeted:
            out.append("- none")
        # by position: two omitted entries may share a heading
        lines = {m.module: iter(m.omitted_lines) for m in self.modules if m.omitted_lines}
        for o in budgeted:
            line = next(lines[o.module], None) if o.module in lines else None
            where = f"{o.module}:{line}" if line else o.module
            out.append(f"- {where}: {o.ref} ({o.reason})")
        others = [o for o in self.omissions if o.reason != OMITTED_BY_BUDGET]
        if others:  # e.g. a ledger directive scoped to another git branch (other-scope)
            out.append("Not loaded for another reason:")
            out.extend(f"- {o.module}: {o.ref} ({o.reason})" for o in others)
        if self.warnings:
            out.append("Warnings:")
            out.extend(f"- {w}" for w in self.warnings)
        return "\n".join(out) + "\n"
