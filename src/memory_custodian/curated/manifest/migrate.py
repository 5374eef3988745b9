"""`migrate`: bring a manifest's protocol metadata and routes up to date, never down.

Only what is missing is added (a canonical task section, the module index, the explicit-only
archive, the budget section, index entries for module files that exist on disk); nothing a person
wrote is rewritten, and a manifest from a newer protocol is refused, not downgraded.
"""

from __future__ import annotations

import re

from ... import PROTOCOL_VERSION, __version__
from ...base.errors import InvalidInput
from ..parse.files import curated_files
from ..write import templates
from ..write.entries import changelog_add, today
from ..write.plans import Plan, PlanResult, Reader
from . import index_edit
from .reader import parse_manifest, split_lines
from .routing import TASK_KEYWORDS

PROTOCOL_HEADING = "## MemoryCustodian Protocol"
_VERSION_RE = re.compile(r"^\d+(?:\.\d+)*$")
CANONICAL_ORDER = ("planning", "implementation", "artifact", "preferences", "history", "maintenance")
LEGACY_IMPLEMENTATION = ("### Implementation / execution / debugging\nLoad:\n- constraints.md\n- do-not-use.md\n"
                         "Load if present:\n- preferences.md\n")
CURRENT_IMPLEMENTATION = ("### Implementation / execution / debugging\nLoad:\n- decisions.md\n- constraints.md\n"
                          "- do-not-use.md\nLoad if present:\n- preferences.md\n")


def _version_tuple(value: str) -> tuple[int, ...]:
    parts = tuple(int(p) for p in value.split("."))
    while len(parts) > 1 and parts[-1] == 0:
        parts = parts[:-1]
    return parts


def _template_manifest() -> str:
    return templates.MANIFEST.format(protocol_version=PROTOCOL_VERSION, package_version=__version__)


def _template_task_blocks() -> dict[str, str]:
    """canonical task -> its `### ` block in init's manifest."""
    text = _template_manifest()
    section = text.split("## Load by task", 1)[1].split("\n## ", 1)[0]
    blocks = {}
    for chunk in section.split("\n### ")[1:]:
        block = "### " + chunk.strip("\n")
        heading = split_lines(block)[0].casefold()
        for task in CANONICAL_ORDER:
            if task not in blocks and any(k in heading for k in TASK_KEYWORDS[task]):
                blocks[task] = block
                break
    return blocks


def _template_section(name: str) -> str:
    text = _template_manifest()
    start = text.index(f"## {name}")
    end = text.find("\n## ", start + 3)
    return text[start:end if end != -1 else len(text)].strip("\n")


def _protocol(text: str, path: str) -> tuple[str, list[str]]:
    """The manifest with current protocol metadata, and what changed (empty: already current)."""
    lines = split_lines(text)
    head = next((i for i, line in enumerate(lines) if line.strip().casefold() == PROTOCOL_HEADING.casefold()), None)
    changes: list[str] = []
    if head is None:
        block = [PROTOCOL_HEADING, f"- protocol_version: {PROTOCOL_VERSION}", "- initialized_with: unknown",
                 f"- last_migrated_with: memory-custodian {__version__}", ""]
        first_h2 = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
        lines[first_h2:first_h2] = block
        return "\n".join(lines).rstrip("\n") + "\n", ["add the protocol metadata section"]
    end = next((i for i in range(head + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    fields = {}
    for i in range(head + 1, end):
        m = re.match(r"^- ([A-Za-z_]+):\s*(.*)$", lines[i].strip())
        if m:
            fields[m.group(1)] = (i, m.group(2).strip())
    version = fields.get("protocol_version")
    if version is not None:
        if not _VERSION_RE.match(version[1]):
            raise InvalidInput(f"protocol_version {version[1]!r} is not a version number; fix it by hand (0.5)",
                               path=path, line=version[0] + 1)
        if _version_tuple(version[1]) > _version_tuple(PROTOCOL_VERSION):
            # bad input for this build, as MemoryCustodian 0.9.1 exits 2 on it
            raise InvalidInput(f"protocol {version[1]} is newer than this memory-custodian supports "
                               f"({PROTOCOL_VERSION}) — upgrade memory-custodian; refusing to downgrade",
                               path=path, line=version[0] + 1)
        if version[1] != PROTOCOL_VERSION:
            lines[version[0]] = f"- protocol_version: {PROTOCOL_VERSION}"
            changes.append(f"protocol_version {version[1]} -> {PROTOCOL_VERSION}")
    else:
        lines.insert(head + 1, f"- protocol_version: {PROTOCOL_VERSION}")
        changes.append(f"add protocol_version {PROTOCOL_VERSION}")
        end += 1
    if "initialized_with" not in fields:
        at = next((i for i in range(head + 1, end + 1) if i == len(lines) or not lines[i].startswith("- ")), end)
        lines.insert(at, "- initialized_with: unknown")
        changes.append("add initialized_with")
    return "\n".join(lines).rstrip("\n") + "\n", changes


def _stamp(text: str) -> str:
    lines = split_lines(text)
    head = next(i for i, line in enumerate(lines) if line.strip().casefold() == PROTOCOL_HEADING.casefold())
    label = f"- last_migrated_with: memory-custodian {__version__}"
    for i in range(head + 1, len(lines)):
        if lines[i].startswith("#"):
            break
        if lines[i].strip().startswith("- last_migrated_with:"):
            lines[i] = label
            return "\n".join(lines).rstrip("\n") + "\n"
    at = head + 1
    while at < len(lines) and lines[at].startswith("- "):
        at += 1
    lines.insert(at, label)
    return "\n".join(lines).rstrip("\n") + "\n"


def _routes(text: str, path: str) -> tuple[str, list[str]]:
    changes = []
    if LEGACY_IMPLEMENTATION in text:
        text = text.replace(LEGACY_IMPLEMENTATION, CURRENT_IMPLEMENTATION, 1)
        changes.append("route decisions.md for implementation tasks (protocol 0.5)")
    manifest = parse_manifest(text, path)
    blocks = _template_task_blocks()
    missing = [t for t in CANONICAL_ORDER if manifest.task_section(t) is None]
    if missing:
        lines = split_lines(text)
        start = next((i for i, line in enumerate(lines) if line.strip().casefold() == "## load by task"), None)
        insert = "\n\n".join(blocks[t] for t in missing).splitlines()
        if start is None:
            anchor = next((i for i, line in enumerate(lines) if line.strip().casefold() == "## optional module index"),
                          len(lines))
            lines[anchor:anchor] = ["## Load by task", ""] + insert + [""]
        else:
            end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
            at = end
            while at > start + 1 and not lines[at - 1].strip():
                at -= 1
            lines[at:at] = [""] + insert
        text = index_edit.join_lines(lines)
        changes.extend(f"add the missing {t} task route" for t in missing)
    return text, changes


def _sections(text: str, memory_dir) -> tuple[str, list[str]]:
    changes = []
    names = {line.strip()[3:].strip().casefold() for line in split_lines(text) if line.startswith("## ")}
    if "optional module index" not in names:
        block = _template_section("Optional module index")
        text = index_edit.join_lines(index_edit.insert_section(
            split_lines(text), split_lines(block), ("optional rules", "optional profiles", "area-specific memory",
                                                    "explicit only", "context budget")))
        changes.append("add the optional module index")
    if "explicit only" not in names:
        text = index_edit.explicit_only(text, "archive/")
        changes.append("add the explicit-only archive")
    if "context budget" not in names:
        block = _template_section("Context budget")
        text = text.rstrip("\n") + "\n\n" + block + "\n"
        changes.append("add the context budget section")
    manifest = parse_manifest(text, "manifest.md")
    indexed = {e.module for e in manifest.index}
    for rel in curated_files(memory_dir, include_archive=False):
        folder = rel.split("/", 1)[0]
        if folder in ("rules", "profiles", "areas") and rel.count("/") == 1 and not rel.endswith("README.md") \
                and rel not in indexed:
            text = index_edit.index_entry(text, rel)
            changes.append(f"index {rel}, which exists but was not listed")
    return text, changes


class MigrateResult(PlanResult):
    """A migrate plan: the protocol version it brings the manifest to and the `steps` it takes."""

    protocol_version: str
    steps: list[str]


def build_plan(memory_dir) -> Plan:
    reader = Reader(memory_dir)
    path = reader.path_of("manifest.md")
    text = reader.required("manifest.md")
    new, changes = _protocol(text, path)
    new, more = _routes(new, path)
    changes += more
    new, more = _sections(new, memory_dir)
    changes += more
    out: dict[str, str] = {}
    if changes:
        new = _stamp(new)
        parse_manifest(new, path)
        out["manifest.md"] = new
        changelog = reader.read("changelog.md")
        if changelog is not None:
            out["changelog.md"] = changelog_add(
                changelog, f"Migrated manifest.md to protocol {PROTOCOL_VERSION} with memory-custodian {__version__}.", today())
    lines = [f"manifest.md: {c}" for c in changes] or ["manifest.md is up to date; nothing to migrate"]
    beyond = [c for c in changes if not c.startswith(("add the protocol", "protocol_version", "add protocol_version",
                                                      "add initialized_with"))]
    if beyond:
        lines.append(f"note: {len(beyond)} of these steps go beyond the protocol metadata MemoryCustodian 0.9.1's "
                     "migrate writes: they change what `read` loads, and `check` stops reporting the routes and "
                     "budgets they add — review them in the diff")
    if "changelog.md" in out:
        lines.append("changelog.md: record the migration")
    return Plan(
        command="migrate",
        changes=[reader.change(r, n) for r, n in sorted(out.items())],
        inputs=dict(reader.digests),
        lines=lines,
        details={"protocol_version": PROTOCOL_VERSION, "steps": changes},
    )
