"""What `init` writes: the protocol 0.5 files, in the shape MemoryCustodian 0.9.1 reads unchanged."""

from __future__ import annotations

import re

from ... import PROTOCOL_VERSION, __version__

CORE_FILES = ("manifest.md", "brief.md", "decisions.md", "constraints.md", "do-not-use.md", "inbox.md")
EXTENDED_FILES = ("preferences.md", "changelog.md", "rules/README.md", "profiles/README.md", "archive/README.md")

MANIFEST = """\
# Memory Manifest

Loading map for local project memory. Load only the files listed for the current task plus explicitly requested optional modules.

## MemoryCustodian Protocol
- protocol_version: {protocol_version}
- initialized_with: memory-custodian {package_version}
- last_migrated_with: memory-custodian {package_version}

## Always load
- brief.md

## Load by task

### Planning / architecture / refactoring
Load:
- decisions.md
- constraints.md
- do-not-use.md

### Implementation / execution / debugging
Load:
- decisions.md
- constraints.md
- do-not-use.md
Load if present:
- preferences.md

### User-facing artifact / output
Load:
- do-not-use.md
Load if present:
- rules/output.md
- preferences.md

### Preferences
Load if present:
- preferences.md

### Change history / recap
Load:
- decisions.md
Load if present:
- changelog.md

### Memory maintenance
Load:
- inbox.md
- do-not-use.md
Load if present:
- changelog.md

## Optional module index
Discover optional memory without loading it. Entries here are not default loads.
An area entry may carry a nested `paths:` line of globs; it then loads whenever a touched path matches.

### Enabled rules
- None enabled.

### Enabled profiles
- None enabled.

### Enabled areas
- None enabled.

## Optional rules
`rules/` files load only when listed above and the task clearly matches.

## Optional profiles
`profiles/` files load only when listed above and the workflow clearly matches.

## Area-specific memory
`areas/` files load only when listed above and the touched files or task scope match.

## Explicit only
- archive/

## Context budget
- brief.md: 500 tokens max
- decisions.md: 800 tokens max
- constraints.md: 400 tokens max
- do-not-use.md: 400 tokens max
- preferences.md: 300 tokens max, if present
- rules/*.md: 400 tokens max per file, if present
- profiles/*.md: 500 tokens max per file, if present
- areas/*.md: 600 tokens max per file, if present
- changelog.md: 800 tokens max, if present
- inbox.md: memory maintenance only
- archive/: explicit only
- ledger directives: 800 tokens max
- ledger gotchas: 400 tokens max
- ledger recall: 300 tokens max
"""

FILES = {
    "manifest.md": MANIFEST,
    "brief.md": """\
# Project Brief

This project keeps its durable memory as plain text in `{memory_dir}`, managed with memory-custodian.

Current status:
- Replace this paragraph with what the project is, who it is for, and where it is going.
- Durable memory lives in `{memory_dir}`; agent entry files stay short and point here.

Default behavior:
- Load `manifest.md`, then `brief.md`, then only what the task routes to.
""",
    "decisions.md": """\
# Decisions

Entries are newest first.

## {date} - Keep project memory in the repository
Decision:
Keep durable project memory as Markdown under `{memory_dir}`, reviewed in pull requests like code.
Reason:
Memory should be inspectable, diffable, portable, and reusable across agents.
""",
    "constraints.md": """\
# Constraints

- Store durable project memory in `{memory_dir}`.
- Keep AGENTS.md, CLAUDE.md, and GEMINI.md short; they point to this folder.
""",
    "do-not-use.md": """\
# Do Not Use / Tombstones

Tombstones are newest first.

## Tombstone: Full memory in platform entry files
Do not copy full memory into AGENTS.md, CLAUDE.md, GEMINI.md, or similar files. They should stay thin bootstraps that point to `{memory_dir}`.
""",  # noqa: E501  # the file `init` writes, line for line: an entry is one line of its Markdown
    "inbox.md": """\
# Memory Inbox

Entries are newest first.

No unprocessed memory candidates.
""",
    "preferences.md": """\
# Preferences

Soft user or project preferences go here. Hard requirements belong in `constraints.md`.
""",
    # the optional files in MemoryCustodian 0.9.1's wording (MIT; see tests/fixtures/memorycustodian/)
    "changelog.md": """\
# Memory Changelog

Entries are newest first.

## {date}
- Enabled MemoryCustodian changelog.
""",
    "rules/README.md": """\
# Memory Rules

Task-specific rules go here. Create one file per rule type, such as:
- `output.md`
- `code-style.md`
- `safety.md`
- `review.md`

Load a rule file only when the current task clearly matches it.
""",
    "profiles/README.md": """\
# Memory Profiles

Workflow-specific profiles go here. Create one file per workflow, such as:
- `git.md`
- `docs.md`
- `release.md`
- `tickets.md`
- `research.md`

Load a profile file only when the current task clearly matches it.
""",
    "archive/README.md": """\
# Memory Archive

Old or raw memory material may be archived here.

Do not load archive files unless the user explicitly asks or the task is memory maintenance.
""",
}


def render(name: str, *, date: str, memory_dir: str) -> str:
    return FILES[name].format(
        date=date, memory_dir=memory_dir, package_version=__version__, protocol_version=PROTOCOL_VERSION
    )


# What our manifest template adds to MemoryCustodian 0.9.1's; without these lines, and whatever
# versions its protocol section names, a manifest is the template 0.9.1's `init` writes.
OWN_MANIFEST_LINES = (
    "An area entry may carry a nested `paths:` line of globs; it then loads whenever a touched path matches.",
    "- ledger directives: 800 tokens max",
    "- ledger gotchas: 400 tokens max",
    "- ledger recall: 300 tokens max",
)
# The lines that mark a brief as a template: 0.9.1's three `TODO:` lines, ours, and the sentence
# of MemoryCustodian's brief before 0.7.
TEMPLATE_BRIEF_MARKERS = (
    "TODO: Describe what this project does and who it serves.",
    "TODO: Describe the current product or engineering priorities.",
    "TODO: Name the runtime, architecture, and external boundaries that matter across tasks.",
    "Replace this paragraph with what the project is",
    "This project uses MemoryCustodian to maintain local, plain-text project memory.",
)
# 0.9.1's core files as its `init` writes them, where they differ from ours (no example entry)
EMPTY_CORE = {
    "decisions.md": "# Decisions\n\nEntries are newest first.\n",
    "constraints.md": "# Constraints\n",
    "do-not-use.md": "# Do Not Use / Tombstones\n\nTombstones are newest first.\n",
}


def brief_is_template(text: str | None) -> bool:
    return text is not None and any(marker in text for marker in TEMPLATE_BRIEF_MARKERS)


def is_091_template(name: str, text: str) -> bool:
    """Whether `text` is what MemoryCustodian 0.9.1's `init` writes for `name` (any version, any day)."""
    if name == "brief.md":
        return text.startswith("# Project Brief") and text.count("TODO:") >= 3
    if name in EMPTY_CORE:
        return text.strip() == EMPTY_CORE[name].strip()
    if name == "manifest.md":
        ours = [line for line in FILES["manifest.md"].split("\n") if line not in OWN_MANIFEST_LINES]
        versioned = re.compile(r"^(- (?:initialized_with|last_migrated_with): memory-custodian) \S+$")
        theirs = [versioned.sub(r"\1 {package_version}", line) for line in text.strip().split("\n")]
        theirs = [line.replace("- protocol_version: 0.5", "- protocol_version: {protocol_version}") for line in theirs]
        return theirs == "\n".join(ours).strip().split("\n")
    if name in FILES:
        dated = re.sub(r"\d{4}-\d{2}-\d{2}", "{date}", text.strip())
        return dated == FILES[name].strip()
    return False
