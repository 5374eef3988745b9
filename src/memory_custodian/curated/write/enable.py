"""`enable MODULE`: create an optional module and make the manifest know it, idempotently.

Never overwrites a file that exists; run twice, the second run writes nothing.
"""

from __future__ import annotations

from ...base.errors import InvalidInput
from ...base.secrets import refuse_secrets
from ..manifest import globs, index_edit
from ..manifest.reader import parse_manifest
from .entries import changelog_add, module_template, safe_name
from .plans import Plan, PlanResult, Reader

SIMPLE = {
    "preferences": ("preferences.md", "- preferences.md: 300 tokens max, if present"),
    "changelog": ("changelog.md", "- changelog.md: 800 tokens max, if present"),
    "rules": ("rules/README.md", "- rules/*.md: 400 tokens max per file, if present"),
    "profiles": ("profiles/README.md", "- profiles/*.md: 500 tokens max per file, if present"),
    "archive": ("archive/README.md", None),
}
FOLDER_BUDGETS = {
    "rules": "- rules/*.md: 400 tokens max per file, if present",
    "profiles": "- profiles/*.md: 500 tokens max per file, if present",
    "areas": "- areas/*.md: 600 tokens max per file, if present",
}
ROUTE_KEYWORDS = {
    "preferences.md": ("preference",),
    "changelog.md": ("change history", "recap", "memory maintenance"),
}
VALID = ("preferences, changelog, rules, profiles, archive, rules/NAME, profiles/NAME or areas/NAME "
         "(rule/NAME, profile/NAME and area/NAME too)")
SINGULAR = {"rule": "rules", "profile": "profiles", "area": "areas"}


def parse_module(module: str) -> tuple[str, str]:
    """('simple', key) or (folder, 'folder/name.md')."""
    raw = (module or "").strip().strip("/")
    if raw.endswith(".md") and "/" not in raw:
        raw = raw[:-3]
    if raw in SIMPLE:
        return "simple", raw
    folder, sep, name = raw.partition("/")
    folder = SINGULAR.get(folder, folder)  # `enable profile/git`, as MemoryCustodian 0.9.1's help writes it
    if sep and folder in ("rules", "profiles", "areas"):
        return folder, f"{folder}/{safe_name(name, folder[:-1])}.md"
    raise InvalidInput(f"cannot enable {module!r}; use one of: {VALID}")


def module_edits(text: str, module: str, paths: tuple[str, ...] = (), description: str | None = None) -> str:
    """The manifest with `module` (rules/x.md, profiles/x.md, areas/x.md) indexed and budgeted."""
    folder = module.split("/", 1)[0]
    text = index_edit.index_entry(text, module, description, paths)
    return index_edit.budget_line(text, f"{folder}/*.md", FOLDER_BUDGETS[folder])


class EnableResult(PlanResult):
    """An enabled module and the paths that route to it (areas only)."""

    module: str
    paths: list[str]


def build_plan(memory_dir, module: str, paths_given: list[str], date: str, memory_rel: str) -> Plan:
    kind, key = parse_module(module)
    paths = tuple(dict.fromkeys(globs.validate_glob(p.strip()) for p in paths_given or ()))
    for path in paths:  # a path glob is written into manifest.md, so it is a door like any text
        refuse_secrets(path, "the path")
    if paths and kind != "areas":
        raise InvalidInput("{field} applies to areas only, such as: enable areas/store {field} 'src/store/**'",
                           field="paths")
    reader = Reader(memory_dir)
    manifest_text = reader.required("manifest.md")
    parse_manifest(manifest_text, reader.path_of("manifest.md"))
    out: dict[str, str] = {}
    lines: list[str] = []
    if kind == "simple":
        rel, budget = SIMPLE[key]
        manifest = manifest_text
        if budget:
            manifest = index_edit.budget_line(manifest, budget[2:].split(":", 1)[0], budget)
        if rel in ROUTE_KEYWORDS:
            manifest = index_edit.task_route(manifest, ROUTE_KEYWORDS[rel], rel)
        if key == "archive":
            manifest = index_edit.explicit_only(manifest, "archive/")
    else:
        rel = key
        manifest = module_edits(manifest_text, rel, paths)
    if reader.read(rel) is None:
        out[rel] = module_template(rel, date, memory_rel)
        lines.append(f"{rel}: create")
    if manifest != manifest_text:
        parse_manifest(manifest, reader.path_of("manifest.md"))
        out["manifest.md"] = manifest
        lines.append("manifest.md: " + ("index it" + (f" with paths {', '.join(paths)}" if paths else "")
                                        if kind != "simple" else "route and budget it"))
    changelog = out.get("changelog.md", reader.read("changelog.md"))
    if out and changelog is not None and rel != "changelog.md":
        out["changelog.md"] = changelog_add(changelog, f"Enabled {rel}.", date)
        lines.append("changelog.md: record it")
    if not out:
        lines.append(f"{rel} is already enabled; nothing changed")
    return Plan(
        command=f"enable {rel} {' '.join(paths)}",
        changes=[reader.change(r, new) for r, new in sorted(out.items())],
        inputs=dict(reader.digests),
        lines=lines,
        details={"module": rel, "paths": list(paths)},
    )
