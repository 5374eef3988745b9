"""`read`: route the curated files for a task, pack each to its budget, add the ledger's sections,
and say out loud everything that was not loaded and why.

Reason codes (JSON `modules[].reason`; the explain section prints them):
  loaded:   always · task · path-glob · explicit
  skipped:  task-mismatch · no-path-match · not-requested · explicit-only · excluded-by-policy · not-routed
  missing:  missing-required · missing-optional
  omitted units: omitted-by-budget · other-scope (a ledger note scoped to another git branch)
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import CustodianError, InvalidInput, unreadable
from ..fsutil import read_utf8
from . import globs
from .manifest import MODULE_KINDS, Manifest, canonical_task, parse_manifest
from .units import pack, unclosed_fence

LOADED, SKIPPED, MISSING_REQUIRED, MISSING_OPTIONAL = "loaded", "skipped", "missing-required", "missing-optional"
OMITTED_BY_BUDGET = "omitted-by-budget"
OMISSION_TEXT = {OMITTED_BY_BUDGET: "omitted by budget", "other-scope": "not loaded (scoped to another git branch)"}
FOOTER_REFS = 5  # omitted units named inside the pack itself; explain and JSON name them all

_SLUG_RE = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"

TYPE_CHECKING = False  # the idiom without importing typing, which `read` cannot afford at start-up
if TYPE_CHECKING:
    from ..context import Omission, Section


# Plain slotted classes, not dataclasses: see units.py (start-up time of `read`).


class ModuleResult:
    """One module considered for the pack: what happened to it and why."""

    __slots__ = ("module", "disposition", "reason", "required", "detail", "tokens", "budget", "omitted",
                 "omitted_lines", "oversized", "text")

    def __init__(self, module: str, disposition: str, reason: str, required: bool = False, detail: str = ""):
        self.module = module
        self.disposition = disposition  # loaded | skipped | missing-required | missing-optional
        self.reason = reason  # a reason code (module docstring)
        self.required = required
        self.detail = detail  # which heading, glob or flag routed it; or why not
        self.tokens: int | None = None  # packed tokens
        self.budget: int | None = None
        self.omitted: list[str] = []  # refs of the units left out by the budget
        self.omitted_lines: list[int] = []  # 1-based source line of each omitted unit
        self.oversized = False
        self.text: str | None = None  # packed text, for loaded modules

    def __repr__(self) -> str:
        return f"ModuleResult({self.module!r}, {self.disposition!r}, {self.reason!r})"

    def to_dict(self) -> dict:
        return {
            "module": self.module, "disposition": self.disposition, "reason": self.reason,
            "required": self.required, "detail": self.detail, "tokens": self.tokens,
            "budget": self.budget, "omitted": list(self.omitted), "omitted_lines": list(self.omitted_lines),
            "oversized": self.oversized,
        }


class ReadResult:
    """The context pack (`rendered`) and the account of how it was built."""

    __slots__ = ("task", "canonical_task", "task_heading", "inputs", "modules", "sections", "omissions",
                 "warnings", "rendered", "names_only")

    def __init__(self, task: str, canonical_task: str, task_heading: str | None, inputs: dict, modules: list,
                 sections: list, omissions: list, warnings: list, rendered: str, names_only: bool = False):
        self.task = task
        self.canonical_task = canonical_task
        self.task_heading = task_heading
        self.inputs = inputs
        self.modules: list[ModuleResult] = modules
        self.sections: list[Section] = sections  # the ledger's sections
        self.omissions: list[Omission] = omissions
        self.warnings: list[str] = warnings
        self.rendered = rendered
        self.names_only = names_only

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
    def exit_code(self) -> int:
        return 1 if self.missing_required else 0

    def cut_to(self, limit: int, *, frame=None, extra=()):
        """The pack in at most `limit` characters (a `cutting.CutPack`), whole when it fits, else cut on
        whole entries by structure with a notice naming what was left out. `frame(body)` wraps the
        text as it will be sent (counted in the limit); `extra` parts (`cutting.PackPart`) follow the pack."""
        from .cutting import cut_pack

        return cut_pack(self, limit, frame, extra)

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
            "packed": {m.module: m.text + "\n" for m in self.modules if m.disposition == LOADED},
            "sections": [
                {"name": s.name, "tokens": s.tokens, "budget": s.budget, "oversized": s.oversized,
                 "note_ids": list(s.note_ids), "text": s.text}
                for s in self.sections
            ],
            "warnings": list(self.warnings),
            "rendered": self.rendered,
            "sha256": self.sha256,
            "exit_code": self.exit_code,
        }

    def explain_text(self) -> str:
        out = ["## Explain", f"Task: {self.task} -> {self.canonical_task}"
               + (f" (manifest heading: {self.task_heading})" if self.task_heading else " (always-load only)")]
        for key in ("paths", "areas", "profiles", "rules"):
            if self.inputs.get(key):
                out.append(f"{key.capitalize()}: {', '.join(self.inputs[key])}")
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


def _slugs(kind: str, values) -> list[str]:
    result = []
    for value in values or ():
        raw = str(value).strip()
        if raw.startswith(kind + "/"):
            raw = raw[len(kind) + 1:]
        if raw.endswith(".md"):
            raw = raw[:-3]
        if not re.match(_SLUG_RE, raw):
            flag = {"areas": "--area", "profiles": "--profile", "rules": "--rule"}[kind]
            raise InvalidInput(f"{flag} {value!r} is not a module name; use a name such as `store` for {kind}/store.md")
        result.append(raw)
    return list(dict.fromkeys(result))


def _resolve_inside(memory_dir: Path, module: str, manifest: Manifest) -> Path:
    """The module's path; refused if a symlink inside the memory folder leads out of it."""
    import os

    current = str(memory_dir)
    for part in module.split("/"):
        current = os.path.join(current, part)
        if os.path.islink(current):
            if memory_dir.resolve() not in resolve(Path(current)).parents:
                raise InvalidInput(
                    f"route {module} escapes the memory folder through a symlink; replace the link with a real file",
                    path=manifest.path,
                )
    return Path(current)


def resolve(path: Path) -> Path:
    """`path.resolve()`, a symlink loop named as one line (Python < 3.13 raises RuntimeError for one)."""
    try:
        return path.resolve()
    except RuntimeError as exc:
        import errno

        raise unreadable(path, OSError(errno.ELOOP, "symlink loop")) from exc


def interrupted_write(memory_dir: Path) -> str | None:
    """A sentence for a write journal left by a killed multi-file command, or None (one stat when none)."""
    import os

    path = os.path.join(memory_dir, ".cache", "journal.json")
    if not os.path.exists(path):
        return None
    label = "write"
    try:
        import json

        with open(path, encoding="utf-8") as handle:
            label = str(json.load(handle).get("label") or label)
    except (OSError, ValueError, AttributeError, RecursionError):
        pass  # an unreadable journal is still a journal: say so with the generic label
    return (f"an interrupted `{label}` left the memory folder half-applied (.cache/journal.json) — run any "
            "write command, e.g. `memory-custodian compact`, to finish it")


def load_manifest(memory_dir: Path) -> Manifest:
    path = memory_dir / "manifest.md"
    return parse_manifest(read_utf8(path), str(path))


def readable_errors(fn):
    """Any OSError reading the memory folder (a symlink loop, a permission, a folder where a file
    was) becomes one line naming the path, exit 2, not a traceback: for `read`, `check`, `status`."""
    from functools import wraps

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CustodianError:
            raise
        except OSError as exc:
            raise unreadable(None, exc) from exc

    return wrapper


@readable_errors
def read_pack(memory, *, task: str, areas=(), profiles=(), rules=(), paths=(), query: str | None = None,
              names_only: bool = False, strict: bool = False, ledger: bool = True) -> ReadResult:
    from ..project import require_memory_dir

    memory_dir = require_memory_dir(memory.memory_dir)
    canonical = canonical_task(task)
    requested = {"areas": _slugs("areas", areas), "profiles": _slugs("profiles", profiles), "rules": _slugs("rules", rules)}
    touched = list(dict.fromkeys(globs.normalize_path(p, memory.root) for p in paths or ()))
    manifest = load_manifest(memory_dir)
    section = manifest.task_section(canonical)
    warnings: list[str] = []
    for line, heading, known, odd in manifest.lookalikes:
        warnings.append(f"manifest.md:{line}: `## {heading}` only looks like a `## {known}` heading (it contains "
                        f"{odd}), so it is ignored — run `memory-custodian check`")
    # a manifest without its routing sections (empty, truncated by a merge, a ledger-only project's
    # stub) still reads, for the ledger's sake, but never quietly: say which section is missing
    missing = [(name, line, why) for name, line, why in manifest.missing_sections()
               if name not in {known for _, _, known, _ in manifest.lookalikes}]
    for _, line, why in missing:
        warnings.append(f"manifest.md{f':{line}' if line else ''}: {why}")
    journal = interrupted_write(memory_dir)
    if journal is not None:
        warnings.append(journal)
    if section is None and canonical != "general" and "load by task" not in {name for name, _, _ in missing}:
        warnings.append(f"the manifest has no `### ` heading under `## Load by task` for {canonical}; "
                        "only the always-load files were routed")

    considered: dict[str, ModuleResult] = {}
    order: list[str] = []

    def consider(result: ModuleResult) -> None:
        if result.module in considered:
            return
        considered[result.module] = result
        order.append(result.module)

    always = {r.module for r in manifest.always}
    for route in manifest.routes_for(canonical):
        reason = "always" if route.module in always else "task"
        detail = "" if reason == "always" else f"under `### {section.heading}`"
        consider(ModuleResult(route.module, LOADED, reason, required=route.required, detail=detail))

    indexed = set()
    for entry in manifest.index:
        indexed.add(entry.module)
        explicit = entry.slug in requested[entry.kind]
        matched = [f"{p} <- {g}" for p in touched for g in [globs.first_match(entry.paths, p)] if g] if entry.auto_path else []
        if entry.module in considered:
            if explicit or matched:
                considered[entry.module].detail += ("; " if considered[entry.module].detail else "") + "also: " + (
                    ", ".join(matched) if matched else "explicitly requested")
            continue
        if explicit:
            consider(ModuleResult(entry.module, LOADED, "explicit", required=True, detail=f"--{entry.kind[:-1]} {entry.slug}"))
        elif manifest.is_explicit_only(entry.module):
            would = f" (paths and tasks never load it; it would have matched {', '.join(matched)})" if matched else ""
            consider(ModuleResult(entry.module, SKIPPED, "explicit-only",
                                  detail=f"listed under `## Explicit only`{would}; use --{entry.kind[:-1]} {entry.slug}"))
        elif matched:
            consider(ModuleResult(entry.module, LOADED, "path-glob", detail=", ".join(matched)))
        elif entry.auto_task and canonical in entry.tasks:
            consider(ModuleResult(entry.module, LOADED, "task", detail=f"tasks: {', '.join(entry.tasks)}"))
        elif entry.auto_path:
            detail = "no --path given" if not touched else f"globs {', '.join(entry.paths)} match none of the paths"
            consider(ModuleResult(entry.module, SKIPPED, "no-path-match", detail=detail))
        elif entry.auto_task:
            consider(ModuleResult(entry.module, SKIPPED, "task-mismatch", detail=f"tasks: {', '.join(entry.tasks)}"))
        elif entry.activation == "explicit-only":
            consider(ModuleResult(entry.module, SKIPPED, "explicit-only", detail=f"use --{entry.kind[:-1]} {entry.slug}"))
        else:
            consider(ModuleResult(entry.module, SKIPPED, "not-requested", detail=f"use --{entry.kind[:-1]} {entry.slug}"))

    for kind in MODULE_KINDS:
        for slug in requested[kind]:
            module = f"{kind}/{slug}.md"
            if module in indexed:
                continue
            warnings.append(f"{module} was requested but is not listed in the manifest's module index")
            consider(ModuleResult(module, LOADED, "explicit", required=True, detail=f"--{kind[:-1]} {slug} (not indexed)"))

    # Everything else the manifest or the folder knows about is reported as not loaded, with why.
    for other in manifest.task_sections:
        for route in other.routes:
            if route.module not in considered and route.module != "inbox.md":
                consider(ModuleResult(route.module, SKIPPED, "task-mismatch", detail=f"routed under `### {other.heading}`"))
    if "inbox.md" not in considered:
        consider(ModuleResult("inbox.md", SKIPPED, "excluded-by-policy",
                              detail="unreviewed candidates; loaded for memory maintenance only"))
    for item in manifest.explicit_only:
        if item not in considered:
            policy = item.rstrip("/") == "archive"
            consider(ModuleResult(item, SKIPPED, "excluded-by-policy" if policy else "explicit-only",
                                  detail="explicit only" + ("; archived memory is never routed" if policy else "")))
    for name in _files_on_disk(memory_dir):
        if name not in considered and not manifest.is_explicit_only(name):
            consider(ModuleResult(name, SKIPPED, "not-routed", detail="no manifest route or index entry names it"))

    omissions: list = []
    for name in order:
        result = considered[name]
        if result.disposition != LOADED:
            continue
        path = _resolve_inside(memory_dir, name, manifest)
        if not path.is_file():
            raise_if_unreadable(path)
            result.disposition = MISSING_REQUIRED if result.required else MISSING_OPTIONAL
            result.reason = result.disposition
            continue
        budget = manifest.budget_for(name)
        text = read_utf8(path)
        fence = unclosed_fence(text)
        if fence is not None:
            warnings.append(f"{name}:{fence} opens a code fence that never closes, so everything after it is read "
                            "as one entry — close the fence (`memory-custodian check` lists it)")
        packed = pack(text, budget)
        result.text = packed.text
        result.tokens = packed.tokens
        result.budget = budget
        result.oversized = packed.oversized
        result.omitted = [ref for ref, _ in packed.omitted_entries]
        if packed.omitted_entries:
            from ..context import Omission

            skipped = text[: len(text) - len(text.lstrip())].count("\n")  # pack splits the stripped text
            result.omitted_lines = [line + skipped for _, line in packed.omitted_entries]
            omissions.extend(Omission(name, ref, OMITTED_BY_BUDGET) for ref, _ in packed.omitted_entries)

    modules = [considered[name] for name in order]
    missing = [m.module for m in modules if m.disposition == MISSING_REQUIRED]
    if missing:
        message = f"required memory file(s) missing: {', '.join(missing)} — create them or fix the manifest route"
        if strict:
            raise InvalidInput(message + " (--strict: no pack printed)", path=str(memory_dir / "manifest.md"))
        warnings.append(message)

    sections: list = []
    # No ledger folder, no ledger sections: skip importing the ledger tier at all (read is on the hot path).
    if ledger and (memory_dir / "ledger").is_dir():
        from ..ledger.context import ledger_sections

        sections = list(ledger_sections(memory, task=canonical, paths=tuple(touched), query=query,
                                        budgets=dict(manifest.ledger_budgets) or None))
        for s in sections:
            omissions.extend(s.omitted)

    inputs = {"task": task, "paths": touched, "query": query, **requested}
    rendered = render_pack(task, canonical, modules, sections, omissions, names_only=names_only,
                           warnings=[w for w in warnings if not w.startswith("required memory file")])
    return ReadResult(task, canonical, section.heading if section else None, inputs, modules, sections,
                      omissions, warnings, rendered, names_only)


CURATED_FOLDERS = ("", "rules", "profiles", "areas")


def memory_files(memory_dir: Path, folders=CURATED_FOLDERS) -> list[str]:
    """Every `.md` file in the memory folder and the given subfolders, folder by folder, names sorted."""
    import os

    names = []
    for folder in folders:
        directory = memory_dir / folder if folder else memory_dir
        try:
            found = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise unreadable(directory, exc, "folder") from exc
        entries = sorted(e.name for e in found if e.name.endswith(".md") and entry_is_file(e))
        names.extend(f"{folder}/{e}" if folder else e for e in entries)
    return names


def _files_on_disk(memory_dir: Path) -> list[str]:
    """The memory files `read` may route (not the manifest, READMEs or the export mirror)."""
    return [name for name in memory_files(memory_dir)
            if name.rsplit("/", 1)[-1] not in ("manifest.md", "README.md", "MEMORY.md")]


def raise_if_unreadable(path) -> None:
    """For a path `is_file()` said no to: a symlink loop or a permission error is not a missing file."""
    import os

    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise unreadable(path, exc) from exc


def entry_is_file(entry) -> bool:
    """`os.DirEntry.is_file()`, with a symlink loop or a permission error named as one line."""
    try:
        return entry.is_file()
    except OSError as exc:
        raise unreadable(entry.path, exc) from exc


def short_ref(ref: str, width: int = 60) -> str:
    """An omitted entry's name, cut to `width` characters for a one-line listing."""
    return ref if len(ref) <= width else ref[: width - 1].rstrip() + "…"


def render_pack(task: str, canonical: str, modules: list[ModuleResult], sections: list[Section],
                omissions: list[Omission], *, names_only: bool = False, warnings: list[str] = ()) -> str:
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
                warnings: list[str] = ()) -> str:
    """The pack's `## Not loaded` and `## Warnings` blocks ("" when there is nothing to say)."""
    blocks = []
    notes = []
    by_module: dict[tuple[str, str], list[str]] = {}
    for o in omissions:
        by_module.setdefault((o.module, o.reason), []).append(o.ref)
    for (module, reason), refs in by_module.items():
        shown = "; ".join(short_ref(ref) for ref in refs[:FOOTER_REFS]) + (f"; and {len(refs) - FOOTER_REFS} more" if len(refs) > FOOTER_REFS else "")
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
