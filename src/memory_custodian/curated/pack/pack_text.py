"""How a context pack is written out: its head, each loaded file and ledger section, and the
footer that names what was left out; the reason codes those texts use.

Reason codes (JSON `modules[].reason`; the explain section prints them):
  loaded:   always · task · path-glob · explicit
  skipped:  task-mismatch · no-path-match · not-requested · explicit-only · excluded-by-policy · not-routed
  missing:  missing-required · missing-optional
  omitted units: omitted-by-budget · other-scope (a ledger note scoped to another git branch)
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing`'s: importing it costs `read` at start-up
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...base.pack_parts import ModuleResult, Omission, Section

LOADED, SKIPPED, MISSING_REQUIRED, MISSING_OPTIONAL = "loaded", "skipped", "missing-required", "missing-optional"
OMITTED_BY_BUDGET = "omitted-by-budget"
OMISSION_TEXT = {OMITTED_BY_BUDGET: "omitted by budget", "other-scope": "not loaded (scoped to another git branch)"}
FOOTER_REFS = 5  # omitted units named inside the pack itself; explain and JSON name them all


def short_ref(ref: str, width: int = 60) -> str:
    """An omitted entry's name, cut to `width` characters for a one-line listing."""
    return ref if len(ref) <= width else ref[: width - 1].rstrip() + "…"


def render_pack(task: str, canonical: str, modules: list[ModuleResult], sections: list[Section],
                omissions: list[Omission], *, names_only: bool = False, warnings: Sequence[str] = ()) -> str:
    """The context pack: a header, each loaded file under its name, the ledger's sections, and what was left out."""
    blocks = [pack_head(task, canonical)]
    loaded = [m for m in modules if m.disposition == LOADED]
    if names_only:
        blocks.append("Loaded:\n" + ("\n".join(f"- {m.module}" for m in loaded) or "- none"))
    else:
        blocks.extend(f"## {m.module}\n\n{m.text}" for m in loaded)
        blocks.extend(f"## {s.name}\n\n{s.text.strip()}" for s in sections if s.text.strip())
    footer = pack_footer(modules, sections, omissions, warnings)
    if footer:
        blocks.append(footer)
    return "\n\n".join(blocks) + "\n"


def pack_head(task: str, canonical: str) -> str:
    """The pack's first lines: its title and the task (with the canonical task it stands for)."""
    return f"# Memory context pack\nTask: {task}" + (f" (canonical: {canonical})" if task != canonical else "")


def pack_footer(modules: list[ModuleResult], sections: list[Section], omissions: list[Omission],
                warnings: Sequence[str] = ()) -> str:
    """The pack's `## Not loaded` and `## Warnings` blocks ("" when there is nothing to say)."""
    blocks = []
    notes = []
    by_module: dict[tuple[str, str], list[str]] = {}
    for o in omissions:
        by_module.setdefault((o.module, o.reason), []).append(o.ref)
    for (module, reason), refs in by_module.items():
        shown = "; ".join(short_ref(ref) for ref in refs[:FOOTER_REFS])
        if len(refs) > FOOTER_REFS:
            shown += f"; and {len(refs) - FOOTER_REFS} more"
        why = OMISSION_TEXT.get(reason, reason.replace("-", " "))
        notes.append(f"- {module}: {len(refs)} entr{'y' if len(refs) == 1 else 'ies'} {why}: {shown}")
    for m in modules:
        if m.oversized:
            notes.append(f"- {m.module}: first entry is larger than the {m.budget}-token budget and was kept whole")
        if m.disposition in (MISSING_REQUIRED, MISSING_OPTIONAL):
            notes.append(f"- {m.module}: {m.disposition.replace('-', ' ')}")
    for s in sections:
        if s.oversized:
            notes.append(f"- {s.name}: larger than its {s.budget}-token budget and kept whole")
    if notes:
        blocks.append("## Not loaded\n\n" + "\n".join(notes))
    if warnings:  # the agent reading the pack should know what the person running `read` is told
        blocks.append("## Warnings\n\n" + "\n".join(f"- {w}" for w in warnings))
    return "\n\n".join(blocks)
