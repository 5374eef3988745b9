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

from ...base.errors import InvalidInput
from ..parse.units import fence_mask
from .lines import LINE_READERS, Cursor
from .routing import KNOWN_SECTIONS, MODULE_KINDS, SINGLE_SECTIONS, Manifest, TaskSection

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
# Latin look-alikes from Cyrillic and Greek, enough to unmask a heading that reads like ours.
_CONFUSABLES = str.maketrans("АВЕКМНОРСТХаеорсухіјԁΑΒΕΖΗΙΚΜΝΟΡΤΥΧοᴏ", "ABEKMHOPCTXaeopcyxijdABEZHIKMNOPTYXoo")
_SUBSECTION_KINDS = {f"enabled {kind}": kind for kind in MODULE_KINDS}


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
    manifest = Manifest(path=str(path))
    lines = split_lines(text)
    fenced = _fenced_lines(text, lines, manifest.path)
    cursor = Cursor(manifest)
    reader = None  # how the current section's lines read
    for number, line in enumerate(lines, start=1):
        if fenced[number - 1]:
            continue
        if line.startswith("## "):
            _open_section(cursor, line, number)
            reader = LINE_READERS.get(cursor.section or "")
        elif line.startswith("# "):
            cursor.section = cursor.task = reader = None
        elif line.startswith("### "):
            _open_subsection(cursor, line, number)
        elif reader is not None:
            stripped = line.strip()
            if stripped:
                reader(cursor, line, stripped, number)
    if complete:
        _require_routing_sections(manifest)
    return manifest


def _fenced_lines(text: str, lines: list[str], path: str) -> list[bool]:
    """For each line, whether it is code (never read as manifest); an unclosed fence is refused."""
    if "```" not in text and "~~~" not in text:
        return [False] * len(lines)

    mask, unclosed = fence_mask(lines)
    if unclosed is not None:
        raise InvalidInput("code fence is never closed; close it with a matching ``` line", path=path, line=unclosed)
    return mask


def _open_section(cursor: Cursor, line: str, number: int) -> None:
    manifest = cursor.manifest
    title = line[3:].strip()
    name = title.strip("#").strip().casefold()
    if name in SINGLE_SECTIONS and name in cursor.seen_sections:
        cursor.fail(number, f"duplicate `## {title}` section; merge it into the first one")
    cursor.seen_sections.add(name)
    cursor.section, cursor.task, cursor.kind = name, None, None
    manifest.sections.append((name, number))
    fake = lookalike_of(title)
    if fake is not None:
        manifest.lookalikes.append((number, title, fake[0], fake[1]))


def _open_subsection(cursor: Cursor, line: str, number: int) -> None:
    heading = line[4:].strip().strip("#").strip()
    if cursor.section == "load by task":
        cursor.task = TaskSection(heading, number)
        cursor.required = True
        cursor.manifest.task_sections.append(cursor.task)
    elif cursor.section == "optional module index":
        kind = _SUBSECTION_KINDS.get(heading.casefold())
        if kind is None:
            cursor.fail(number, f"unknown module index subsection {heading!r}; use Enabled rules, Enabled profiles "
                                "or Enabled areas")
        if kind in cursor.seen_kinds:
            cursor.fail(number, f"duplicate `### {heading}` subsection; merge it into the first one")
        cursor.seen_kinds.add(kind)
        cursor.kind = kind


def _require_routing_sections(manifest: Manifest) -> None:
    # a look-alike heading is left to the caller, which warns about it (`lookalikes`)
    imitated = {known for _, _, known, _ in manifest.lookalikes}
    missing = [m for m in manifest.missing_sections() if m[0] not in imitated]
    if not missing:
        return
    if len(missing) == 2 and missing[0][1] is None and missing[1][1] is None:
        raise InvalidInput(
            "no `## Always load` and no `## Load by task` section, so nothing can be loaded; add them, or "
            "move this file aside and run {verb:init} to write a fresh manifest", path=manifest.path)
    _, line, message = missing[0]
    raise InvalidInput(message, path=manifest.path, line=line)
