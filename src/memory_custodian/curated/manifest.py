"""The manifest: the one routing authority of the curated tier (MemoryCustodian protocol 0.5).

We read manifests exactly as MemoryCustodian 0.9.1 writes them, and go a little further:

- `## Always load`: bullets of files loaded for every task.
- `## Load by task`: `### ` headings matched by keyword to a canonical task (see TASK_KEYWORDS);
  under each, `Load:` / `Also load:` start required bullets and `Load if present:` optional ones
  (bullets before any of these lines are required). Bullets naming a folder (`archive/`) are
  skipped, as in 0.9.1.
- `## Optional module index`: `### Enabled rules|profiles|areas` subsections with entries
  ``- `areas/store.md`: what it holds``. An entry may carry nested metadata lines:
  ``  - paths: `src/store/**`, `tests/test_store*.py` `` (areas: load when a touched path
  matches), ``  - tasks: planning, implementation`` (rules: load for those tasks),
  ``  - activation: explicit-only`` (never routed automatically), ``  - description: …``.
- `## Explicit only`: files or folders (`archive/`) that routing never loads on its own (only a
  route naming a file loads it, as in 0.9.1); explain lists them as excluded.
- `## Context budget`: ``- decisions.md: 800 tokens max`` overrides a default budget;
  ``- rules/*.md: 400 tokens max per file`` (or ``- rules/: …``) applies to every match, exact
  names first, then globs and folders in manifest order; ``- decisions.md: unbudgeted``
  removes the budget; the ledger's sections are budgeted as ``- ledger directives: 600 tokens max``
  (names in LEDGER_SECTIONS). Other notes (``- inbox.md: memory maintenance only``) are kept as
  text and change nothing.

Anything malformed raises InvalidInput naming the manifest line and what is wrong: an indented
line under a module entry that looks like metadata but is not written as above (a tab or one space,
`Paths:`, `paths =`, a `+` bullet), and a budget that is neither `N tokens max`, `unbudgeted` nor a
note without numbers. Lines are counted on `\n` only, as everywhere else in the tool. A whole
manifest file (`complete=True`) must also have `## Always load` and `## Load by task`.
"""

from __future__ import annotations

import re

from ..errors import InvalidInput
from . import globs

CANONICAL_TASKS = ("general", "planning", "implementation", "artifact", "preferences", "history", "maintenance")

TASK_ALIASES = {
    "general": "general",
    "default": "general",
    "planning": "planning",
    "architecture": "planning",
    "refactoring": "planning",
    "implementation": "implementation",
    "execution": "implementation",
    "debugging": "implementation",
    "artifact": "artifact",
    "output": "artifact",
    "preferences": "preferences",
    "history": "history",
    "recap": "history",
    "status": "history",
    "maintenance": "maintenance",
    "compact": "maintenance",
    "forget": "maintenance",
}

# A `### ` heading under `## Load by task` serves a task when it contains one of these (casefolded).
TASK_KEYWORDS = {
    "general": (),
    "planning": ("planning", "architecture", "refactoring"),
    "implementation": ("implementation", "execution", "debugging"),
    "artifact": ("artifact", "user-facing", "output"),
    "preferences": ("preference",),
    "history": ("change history", "project recap", "history", "recap"),
    "maintenance": ("memory maintenance", "maintenance"),
}

# MemoryCustodian 0.9.1's defaults; inbox.md and manifest.md are unbudgeted.
DEFAULT_BUDGETS = {
    "brief.md": 500,
    "decisions.md": 800,
    "constraints.md": 400,
    "do-not-use.md": 400,
    "preferences.md": 300,
    "changelog.md": 800,
}
DEFAULT_FOLDER_BUDGETS = {"rules": 400, "profiles": 500, "areas": 600}
MODULE_KINDS = ("rules", "profiles", "areas")
LEDGER_SECTIONS = ("directives", "gotchas", "recall")
ACTIVATIONS = ("explicit-only", "task", "task-or-explicit", "path", "path-or-explicit")

# Patterns as strings: `re` compiles (and caches) only the ones a manifest actually needs; the
# lines every manifest has are read with plain string operations (start-up time of `read`).
_INDEX_ENTRY_RE = r"^- `?([^`\s:]+\.md)`?\s*(?:[:\u2013\u2014-]\s*(.*))?$"
_META_RE = r"^\s{2,}[-*] ([a-z_-]+):\s*(.*)$"
# What a metadata line looks like when it is written wrong: an optional bullet, one word, `:` or `=`.
_META_SHAPE_RE = r"^(?:[-*+]\s*)?([A-Za-z][A-Za-z_-]*)\s*([:=])(.*)$"
META_KEYS = ("paths", "tasks", "activation", "description")
ROUTING_SECTIONS = ("always load", "load by task")
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_SEGMENT_FIRST = _ASCII_ALNUM | {"_"}
_SEGMENT_CHARS = _ASCII_ALNUM | {"_", ".", "-"}
_WORD = _ASCII_ALNUM | {"_"}


def _safe_segment(part: str) -> bool:
    return bool(part) and part[0] in _SEGMENT_FIRST and all(ch in _SEGMENT_CHARS for ch in part)


def _has_drive(raw: str) -> bool:
    return len(raw) >= 2 and raw[1] == ":" and raw[0] in _ASCII_ALNUM and raw[0].isalpha()


def _bullet_path(stripped: str) -> str | None:
    """`- name` or ``- `name` `` -> name; None unless it is exactly one word."""
    if not stripped.startswith("- "):
        return None
    body = stripped[2:].rstrip()
    if body.startswith("`"):
        body = body[1:]
    if body.endswith("`"):
        body = body[:-1]
    if not body or "`" in body or any(ch.isspace() for ch in body):
        return None
    return body


def _field(stripped: str) -> tuple[str, str] | None:
    """`- key: value` -> (key, value); the key runs to the first colon."""
    if not stripped.startswith("- "):
        return None
    key, sep, value = stripped[2:].partition(":")
    if not sep or not key:
        return None
    return key, value.lstrip()


def _budget_amount(value: str) -> int | None:
    """`800 tokens max[…]` -> 800 (case-insensitive), else None."""
    parts = value.split(None, 2)
    if len(parts) < 3 or not (parts[0].isascii() and parts[0].isdigit()):
        return None
    if parts[1].casefold() not in ("token", "tokens") or not parts[2][:3].casefold() == "max":
        return None
    if len(parts[2]) > 3 and parts[2][3] in _WORD:
        return None
    return int(parts[0])


def canonical_task(name: str) -> str:
    """The canonical task for `name` (any alias, any case), or InvalidInput naming the valid ones."""
    canonical = TASK_ALIASES.get(str(name).strip().casefold())
    if canonical is None:
        aliases = ", ".join(sorted(k for k in TASK_ALIASES if k not in CANONICAL_TASKS))
        raise InvalidInput(
            f"unknown task {name!r}; use one of: {', '.join(CANONICAL_TASKS)} (aliases: {aliases})"
        )
    return canonical


def validate_route_path(value: str) -> str:
    """A route target must be a relative `.md` path inside the memory folder; returns it normalised."""
    raw = value.strip()
    if not raw:
        raise InvalidInput("empty route path")
    if "\\" in raw or raw.startswith("/") or _has_drive(raw):
        raise InvalidInput(f"route {raw!r} must be a relative path inside the memory folder, with '/' separators")
    parts = raw.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise InvalidInput(f"route {raw!r} must not contain empty, '.' or '..' segments")
    if not all(_safe_segment(part) for part in parts):
        raise InvalidInput(f"route {raw!r} has unsafe characters; use letters, digits, '.', '_' and '-'")
    if not raw.endswith(".md"):
        raise InvalidInput(f"route {raw!r} must name a .md file")
    return raw


# Plain slotted classes, not dataclasses: see units.py (start-up time of `read`).


class Route:
    __slots__ = ("module", "required", "line")

    def __init__(self, module: str, required: bool, line: int):
        self.module = module
        self.required = required
        self.line = line

    def __repr__(self) -> str:
        return f"Route({self.module!r}, required={self.required}, line={self.line})"


class TaskSection:
    __slots__ = ("heading", "line", "routes")

    def __init__(self, heading: str, line: int, routes: list | None = None):
        self.heading = heading
        self.line = line
        self.routes: list[Route] = routes if routes is not None else []


class IndexEntry:
    """One `### Enabled rules|profiles|areas` entry of the module index, with its metadata."""

    __slots__ = ("module", "kind", "line", "description", "paths", "tasks", "activation")

    def __init__(self, module: str, kind: str, line: int, description: str = "", paths: tuple = (),
                 tasks: tuple = (), activation: str | None = None):
        self.module = module
        self.kind = kind  # rules | profiles | areas
        self.line = line
        self.description = description
        self.paths: tuple[str, ...] = paths
        self.tasks: tuple[str, ...] = tasks
        self.activation = activation

    def __repr__(self) -> str:
        return f"IndexEntry({self.module!r}, paths={self.paths}, tasks={self.tasks}, activation={self.activation!r})"

    @property
    def slug(self) -> str:
        name = self.module.rsplit("/", 1)[-1]
        return name[:-3] if name.endswith(".md") else name

    @property
    def auto_path(self) -> bool:
        return bool(self.paths) and self.activation not in ("explicit-only", "task", "task-or-explicit")

    @property
    def auto_task(self) -> bool:
        return bool(self.tasks) and self.activation not in ("explicit-only", "path", "path-or-explicit")


class BudgetEntry:
    """One `## Context budget` line. `tokens` None is a note (no override) unless `unbudgeted`."""

    __slots__ = ("key", "tokens", "line", "note", "unbudgeted")

    def __init__(self, key: str, tokens: int | None, line: int, note: str = "", unbudgeted: bool = False):
        self.key = key
        self.tokens = tokens
        self.line = line
        self.note = note
        self.unbudgeted = unbudgeted

    @property
    def overrides(self) -> bool:
        return self.tokens is not None or self.unbudgeted


class Manifest:
    """A parsed manifest. Everything keeps its source line, so findings can point at it."""

    __slots__ = ("path", "always", "task_sections", "index", "explicit_only", "budgets", "ledger_budgets",
                 "metadata", "sections", "warnings", "lookalikes")

    def __init__(self, path: str):
        self.path = path
        self.always: list[Route] = []
        self.task_sections: list[TaskSection] = []
        self.index: list[IndexEntry] = []
        self.explicit_only: list[str] = []
        self.budgets: list[BudgetEntry] = []
        self.ledger_budgets: dict[str, int] = {}  # ledger section name -> tokens
        self.metadata: dict[str, str] = {}  # `## MemoryCustodian Protocol` fields
        self.sections: list[tuple[str, int]] = []  # H2 headings (casefolded) and lines
        self.lookalikes: list[tuple[int, str, str, str]] = []  # (line, heading, imitated section, U+XXXX)
        self.warnings: list[tuple[int, str]] = []  # (line, message) for lines that were ignored

    def task_section(self, task: str) -> TaskSection | None:
        """The first `### ` task heading serving `task` (any alias), as 0.9.1 picks it."""
        keywords = TASK_KEYWORDS[canonical_task(task)]
        for section in self.task_sections:
            heading = section.heading.casefold()
            if any(keyword in heading for keyword in keywords):
                return section
        return None

    def routes_for(self, task: str) -> list[Route]:
        """Always-load then the task's routes; a name listed twice keeps its first place, required if any is."""
        section = self.task_section(task)
        merged: dict[str, Route] = {}
        for route in [*self.always, *(section.routes if section else [])]:
            seen = merged.get(route.module)
            if seen is None:
                merged[route.module] = Route(route.module, route.required, route.line)
            elif route.required:
                seen.required = True
        return list(merged.values())

    def all_routed_modules(self) -> list[str]:
        names = [r.module for r in self.always]
        for section in self.task_sections:
            names.extend(r.module for r in section.routes)
        return list(dict.fromkeys(names))

    def index_entry(self, module: str) -> IndexEntry | None:
        for entry in self.index:
            if entry.module == module:
                return entry
        return None

    def is_explicit_only(self, module: str) -> bool:
        for item in self.explicit_only:
            if module == item or (item.endswith("/") and module.startswith(item)):
                return True
        return False

    def budget_entry(self, module: str) -> BudgetEntry | None:
        for entry in self.budgets:
            if entry.overrides and entry.key == module:
                return entry
        for entry in self.budgets:
            if not entry.overrides:
                continue
            if any(ch in entry.key for ch in "*?") and globs.glob_match(entry.key, module):
                return entry
            if entry.key.endswith("/") and module.startswith(entry.key):
                return entry
        return None

    def budget_for(self, module: str) -> int | None:
        entry = self.budget_entry(module)
        if entry is not None:
            return entry.tokens
        return default_budget(module)

    def missing_sections(self) -> list[tuple[str, int | None, str]]:
        """(section, line, message) for each routing section a whole manifest lacks.

        `line` is a heading that nearly names it (`## Always load:`), else None.
        """
        present = {name for name, _ in self.sections}
        imitated = {known for _, _, known, _ in self.lookalikes}
        out = []
        for name in ROUTING_SECTIONS:
            if name in present:
                continue
            title = SECTION_TITLES[name]
            near = next((line for heading, line in self.sections if _near_miss(heading) == name), None)
            if name in imitated:  # `lookalikes` names the heading and its line
                out.append((name, None, f"no `## {title}` section, only a look-alike heading, so its lines are "
                                        "ignored; retype the heading"))
            elif near is not None:
                out.append((name, near, f"this heading is not `## {title}` (an unknown section whose lines are "
                                        f"ignored); write it exactly `## {title}`"))
            elif name == "always load":
                out.append((name, None, "no `## Always load` section, so no file is loaded for every task; "
                                        "add it with `- brief.md` under it (`memory-custodian init` shows the layout)"))
            else:
                out.append((name, None, "no `## Load by task` section, so no task loads anything; add it "
                                        "(`memory-custodian migrate` adds the default task routes)"))
        return out


def default_budget(module: str) -> int | None:
    folder = module.split("/", 1)[0] if "/" in module else ""
    if folder in DEFAULT_FOLDER_BUDGETS:
        return DEFAULT_FOLDER_BUDGETS[folder]
    return DEFAULT_BUDGETS.get(module)


def budget_for(module: str, manifest: Manifest | None = None) -> int | None:
    """The token budget of `module`: the manifest's override if any, else MemoryCustodian's default."""
    return manifest.budget_for(module) if manifest is not None else default_budget(module)


# ---- parsing -------------------------------------------------------------------------------

_SINGLE_SECTIONS = ("always load", "load by task", "optional module index", "explicit only", "context budget",
                    "memorycustodian protocol")
# Every `## ` heading MemoryCustodian writes; others are a person's prose and are left alone.
KNOWN_SECTIONS = _SINGLE_SECTIONS + ("optional rules", "optional profiles", "area-specific memory")
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
# Latin look-alikes from Cyrillic and Greek, enough to unmask a heading that reads like ours.
_CONFUSABLES = str.maketrans("АВЕКМНОРСТХаеорсухіјԁΑΒΕΖΗΙΚΜΝΟΡΤΥΧοᴏ", "ABEKMHOPCTXaeopcyxijdABEZHIKMNOPTYXoo")


SECTION_TITLES = {
    "memorycustodian protocol": "MemoryCustodian Protocol", "always load": "Always load", "load by task": "Load by task",
    "optional module index": "Optional module index", "explicit only": "Explicit only", "context budget": "Context budget",
    "optional rules": "Optional rules", "optional profiles": "Optional profiles", "area-specific memory": "Area-specific memory",
}


def _near_miss(heading: str) -> str:
    """A casefolded `## ` heading without trailing punctuation and with `-`/`_` read as spaces."""
    return " ".join(heading.rstrip(":.;").replace("-", " ").replace("_", " ").split())


def split_lines(text: str) -> list[str]:
    """Lines split on `\n` only (a trailing `\r` dropped): `str.splitlines` also splits on U+2028,
    U+0085, form feeds and more, which would number lines unlike every editor and the rest of the tool."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def lookalike_of(heading: str) -> tuple[str, str] | None:
    """(known section, first odd character as U+XXXX) if a non-ASCII `heading` imitates one of ours."""
    if heading.isascii():
        return None
    import unicodedata

    plain = unicodedata.normalize("NFKC", heading.translate(_INVISIBLE)).translate(_CONFUSABLES)
    plain = " ".join(plain.split()).casefold()
    if plain not in KNOWN_SECTIONS:
        return None
    odd = next(ch for ch in heading if not ch.isascii())
    return plain, f"U+{ord(odd):04X}"


def parse_manifest(text: str, path: str = "manifest.md", *, complete: bool = False) -> Manifest:
    """Parse manifest text. `complete=True`: the text is a whole manifest.md, which is unusable (and
    refused, naming the missing sections) without `## Always load` and `## Load by task`."""
    from .units import fence_mask

    manifest = Manifest(path=str(path))
    lines = split_lines(text)
    mask, unclosed = fence_mask(lines) if ("```" in text or "~~~" in text) else ([False] * len(lines), None)
    if unclosed is not None:
        raise InvalidInput("code fence is never closed; close it with a matching ``` line", path=str(path), line=unclosed)

    def fail(lineno: int, message: str):
        raise InvalidInput(message, path=str(path), line=lineno)

    h2: str | None = None
    h3: str | None = None
    task: TaskSection | None = None
    required = True
    entry: IndexEntry | None = None
    entry_kind: str | None = None
    seen_h2: set[str] = set()
    seen_kinds: set[str] = set()

    for number, line in enumerate(lines, start=1):
        if mask[number - 1]:
            continue
        stripped = line.strip()
        if line.startswith("## "):
            h2 = line[3:].strip().strip("#").strip().casefold()
            h3, task, entry, entry_kind = None, None, None, None
            if h2 in _SINGLE_SECTIONS and h2 in seen_h2:
                fail(number, f"duplicate `## {line[3:].strip()}` section; merge it into the first one")
            seen_h2.add(h2)
            manifest.sections.append((h2, number))
            fake = lookalike_of(line[3:].strip())
            if fake is not None:
                manifest.lookalikes.append((number, line[3:].strip(), fake[0], fake[1]))
            continue
        if line.startswith("# "):
            h2 = h3 = None
            task = entry = None
            continue
        if line.startswith("### "):
            h3 = line[4:].strip().strip("#").strip()
            entry = None
            if h2 == "load by task":
                task = TaskSection(h3, number)
                required = True
                manifest.task_sections.append(task)
            elif h2 == "optional module index":
                entry_kind = {"enabled rules": "rules", "enabled profiles": "profiles",
                              "enabled areas": "areas"}.get(h3.casefold())
                if entry_kind is None:
                    fail(number, f"unknown module index subsection {h3!r}; use Enabled rules, Enabled profiles or Enabled areas")
                if entry_kind in seen_kinds:
                    fail(number, f"duplicate `### {h3}` subsection; merge it into the first one")
                seen_kinds.add(entry_kind)
            continue
        if not stripped or h2 is None:
            continue

        if h2 == "always load":
            if stripped.startswith("- "):
                name = _route_name(stripped, number, fail)
                if name is not None:
                    manifest.always.append(Route(name, True, number))
            else:
                manifest.warnings.append((number, "text under `## Always load` is ignored; list files as `- file.md`"))
        elif h2 == "load by task":
            lowered = stripped.casefold()
            if lowered in ("load:", "also load:"):
                required = True
            elif lowered == "load if present:":
                required = False
            elif stripped.startswith("- "):
                if task is None:
                    fail(number, "route bullet outside a task heading; put it under a `### Planning / ...` heading")
                name = _route_name(stripped, number, fail)
                if name is not None:
                    task.routes.append(Route(name, required, number))
            else:
                manifest.warnings.append((number, f"ignored line under `## Load by task`: {stripped[:60]!r}"))
        elif h2 == "optional module index":
            _index_line(manifest, line, stripped, number, entry_kind, fail)
            entry = manifest.index[-1] if manifest.index else None
        elif h2 == "explicit only":
            if stripped.startswith("- "):
                target = stripped[2:].strip().strip("`")
                if target.startswith("/") or ".." in target.split("/") or "\\" in target:
                    fail(number, f"explicit-only entry {target!r} must be a relative path inside the memory folder")
                manifest.explicit_only.append(target)
        elif h2 == "context budget":
            if stripped.startswith("- "):
                _budget_line(manifest, stripped, number, fail)
        elif h2 == "memorycustodian protocol":
            field = _field(stripped)
            if field:
                manifest.metadata[field[0].strip()] = field[1].strip()
    del entry
    if complete:
        # a look-alike heading is left to the caller, which warns about it (`lookalikes`)
        imitated = {known for _, _, known, _ in manifest.lookalikes}
        missing = [m for m in manifest.missing_sections() if m[0] not in imitated]
        if missing:
            if len(missing) == 2 and missing[0][1] is None and missing[1][1] is None:
                raise InvalidInput(
                    "no `## Always load` and no `## Load by task` section, so nothing can be loaded; add them, or "
                    "move this file aside and run `memory-custodian init` to write a fresh manifest", path=str(path))
            _, line, message = missing[0]
            raise InvalidInput(message, path=str(path), line=line)
    return manifest


def _route_name(stripped: str, number: int, fail) -> str | None:
    name = _bullet_path(stripped)
    if name is None:
        fail(number, f"route bullet {stripped!r} must name one file, such as `- decisions.md`")
    if name.endswith("/"):
        return None  # a folder is a pointer, never a load (0.9.1 skips these too)
    try:
        return validate_route_path(name)
    except InvalidInput as exc:
        fail(number, exc.message)


def _index_line(manifest: Manifest, line: str, stripped: str, number: int, kind: str | None, fail) -> None:
    meta = re.match(_META_RE, line) if line[:1].isspace() else None
    if meta and line[:1].isspace():
        entry = manifest.index[-1] if manifest.index and manifest.index[-1].kind == kind else None
        if entry is None:
            fail(number, "module metadata line without a module entry above it")
        key, value = meta.group(1), meta.group(2).strip()
        if key == "paths":
            items = [item.strip().strip("`").strip() for item in value.split(",")]
            if not value or not all(items):
                fail(number, "paths: needs comma-separated globs, such as `src/store/**`, `tests/test_store*.py`")
            try:
                entry.paths = tuple(dict.fromkeys(globs.validate_glob(item) for item in items))
            except InvalidInput as exc:
                fail(number, exc.message)
        elif key == "tasks":
            items = [item.strip().strip("`") for item in value.split(",")]
            try:
                entry.tasks = tuple(dict.fromkeys(canonical_task(item) for item in items))
            except InvalidInput as exc:
                fail(number, exc.message)
        elif key == "activation":
            if value not in ACTIVATIONS:
                fail(number, f"activation {value!r} is not one of: {', '.join(ACTIVATIONS)}")
            entry.activation = value
        elif key == "description":
            entry.description = value
        else:
            fail(number, f"unknown module metadata {key!r}; use paths, tasks, activation or description")
        return
    indented = line[:1].isspace()
    shape = re.match(_META_SHAPE_RE, stripped) if (":" in stripped or "=" in stripped) else None
    if shape is not None and not shape.group(3).startswith("//"):  # `- https://…` is a link, not a key
        key = shape.group(1).casefold()
        if key in META_KEYS or (indented and stripped[:1] in "-*+"):
            if key not in META_KEYS:
                fail(number, f"unknown module metadata {shape.group(1)!r}; use paths, tasks, activation or "
                             "description, written as `  - paths: …` under the entry")
            fail(number, f"cannot read module metadata ({_meta_fault(line, shape)}); write it as `  - {key}: …` "
                         "(indented two spaces under the entry, a `- ` bullet, the key in lowercase, then a colon)")
    if indented:
        manifest.warnings.append((number, f"ignored text under a module entry: {stripped[:60]!r} "
                                          "(metadata is written `  - paths: …`)"))
        return
    if kind is not None and stripped[:2] in ("* ", "+ "):
        fail(number, f"module entries are `- ` bullets; write it as ``- `{kind}/name.md`: what it holds``")
    if not stripped.startswith("- "):
        return  # prose, such as the index's introduction

    if stripped.casefold() in ("- none enabled.", "- none enabled", "- none"):
        return
    if kind is None:
        fail(number, "module entry outside an `### Enabled rules|profiles|areas` subsection")
    match = re.match(_INDEX_ENTRY_RE, stripped)
    if not match:
        fail(number, f"module entry must look like ``- `{kind}/name.md`: what it holds``")
    try:
        module = validate_route_path(match.group(1))
    except InvalidInput as exc:
        fail(number, exc.message)
    if not module.startswith(kind + "/") or module.count("/") != 1:
        fail(number, f"{module} is listed under Enabled {kind} but is not a file directly in {kind}/")
    if manifest.index_entry(module) is not None:
        fail(number, f"{module} is listed twice in the module index")
    manifest.index.append(IndexEntry(module, kind, number, description=(match.group(2) or "").strip()))


def _meta_fault(line: str, shape) -> str:
    """What keeps a metadata-shaped line from reading as metadata, in words."""
    indent = line[: len(line) - len(line.lstrip())]
    stripped = line.strip()
    faults = []
    if not indent:
        faults.append("not indented")
    elif len(indent) < 2:
        faults.append("indented with a tab" if indent == "\t" else "indented one space")
    if stripped[:1] not in "-*+":
        faults.append("no `- ` bullet")
    elif stripped[:1] == "+":
        faults.append("a `+` bullet")
    elif stripped[1:2] != " " or stripped[2:3].isspace():
        faults.append("not one space after the bullet")
    if shape.group(1) != shape.group(1).lower():
        faults.append(f"`{shape.group(1)}` is not lowercase")
    if shape.group(2) == "=":
        faults.append("`=` instead of `:`")
    elif stripped[: shape.start(2)].endswith(" ") or stripped[: shape.start(2)].endswith("\t"):
        faults.append("a space before the colon")
    return ", ".join(faults) or f"{stripped[:60]!r}"


def _budget_line(manifest: Manifest, stripped: str, number: int, fail) -> None:
    field = _field(stripped)
    if not field:
        fail(number, "budget line must look like `- decisions.md: 800 tokens max`")
    key, value = field[0].strip().strip("`"), field[1].strip()
    amount = _budget_amount(value)
    if key.casefold().startswith("ledger "):
        name = key[7:].strip().casefold()
        if name not in LEDGER_SECTIONS:
            fail(number, f"unknown ledger section {name!r}; budget one of: {', '.join(LEDGER_SECTIONS)}")
        if amount is None:
            fail(number, f"ledger {name} budget must look like `- ledger {name}: 600 tokens max`")
        manifest.ledger_budgets[name] = amount
        return
    if not (key.endswith(".md") or key.endswith("/")):
        fail(number, f"budget key {key!r} must be a .md file, a glob such as rules/*.md, or `ledger <section>`")
    if any(ch in key for ch in "*?"):
        try:
            globs.validate_glob(key)
        except InvalidInput as exc:
            fail(number, exc.message)
    elif key.endswith(".md"):
        try:
            validate_route_path(key)
        except InvalidInput as exc:
            fail(number, exc.message)
    if amount is not None:
        tokens = amount
        if tokens <= 0:
            fail(number, "a budget must be a positive number of tokens")
        manifest.budgets.append(BudgetEntry(key, tokens, number, value))
    elif value.casefold() in ("unbudgeted", "no budget", "unlimited"):
        manifest.budgets.append(BudgetEntry(key, None, number, value, unbudgeted=True))
    elif not value or "token" in value.casefold() or any(ch.isdigit() for ch in value):
        # a note (`memory maintenance only`) has no numbers; a number that is not a budget must not pass as one
        fail(number, f"cannot read budget {value!r} for {key}; write it as `N tokens max` (or `unbudgeted`)")
    else:
        manifest.budgets.append(BudgetEntry(key, None, number, value))
