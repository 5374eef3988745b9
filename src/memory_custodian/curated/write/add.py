"""`add`: one entry into the right curated file, in MemoryCustodian 0.9.1's format.

The entry is checked before anything is read for writing: no credential (the secret detector),
a known type and safe names, and a decision within its 120-token entry budget unless the person
says `--allow-long`. Adding the same entry twice is a no-op.
"""

from __future__ import annotations

from ...base.errors import CustodianError, InvalidInput, Refused
from ...base.secrets import refuse_secrets
from ...base.tokens import estimate_tokens
from ..manifest.reader import parse_manifest
from ..manifest.routing import MODULE_KINDS
from ..parse.units import fence_mask, split_units
from . import entries
from .enable import module_edits
from .entries import (
    AREA_SCOPED_TYPES,
    DECISION_ENTRY_BUDGET,
    FOLDERS,
    NO_CANDIDATES,
    TARGETS,
    TYPES,
    append_bullet,
    bullet_entry,
    decision_entry,
    module_template,
    prepend_dated_section,
    prepend_entry,
    safe_name,
    tombstone_entry,
)
from .plans import Plan, PlanResult, Reader

TYPE_CHECKING = False  # not `typing`'s: importing it costs every fresh process
if TYPE_CHECKING:
    from typing import Any


def resolve_target(kind: str, name: str | None, area: str | None) -> str:
    if kind not in TYPES:
        raise InvalidInput(f"unknown type {kind!r}; use one of: {', '.join(TYPES)}")
    if kind == "inbox":
        if name or area:
            raise InvalidInput("inbox items go to inbox.md; {field} and {field:area} do not apply to them",
                               field="name")
        return "inbox.md"
    if kind == "area" and area and not name:
        name = area
        area = None
    if area:
        if name:
            raise InvalidInput("use {field} or {field:name}, not both", field="area")
        if kind not in AREA_SCOPED_TYPES:
            raise InvalidInput(f"{{field}} applies to {', '.join(sorted(AREA_SCOPED_TYPES))} entries, not {kind}",
                               field="area")
        return f"areas/{safe_name(area, 'area')}.md"
    if kind in FOLDERS:
        if not name:
            raise InvalidInput(f"{{field}} is required for a {kind}, such as {{field}} output", field="name")
        return f"{FOLDERS[kind]}/{safe_name(name, kind)}.md"
    if name:
        raise InvalidInput(f"{{field}} applies to rule, profile and area entries, not {kind}", field="name")
    return TARGETS[kind]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _already_there(base: str, entry: str) -> bool:
    key = _norm(entry)
    if entry.startswith("- "):
        return any(_norm(line) == key for line in base.splitlines())
    return any(_norm(u.text) == key for u in split_units(base).units)


def _check_structure(text: str, label: str) -> None:
    """An entry must stay one unit: no headings of its own, no code fence left open."""
    lines = text.splitlines()
    mask, unclosed = fence_mask([line + "\n" for line in lines])
    if unclosed is not None:
        raise InvalidInput(f"{label} has a code fence opened at line {unclosed} that never closes; close it with ```")
    for number, line in enumerate(lines, start=1):
        if not mask[number - 1] and line.startswith("#") and line.lstrip("#")[:1] in (" ", ""):
            raise InvalidInput(f"{label} has a Markdown heading at line {number}; an entry cannot contain headings "
                               "— write it as plain text")


class AddResult(PlanResult):
    """An added entry: its `path` and `type`, whether it was a `duplicate` (nothing written), the
    target's `budget` (`{"path", "tokens", "budget", "percent"}`) and any budget `warnings`."""

    path: str
    type: str
    duplicate: bool
    budget: dict[str, Any]  # {"path", "tokens", "budget", "percent"}
    warnings: list[str]


def build_plan(memory_dir, text: str, kind: str, reasons: list[str], scope: str | None, name: str | None,
               area: str | None, allow_long: bool, date: str, memory_rel: str, title: str | None = None) -> Plan:
    if not text or not text.strip():
        raise InvalidInput("add needs the entry TEXT; it is empty")
    spelled = kind  # the changelog line names the type as the caller spelled it, as 0.9.1's does
    kind = "tombstone" if kind == "do-not-use" else kind  # MemoryCustodian's alias
    target = resolve_target(kind, name, area)
    reasons = _checked_inputs(text, kind, reasons, scope)
    entry = _entry_for(kind, text, reasons, scope, date, allow_long, title)
    reader = Reader(memory_dir)
    manifest_path = reader.path_of("manifest.md")
    manifest_text = reader.required("manifest.md")
    manifest = parse_manifest(manifest_text, manifest_path)
    found = reader.read(target)
    created = found is None
    base = module_template(target, date, memory_rel) if found is None else found

    out: dict[str, str] = {}
    lines: list[str] = []
    duplicate = not created and _already_there(base, entry)
    if duplicate:
        lines.append(f"{target}: the same entry is already there; nothing changed")
        new = base
    else:
        new = out[target] = _with_entry(base, kind, entry, text, date)
        article = "an" if kind[0] in "aeiou" else "a"
        lines.append(f"{target}: {'create with' if created else 'add'} {article} {kind} entry")
        if target.split("/", 1)[0] in MODULE_KINDS:
            indexed = module_edits(manifest_text, target)
            if indexed != manifest_text:
                parse_manifest(indexed, manifest_path)
                out["manifest.md"] = indexed
                lines.append(f"manifest.md: index {target}")
        changelog = reader.read("changelog.md")
        if changelog is not None and target != "changelog.md":
            out["changelog.md"] = entries.changelog_add(changelog, f"Added {spelled} memory to {target}.", date)
    info, warnings = _budget_report(target, new, manifest.budget_for(target))
    return Plan(
        command="add",
        changes=[reader.change(r, n) for r, n in sorted(out.items())],
        inputs=dict(reader.digests),
        lines=lines,
        details={"path": target, "type": kind, "duplicate": duplicate, "budget": info, "warnings": warnings},
    )


def _checked_inputs(text: str, kind: str, reasons: list[str], scope: str | None) -> list[str]:
    """The reasons to write, once the text, reasons and scope are known to be safe, whole entries."""
    reasons = [r for r in (reasons or []) if r is not None]
    if reasons and any(not r.strip() for r in reasons):
        raise InvalidInput("{field} is empty; give the reason text or leave the option out", field="reasons")
    if (reasons or scope) and kind not in ("decision", "tombstone"):
        raise InvalidInput(f"{{field}} and {{field:scope}} apply to decision and tombstone entries, not {kind}",
                           field="reasons")
    if scope is not None and not scope.strip():
        raise InvalidInput("{field} is empty; give the scope or leave the option out", field="scope")
    parts = [("text", "the text to add", text)] + [("reasons", f"{{field}} #{i}", r) for i, r in enumerate(reasons, 1)]
    parts += [("scope", "{field}", scope)] if scope else []
    for check in (_check_structure, refuse_secrets):
        for field, label, value in parts:
            _as_field(check, value, label, field)
    return reasons


def _as_field(check, value: str, label: str, field: str) -> None:
    """Run a check on one argument, its error naming the argument as each adapter names it."""
    try:
        check(value, label)
    except CustodianError as exc:
        raise type(exc)(exc.template, field=field) from exc


def _entry_for(kind: str, text: str, reasons: list[str], scope: str | None, date: str, allow_long: bool,
               title: str | None = None) -> str:
    if title is not None and (kind not in ("decision", "tombstone") or not " ".join(title.split())):
        raise InvalidInput("{field} names a decision's or tombstone's heading; other entries are one bullet "
                           "with no heading" if title.strip() else "{field} is empty", field="title")
    if kind == "tombstone":
        return tombstone_entry(text, reasons, scope, date, title)
    if kind != "decision":
        return bullet_entry(text)
    entry = decision_entry(text, reasons, scope, date, title)
    tokens = estimate_tokens(entry)
    if tokens > DECISION_ENTRY_BUDGET and not allow_long:
        raise Refused(
            f"the decision entry is {tokens} tokens, over the {DECISION_ENTRY_BUDGET}-token entry budget — shorten "
            "Decision to one or two sentences and Reason to one (or pass {field} after review); nothing was written",
            field="allow_long",
        )
    return entry


def _with_entry(base: str, kind: str, entry: str, text: str, date: str) -> str:
    if kind in ("decision", "tombstone"):
        return prepend_entry(base, entry)
    if kind == "inbox":
        return prepend_dated_section(base, date, text.strip(), drop_line=NO_CANDIDATES)
    return append_bullet(base, entry)


def _budget_report(target: str, new: str, budget: int | None) -> tuple[dict, list[str]]:
    """The target's size against its budget, and a warning when it is near or over it."""
    tokens = estimate_tokens(new)
    info = {"path": target, "tokens": tokens, "budget": budget}
    warnings = []
    if budget:
        percent = tokens * 100 // budget
        info["percent"] = percent
        if percent >= 100:
            warnings.append(f"{target} is over its budget ({tokens}/{budget} tokens) — run "
                            f"`memory-custodian compact --target {target}` or consolidate entries")
        elif percent >= entries.BUDGET_WARN_PERCENT:
            warnings.append(f"{target} is at {percent}% of its budget ({tokens}/{budget} tokens) — "
                            f"consider `memory-custodian compact --target {target}`")
    return info, warnings
