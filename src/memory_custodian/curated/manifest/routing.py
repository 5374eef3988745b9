"""What a parsed manifest holds, and how it answers routing questions: the records every reader of
the manifest shares, the task vocabulary, section names, default budgets and route-path rules.

The parser that fills these records is `manifest.py`; the format is described there.
"""

from __future__ import annotations

from ...base.errors import InvalidInput
from ...base.records import Record, field
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

ROUTING_SECTIONS = ("always load", "load by task")
# The core files a pack is for (the manifest routes, the inbox is for maintenance only): each must be routed.
ROUTED_CORE = ("brief.md", "constraints.md", "decisions.md", "do-not-use.md")
# The `## ` sections a manifest may hold once each.
SINGLE_SECTIONS = ROUTING_SECTIONS + ("optional module index", "explicit only", "context budget",
                                      "memorycustodian protocol")
# Every `## ` heading MemoryCustodian writes; others are a person's prose and are left alone.
KNOWN_SECTIONS = SINGLE_SECTIONS + ("optional rules", "optional profiles", "area-specific memory")
SECTION_TITLES = {
    "memorycustodian protocol": "MemoryCustodian Protocol", "always load": "Always load", "load by task": "Load by task",
    "optional module index": "Optional module index", "explicit only": "Explicit only", "context budget": "Context budget",
    "optional rules": "Optional rules", "optional profiles": "Optional profiles", "area-specific memory": "Area-specific memory",
}

# The `### ` heading MemoryCustodian writes for each task: what a "did you mean" suggests.
TASK_HEADINGS = {
    "planning": "Planning / architecture / refactoring",
    "implementation": "Implementation / execution / debugging",
    "artifact": "User-facing artifact / output",
    "preferences": "Preferences",
    "history": "Change history / recap",
    "maintenance": "Memory maintenance",
}

ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_SEGMENT_FIRST = ASCII_ALNUM | {"_"}
_SEGMENT_CHARS = ASCII_ALNUM | {"_", ".", "-"}


def canonical_task(name: str) -> str:
    """The canonical task for `name` (any alias, any case), or InvalidInput naming the valid ones."""
    canonical = TASK_ALIASES.get(str(name).strip().casefold())
    if canonical is None:
        aliases = ", ".join(sorted(k for k in TASK_ALIASES if k not in CANONICAL_TASKS))
        raise InvalidInput(
            f"unknown task {name!r}; use one of: {', '.join(CANONICAL_TASKS)} (aliases: {aliases})"
        )
    return canonical


def _safe_segment(part: str) -> bool:
    return bool(part) and part[0] in _SEGMENT_FIRST and all(ch in _SEGMENT_CHARS for ch in part)


def _has_drive(raw: str) -> bool:
    return len(raw) >= 2 and raw[1] == ":" and raw[0] in ASCII_ALNUM and raw[0].isalpha()


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


# Route, TaskSection and BudgetEntry assign their fields directly: `read` parses the manifest at
# every session start, and Record's generic init would make that parse a quarter slower.
class Route(Record):
    module: str
    required: bool
    line: int

    def __init__(self, module: str, required: bool, line: int):
        self.module, self.required, self.line = module, required, line


class TaskSection(Record):
    heading: str
    line: int
    routes: list[Route]

    def __init__(self, heading: str, line: int, routes: list | None = None):
        self.heading, self.line, self.routes = heading, line, [] if routes is None else routes


class IndexEntry(Record):
    """One `### Enabled rules|profiles|areas` entry of the module index, with its metadata.

    `kind` is rules, profiles or areas; `paths` and `tasks` are tuples."""

    module: str
    kind: str
    line: int
    description: str = ""
    paths: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    activation: str | None = None

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


class BudgetEntry(Record):
    """One `## Context budget` line. `tokens` None is a note (no override) unless `unbudgeted`."""

    key: str
    tokens: int | None
    line: int
    note: str
    unbudgeted: bool

    def __init__(self, key: str, tokens: int | None, line: int, note: str = "", unbudgeted: bool = False):
        self.key, self.tokens, self.line, self.note, self.unbudgeted = key, tokens, line, note, unbudgeted

    @property
    def overrides(self) -> bool:
        return self.tokens is not None or self.unbudgeted


class Manifest(Record):
    """A parsed manifest. Everything keeps its source line, so findings can point at it.

    `ledger_budgets` maps a ledger section to its tokens; `metadata` holds the `## MemoryCustodian
    Protocol` fields; `sections` the H2 headings (casefolded) with their lines; `lookalikes` is
    (line, heading, imitated section, U+XXXX); `warnings` is (line, message) for ignored lines."""

    path: str
    always: list[Route] = field(default_factory=list)
    task_sections: list[TaskSection] = field(default_factory=list)
    index: list[IndexEntry] = field(default_factory=list)
    explicit_only: list[str] = field(default_factory=list)
    budgets: list[BudgetEntry] = field(default_factory=list)
    ledger_budgets: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)
    sections: list[tuple[str, int]] = field(default_factory=list)
    lookalikes: list[tuple[int, str, str, str]] = field(default_factory=list)
    warnings: list[tuple[int, str]] = field(default_factory=list)

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

    def unrouted_tasks(self) -> list[str]:
        """The canonical tasks (general aside) no `### ` heading serves, when there is a `## Load by task`."""
        if "load by task" not in {name for name, _ in self.sections}:
            return []
        return [task for task in CANONICAL_TASKS[1:] if self.task_section(task) is None]

    def all_routed_modules(self) -> list[str]:
        names = [r.module for r in self.always]
        for section in self.task_sections:
            names.extend(r.module for r in section.routes)
        return list(dict.fromkeys(names))

    def unrouted_core(self, present) -> list[str]:
        """The core files in `present` that no route loads for any task (an emptied `## Always load`
        drops the brief from every pack); none while the manifest has no routing section at all, which
        `missing_sections` reports."""
        if not {name for name, _ in self.sections} & set(ROUTING_SECTIONS):
            return []
        routed = set(self.all_routed_modules())
        return [name for name in ROUTED_CORE if name in present and name not in routed
                and not self.is_explicit_only(name)]

    @staticmethod
    def unrouted_core_text(name: str) -> str:
        where = "`## Always load`" if name == "brief.md" else "`## Always load` or a task under `## Load by task`"
        return (f"{name} is a core file but no route loads it, so it is in no pack — list `- {name}` under {where}")

    def index_entry(self, module: str) -> IndexEntry | None:
        for entry in self.index:
            if entry.module == module:
                return entry
        return None

    def is_explicit_only(self, module: str) -> bool:
        return any(module == item or (item.endswith("/") and module.startswith(item)) for item in self.explicit_only)

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
        out: list[tuple[str, int | None, str]] = []
        for name in ROUTING_SECTIONS:
            if name in present:
                continue
            title = SECTION_TITLES[name]
            near = next((line for heading, line in self.sections if near_section(heading) == name), None)
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


def manifest_errors(manifest: Manifest, curated: list[str],
                    task: str | None = None) -> list[tuple[str, int | None, str]]:
    """(code, line, message) for each manifest mistake that silently drops routes, as MemoryCustodian 0.9.1
    refuses them: an unknown `### ` task heading (with a "did you mean"), a task no heading serves,
    a missing or misspelt routing section. `curated` names the folder's curated files: a manifest
    without routing sections is no error while the brief is the only one (a ledger-only project).
    With `task` (a canonical task: what `read` serves) only that task's missing heading is an error,
    as 0.9.1's `read` judges only the route it loads; the others are `Manifest.unrouted_tasks()`."""
    errors: list[tuple[str, int | None, str]] = []
    missing = manifest.missing_sections()
    if missing and len(missing) == len(ROUTING_SECTIONS) and all(line is None for _, line, _ in missing) \
            and set(curated) <= {"brief.md"}:
        missing = []
    errors.extend(("manifest-section-missing", line, message) for _, line, message in missing)
    for section in manifest.task_sections:
        heading = section.heading.casefold()
        if not any(k in heading for t in CANONICAL_TASKS for k in TASK_KEYWORDS[t]):
            guess = _closest_task(heading)
            hint = (f"did you mean `### {TASK_HEADINGS[guess]}`?" if guess else
                    f"name one of the tasks ({', '.join(TASK_KEYWORDS_SHOWN)})")
            errors.append(("manifest-unknown-task-heading", section.line,
                           f"`### {section.heading}` under `## Load by task` matches no task, so its "
                           f"routes never load — {hint}"))
    for unrouted in manifest.unrouted_tasks():
        if task is None or unrouted == task:
            errors.append(("manifest-task-unrouted", None,
                           f"no `### ` heading under `## Load by task` serves the {unrouted} task, so it loads only "
                           f"the always-load files — add `### {TASK_HEADINGS[unrouted]}` with its routes "
                           "(`memory-custodian migrate` adds the default ones)"))
    return errors


TASK_KEYWORDS_SHOWN = tuple(TASK_HEADINGS[t].split(" / ")[0].casefold() for t in CANONICAL_TASKS[1:])


def _closest_task(heading: str) -> str | None:
    """The task whose keyword a word of `heading` nearly spells (`implementaton`), if any."""
    import difflib

    words = "".join(ch if ch.isalnum() or ch == "-" else " " for ch in heading).split()
    keywords = {k: t for t in CANONICAL_TASKS for k in TASK_KEYWORDS[t] if " " not in k}
    for word in words:
        close = difflib.get_close_matches(word, list(keywords), n=1, cutoff=0.75)
        if close:
            return keywords[close[0]]
    return None


def near_section(heading: str) -> str | None:
    """The routing section a `## ` heading nearly names (`always loaded`, `load by tasks:`), if any."""
    import difflib

    plain = _near_miss(heading)
    if plain in ROUTING_SECTIONS:
        return plain
    close = difflib.get_close_matches(plain, list(ROUTING_SECTIONS), n=1, cutoff=0.8)
    return close[0] if close else None


def _near_miss(heading: str) -> str:
    """A casefolded `## ` heading without trailing punctuation and with `-`/`_` read as spaces."""
    return " ".join(heading.rstrip(":.;").replace("-", " ").replace("_", " ").split())


def default_budget(module: str) -> int | None:
    folder = module.split("/", 1)[0] if "/" in module else ""
    if folder in DEFAULT_FOLDER_BUDGETS:
        return DEFAULT_FOLDER_BUDGETS[folder]
    return DEFAULT_BUDGETS.get(module)


def budget_for(module: str, manifest: Manifest | None = None) -> int | None:
    """The token budget of `module`: the manifest's override if any, else MemoryCustodian's default."""
    return manifest.budget_for(module) if manifest is not None else default_budget(module)
