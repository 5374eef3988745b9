"""`read`: route the curated files for a task, pack each to its budget, add the ledger's sections,
and say out loud everything that was not loaded and why (the result: `context_pack.ReadResult`)."""

from __future__ import annotations

import json
import os
import re
from functools import wraps

from ...base import fsutil
from ...base.errors import LIBRARY_TERMS, CustodianError, InvalidInput, short_line, unreadable
from ...base.fsutil import read_utf8
from ...base.pack_parts import Omission
from ...base.project import require_memory_dir
from ..manifest import globs
from ..manifest.reader import parse_manifest
from ..manifest.routing import MODULE_KINDS, Manifest, canonical_task, manifest_errors
from ..parse.conflicts import ADVICE, marker_line
from ..parse.units import pack, unclosed_fence
from .context_pack import ModuleResult, ReadResult
from .pack_text import LOADED, MISSING_OPTIONAL, MISSING_REQUIRED, OMITTED_BY_BUDGET, SKIPPED, render_pack

_SLUG_RE = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


def _slugs(kind: str, values) -> list[str]:
    result = []
    for value in values or ():
        raw = str(value).strip()
        if raw.startswith(kind + "/"):
            raw = raw[len(kind) + 1:]
        if raw.endswith(".md"):
            raw = raw[:-3]
        if not re.match(_SLUG_RE, raw):
            raise InvalidInput(f"{{field}} {value!r} is not a module name; use a name such as `store` for {kind}/store.md",
                               field=kind)
        result.append(raw)
    return list(dict.fromkeys(result))


def _resolve_inside(memory_dir: str, module: str, manifest: Manifest) -> str:
    """The module's path; refused if a symlink inside the memory folder leads out of it."""
    current = memory_dir
    for part in module.split("/"):
        current = os.path.join(current, part)
        if os.path.islink(current) and not fsutil.inside(fsutil.real_path(current), fsutil.real_path(memory_dir)):
            raise InvalidInput(
                f"route {module} escapes the memory folder through a symlink; replace the link with a real file",
                path=manifest.path,
            )
    return current


def interrupted_write(memory_dir) -> str | None:
    """A sentence for a write journal left by a killed multi-file command, or None (one stat when none)."""
    path = os.path.join(memory_dir, ".cache", "journal.json")
    if not os.path.exists(path):
        return None
    label = "write"
    try:
        with open(path, encoding="utf-8") as handle:
            label = str(json.load(handle).get("label") or label)
    except (OSError, ValueError, AttributeError, RecursionError):
        pass  # an unreadable journal is still a journal: say so with the generic label
    return (f"an interrupted `{label}` left the memory folder half-applied (.cache/journal.json) — run any "
            "write command, e.g. `memory-custodian compact`, to finish it")


def load_manifest(memory_dir) -> Manifest:
    path = os.path.join(memory_dir, "manifest.md")
    return parse_manifest(read_utf8(path), path)


def readable_errors(fn):
    """Any OSError reading the memory folder (a symlink loop, a permission, a folder where a file
    was) becomes one line naming the path, exit 2, not a traceback: for `read`, `check`, `status`."""
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
              names_only: bool = False, strict: bool = False, ledger: bool = True,
              fail_open: bool = False, terms=None) -> ReadResult:
    """The pack. With `fail_open` (the hooks) each part degrades on its own: a curated file or the
    ledger that cannot be read is left out and named in `problems`, never raised. `ledger="cold"`:
    only the directives, read without the index (`ledger.context.cold_sections`). `terms` word what the
    ledger's sections hint at (`errors.Terms`; the library's own by default)."""
    memory_dir = require_memory_dir(memory.memory_dir_str)
    canonical = canonical_task(task)
    requested = {"areas": _slugs("areas", areas), "profiles": _slugs("profiles", profiles), "rules": _slugs("rules", rules)}
    touched = list(dict.fromkeys(globs.normalize_path(p, memory.root_str) for p in paths or ()))
    problems: list[str] = []
    manifest, section, modules, omissions, warnings = None, None, [], [], []
    try:
        manifest = load_manifest(memory_dir)
        section = manifest.task_section(canonical)
        warnings = _manifest_warnings(manifest, memory_dir, canonical, section, fail_open, problems, terms)
        modules = _route(manifest, memory_dir, canonical, section, requested, touched, warnings)
        present = {m.module for m in modules}
        warnings.extend(f"manifest.md: {manifest.unrouted_core_text(name)}" for name in manifest.unrouted_core(present))
        omissions = _load(manifest, memory_dir, modules, warnings, problems if fail_open else None)
    except (CustodianError, OSError) as exc:
        if not fail_open:
            raise
        problems.append(f"curated files: {short_line(exc)}")
    missing = [m.module for m in modules if m.disposition == MISSING_REQUIRED]
    if missing:
        message = f"required memory file(s) missing: {', '.join(missing)} — create them or fix the manifest route"
        if strict:
            raise InvalidInput(message + " ({field}: no pack printed)", path=os.path.join(memory_dir, "manifest.md"),
                               field="strict")
        warnings.append(message)

    sections: list = []
    # No ledger folder, no ledger sections: skip importing the ledger tier at all (read is on the hot path).
    if ledger and os.path.isdir(os.path.join(memory_dir, "ledger")):
        from ...ledger.pack_sections import cold_sections, ledger_sections

        budgets = dict(manifest.ledger_budgets) if manifest is not None else {}
        try:
            if ledger == "cold":
                sections = cold_sections(memory, budgets=budgets or None)
            else:
                sections = list(ledger_sections(memory, task=canonical, paths=tuple(touched), query=query,
                                                budgets=budgets or None, terms=terms or LIBRARY_TERMS))
        except Exception as exc:  # with fail_open any ledger fault is named and the curated tier still goes out
            if not fail_open:
                raise
            sections = _directives_without_index(memory, budgets, exc, ledger == "cold", problems)
        for s in sections:
            omissions.extend(s.omitted)

    inputs = {"task": task, "paths": touched, "query": query, **requested}
    rendered = render_pack(task, canonical, modules, sections, omissions, names_only=names_only,
                           warnings=[w for w in warnings if not w.startswith("required memory file")])
    return ReadResult(task, canonical, section.heading if section else None, inputs, modules, sections,
                      omissions, warnings, rendered, names_only, problems)


# the parts a ledger fault is named under in `ReadResult.problems` (the hooks skip ledger work after one)
LEDGER_PARTS = ("ledger notes:", "ledger index:")


def _directives_without_index(memory, budgets: dict, exc: Exception, was_cold: bool, problems: list) -> list:
    """After a ledger fault, the directives read straight from the shards (they need no index: a
    read-only checkout, a damaged `.cache/`); each fault is named in `problems`."""
    from ...ledger.pack_sections import cold_sections

    if was_cold:
        problems.append(f"ledger notes: {short_line(exc)}")
        return []
    try:
        sections = cold_sections(memory, budgets=budgets or None)
    except Exception as again:  # the shards themselves: nothing of the ledger can go out
        problems.append(f"ledger notes: {short_line(exc)}; directives: {short_line(again)}")
        return []
    problems.append(f"ledger index: {short_line(exc)} — the directives were read from the ledger files; gotchas and "
                    "recall lines are left out")
    return sections


def _manifest_warnings(manifest: Manifest, memory_dir: str, canonical: str, section, fail_open: bool,
                       problems: list, terms=None) -> list[str]:
    """What `read` must say about the manifest itself: look-alike or missing sections, a half-applied
    write, a task without a heading. A manifest error (`routing.manifest_errors`) is raised, or with
    `fail_open` named in `problems` while the routes that parsed still load."""
    errors = manifest_errors(manifest, curated_files(memory_dir), task=canonical)
    if errors and not fail_open:
        _, line, message = errors[0]
        more = f" (and {len(errors) - 1} more — `memory-custodian check` lists them)" if len(errors) > 1 else ""
        raise InvalidInput(message + more, path=manifest.path, line=line)
    problems.extend(f"manifest.md:{line}: {message}" if line else f"manifest.md: {message}" for _, line, message in errors)
    warnings: list[str] = []
    others = [task for task in manifest.unrouted_tasks() if task != canonical]
    if others:  # this task's route is whole; the pack still says what the manifest leaves unrouted
        warnings.append((terms or LIBRARY_TERMS).phrase(
            f"the manifest has no `### ` heading under `## Load by task` for {', '.join(others)}: this pack serves "
            f"{canonical} in full, but {'that task is' if len(others) == 1 else 'those tasks are'} refused — "
            "{verb:check} lists them, {verb:migrate} adds the default routes"))
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
    return warnings


def _route(manifest: Manifest, memory_dir: str, canonical: str, section, requested: dict, touched: list,
           warnings: list) -> list[ModuleResult]:
    """Every module the manifest or the folder knows, in pack order, each loaded or not and why."""
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
    for name in curated_files(memory_dir):
        if name not in considered and not manifest.is_explicit_only(name):
            consider(ModuleResult(name, SKIPPED, "not-routed", detail="no manifest route or index entry names it"))
    return [considered[name] for name in order]


def _load(manifest: Manifest, memory_dir: str, modules: list, warnings: list, problems: list | None) -> list:
    """Read and pack each routed module to its budget (a missing one is marked so); the omissions.
    A file holding conflict markers is refused, or (`problems` given: fail open) left out and named."""
    omissions: list = []
    for result in modules:
        if result.disposition != LOADED:
            continue
        name = result.module
        path = _resolve_inside(memory_dir, name, manifest)
        if not os.path.isfile(path):
            raise_if_unreadable(path)
            result.disposition = MISSING_REQUIRED if result.required else MISSING_OPTIONAL
            result.reason = result.disposition
            continue
        budget = manifest.budget_for(name)
        text = read_utf8(path)
        marker = marker_line(text)
        if marker is not None:
            if problems is None:
                raise InvalidInput(ADVICE, path=path, line=marker)
            problems.append(f"{name}:{marker}: {ADVICE}")
            result.disposition, result.reason, result.detail = SKIPPED, "conflict-markers", f"line {marker}"
            continue
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
            skipped = text[: len(text) - len(text.lstrip())].count("\n")  # pack splits the stripped text
            result.omitted_lines = [line + skipped for _, line in packed.omitted_entries]
            omissions.extend(Omission(name, ref, OMITTED_BY_BUDGET) for ref, _ in packed.omitted_entries)
    return omissions


CURATED_FOLDERS = ("", "rules", "profiles", "areas")


def memory_files(memory_dir, folders=CURATED_FOLDERS) -> list[str]:
    """Every `.md` file in the memory folder and the given subfolders, folder by folder, names sorted."""
    names: list[str] = []
    for folder in folders:
        directory = os.path.join(memory_dir, folder) if folder else memory_dir
        try:
            found = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise unreadable(directory, exc, "folder") from exc
        entries = sorted(e.name for e in found if e.name.endswith(".md") and entry_is_file(e))
        names.extend(f"{folder}/{e}" if folder else e for e in entries)
    return names


def curated_files(memory_dir) -> list[str]:
    """The curated files a manifest may route: every memory file but the manifest, READMEs and the mirror."""
    return [name for name in memory_files(memory_dir)
            if name.rsplit("/", 1)[-1] not in ("manifest.md", "README.md", "MEMORY.md")]


def raise_if_unreadable(path) -> None:
    """For a path `is_file()` said no to: a symlink loop or a permission error is not a missing file."""
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
