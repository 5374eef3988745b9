"""How each line under a manifest section reads: route bullets, module index entries and their
metadata, budgets and protocol fields, each one refused with its line number when it is malformed.

`manifest.parse_manifest` walks the headings and hands every other line to `LINE_READERS`.
"""

from __future__ import annotations

import re

from ...base.errors import InvalidInput
from ...base.records import Record, field
from . import globs
from .routing import (
    ACTIVATIONS,
    ASCII_ALNUM,
    LEDGER_SECTIONS,
    BudgetEntry,
    IndexEntry,
    Route,
    canonical_task,
    validate_route_path,
)

TYPE_CHECKING = False  # not `typing`'s: importing it costs `read` at start-up
if TYPE_CHECKING:
    from typing import NoReturn

    from .routing import Manifest, TaskSection

# Patterns as strings: `re` compiles (and caches) only the ones a manifest actually needs; the
# lines every manifest has are read with plain string operations (start-up time of `read`).
_INDEX_ENTRY_RE = r"^- `?([^`\s:]+\.md)`?\s*(?:[:\u2013\u2014-]\s*(.*))?$"
_META_RE = r"^\s{2,}[-*] ([a-z_-]+):\s*(.*)$"
# What a metadata line looks like when it is written wrong: an optional bullet, one word, `:` or `=`.
_META_SHAPE_RE = r"^(?:[-*+]\s*)?([A-Za-z][A-Za-z_-]*)\s*([:=])(.*)$"
META_KEYS = ("paths", "tasks", "activation", "description")
_WORD = ASCII_ALNUM | {"_"}


class Cursor(Record):
    """Where the parser is: the `## ` section (casefolded), the current task heading, whether its
    bullets are required, the module kind of the current `### Enabled …` subsection, and the
    sections and kinds seen so far."""

    manifest: Manifest
    section: str | None = None
    task: TaskSection | None = None
    required: bool = True
    kind: str | None = None
    seen_sections: set[str] = field(default_factory=set)
    seen_kinds: set[str] = field(default_factory=set)

    def fail(self, number: int, message: str) -> NoReturn:
        raise InvalidInput(message, path=self.manifest.path, line=number)


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
    if parts[1].casefold() not in ("token", "tokens") or parts[2][:3].casefold() != "max":
        return None
    if len(parts[2]) > 3 and parts[2][3] in _WORD:
        return None
    return int(parts[0])


def _checked(cursor: Cursor, number: int, check, value):
    """`check(value)`, its InvalidInput pinned to this manifest line."""
    try:
        return check(value)
    except InvalidInput as exc:
        cursor.fail(number, exc.message)


def _route_name(cursor: Cursor, stripped: str, number: int) -> str | None:
    name = _bullet_path(stripped)
    if name is None:
        cursor.fail(number, f"route bullet {stripped!r} must name one file, such as `- decisions.md`")
    if name.endswith("/"):
        return None  # a folder is a pointer, never a load (0.9.1 skips these too)
    try:
        return validate_route_path(name)
    except InvalidInput as exc:
        cursor.fail(number, exc.message)


def read_always(cursor: Cursor, line: str, stripped: str, number: int) -> None:
    if not stripped.startswith("- "):
        cursor.manifest.warnings.append((number, "text under `## Always load` is ignored; list files as `- file.md`"))
        return
    name = _route_name(cursor, stripped, number)
    if name is not None:
        cursor.manifest.always.append(Route(name, True, number))


def read_by_task(cursor: Cursor, line: str, stripped: str, number: int) -> None:
    lowered = stripped.casefold()
    if lowered in ("load:", "also load:"):
        cursor.required = True
    elif lowered == "load if present:":
        cursor.required = False
    elif stripped.startswith("- "):
        if cursor.task is None:
            cursor.fail(number, "route bullet outside a task heading; put it under a `### Planning / ...` heading")
        name = _route_name(cursor, stripped, number)
        if name is not None:
            cursor.task.routes.append(Route(name, cursor.required, number))
    else:
        cursor.manifest.warnings.append((number, f"ignored line under `## Load by task`: {stripped[:60]!r}"))


def read_explicit_only(cursor: Cursor, line: str, stripped: str, number: int) -> None:
    if stripped.startswith("- "):
        target = stripped[2:].strip().strip("`")
        if target.startswith("/") or ".." in target.split("/") or "\\" in target:
            cursor.fail(number, f"explicit-only entry {target!r} must be a relative path inside the memory folder")
        cursor.manifest.explicit_only.append(target)


def read_protocol(cursor: Cursor, line: str, stripped: str, number: int) -> None:
    field = _field(stripped)
    if field:
        cursor.manifest.metadata[field[0].strip()] = field[1].strip()


def read_index(cursor: Cursor, line: str, stripped: str, number: int) -> None:
    """A line under `## Optional module index`: an entry, its metadata, or prose."""
    indented = line[:1].isspace()
    meta = re.match(_META_RE, line) if indented else None
    if meta:
        _read_metadata(cursor, number, meta.group(1), meta.group(2).strip())
        return
    _refuse_miswritten_metadata(cursor, line, stripped, number, indented)
    if indented:
        cursor.manifest.warnings.append((number, f"ignored text under a module entry: {stripped[:60]!r} "
                                                 "(metadata is written `  - paths: …`)"))
        return
    kind = cursor.kind
    if kind is not None and stripped[:2] in ("* ", "+ "):
        cursor.fail(number, f"module entries are `- ` bullets; write it as ``- `{kind}/name.md`: what it holds``")
    if not stripped.startswith("- ") or stripped.casefold() in ("- none enabled.", "- none enabled", "- none"):
        return  # prose, such as the index's introduction, or an empty subsection
    _read_index_entry(cursor, stripped, number)


def _read_metadata(cursor: Cursor, number: int, key: str, value: str) -> None:
    index = cursor.manifest.index
    entry = index[-1] if index and index[-1].kind == cursor.kind else None
    if entry is None:
        cursor.fail(number, "module metadata line without a module entry above it")
    if key == "paths":
        items = [item.strip().strip("`").strip() for item in value.split(",")]
        if not value or not all(items):
            cursor.fail(number, "paths: needs comma-separated globs, such as `src/store/**`, `tests/test_store*.py`")
        entry.paths = tuple(dict.fromkeys(_checked(cursor, number, globs.validate_glob, item) for item in items))
    elif key == "tasks":
        items = [item.strip().strip("`") for item in value.split(",")]
        entry.tasks = tuple(dict.fromkeys(_checked(cursor, number, canonical_task, item) for item in items))
    elif key == "activation":
        if value not in ACTIVATIONS:
            cursor.fail(number, f"activation {value!r} is not one of: {', '.join(ACTIVATIONS)}")
        entry.activation = value
    elif key == "description":
        entry.description = value
    else:
        cursor.fail(number, f"unknown module metadata {key!r}; use paths, tasks, activation or description")


def _refuse_miswritten_metadata(cursor: Cursor, line: str, stripped: str, number: int, indented: bool) -> None:
    """A line shaped like metadata (`Paths:`, `paths =`, a tab, a `+` bullet) is refused, never ignored."""
    shape = re.match(_META_SHAPE_RE, stripped) if (":" in stripped or "=" in stripped) else None
    if shape is None or shape.group(3).startswith("//"):  # `- https://…` is a link, not a key
        return
    key = shape.group(1).casefold()
    if key in META_KEYS or (indented and stripped[:1] in "-*+"):
        if key not in META_KEYS:
            cursor.fail(number, f"unknown module metadata {shape.group(1)!r}; use paths, tasks, activation or "
                                "description, written as `  - paths: …` under the entry")
        cursor.fail(number, f"cannot read module metadata ({_meta_fault(line, shape)}); write it as `  - {key}: …` "
                            "(indented two spaces under the entry, a `- ` bullet, the key in lowercase, then a colon)")


def _read_index_entry(cursor: Cursor, stripped: str, number: int) -> None:
    kind = cursor.kind
    if kind is None:
        cursor.fail(number, "module entry outside an `### Enabled rules|profiles|areas` subsection")
    match = re.match(_INDEX_ENTRY_RE, stripped)
    if not match:
        cursor.fail(number, f"module entry must look like ``- `{kind}/name.md`: what it holds``")
    module = _checked(cursor, number, validate_route_path, match.group(1))
    if not module.startswith(kind + "/") or module.count("/") != 1:
        cursor.fail(number, f"{module} is listed under Enabled {kind} but is not a file directly in {kind}/")
    if cursor.manifest.index_entry(module) is not None:
        cursor.fail(number, f"{module} is listed twice in the module index")
    cursor.manifest.index.append(IndexEntry(module, kind, number, description=(match.group(2) or "").strip()))


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


def read_budget(cursor: Cursor, line: str, stripped: str, number: int) -> None:
    if not stripped.startswith("- "):
        return
    field = _field(stripped)
    if not field:
        cursor.fail(number, "budget line must look like `- decisions.md: 800 tokens max`")
    key, value = field[0].strip().strip("`"), field[1].strip()
    amount = _budget_amount(value)
    if key.casefold().startswith("ledger "):
        name = key[7:].strip().casefold()
        if name not in LEDGER_SECTIONS:
            cursor.fail(number, f"unknown ledger section {name!r}; budget one of: {', '.join(LEDGER_SECTIONS)}")
        if amount is None:
            cursor.fail(number, f"ledger {name} budget must look like `- ledger {name}: 600 tokens max`")
        cursor.manifest.ledger_budgets[name] = amount
        return
    if not key.endswith((".md", "/")):
        cursor.fail(number, f"budget key {key!r} must be a .md file, a glob such as rules/*.md, or `ledger <section>`")
    if any(ch in key for ch in "*?"):
        _checked(cursor, number, globs.validate_glob, key)
    elif key.endswith(".md"):
        _checked(cursor, number, validate_route_path, key)
    budgets = cursor.manifest.budgets
    if amount is not None:
        if amount <= 0:
            cursor.fail(number, "a budget must be a positive number of tokens")
        budgets.append(BudgetEntry(key, amount, number, value))
    elif value.casefold() in ("unbudgeted", "no budget", "unlimited"):
        budgets.append(BudgetEntry(key, None, number, value, unbudgeted=True))
    elif not value or "token" in value.casefold() or any(ch.isdigit() for ch in value):
        # a note (`memory maintenance only`) has no numbers; a number that is not a budget must not pass as one
        cursor.fail(number, f"cannot read budget {value!r} for {key}; write it as `N tokens max` (or `unbudgeted`)")
    else:
        budgets.append(BudgetEntry(key, None, number, value))


LINE_READERS = {
    "always load": read_always,
    "load by task": read_by_task,
    "optional module index": read_index,
    "explicit only": read_explicit_only,
    "context budget": read_budget,
    "memorycustodian protocol": read_protocol,
}
