"""What changed in the curated files between two snapshots, entry by entry, and what a reviewer must see.

An entry is known as the merge driver knows it: a section by its heading, a bullet by its text; a
bullet a side reworded is paired with the one it replaced when their words mostly agree. An entry
that left a file and shows up in `archive/` was archived; one whose fingerprint the head's
`forgotten.txt` gained was forgotten, and of a forgotten entry nothing is told but the file it left:
not its heading, not a line of its text. A changed entry that lost a forgotten item shows no diff.
"""

from __future__ import annotations

import difflib
import re

from ..base.records import Record, field
from ..base.tokens import estimate_tokens
from ..curated.manifest.routing import budget_for
from ..curated.parse.conflicts import marker_line
from ..curated.parse.units import split_units
from ..curated.write.entries import DECISION_ENTRY_BUDGET
from ..curated.write.fingerprints import fingerprint

TOMBSTONES = "do-not-use.md"
SIMILAR = 0.5  # word overlap from which a dropped and an added bullet are one edit (as the merge driver pairs them)
PAIRING_LIMIT = 4096
_WORD = re.compile(r"\w+")


class EntryChange(Record):
    """One curated entry that changed: `change` is added, changed, removed, archived or forgotten.

    `heading` and `diff` are empty for a forgotten entry; `to` names the archive file of an archived one."""

    file: str
    change: str
    heading: str = ""
    line: int | None = None
    tokens: int = 0
    diff: list[str] = field(default_factory=list)
    to: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.as_dict().items() if v not in (None, [], "") or k in ("file", "change")}


class Flag(Record):
    """Something a reviewer should look at: `code`, where it is (`file`, `note`) and what it says."""

    code: str
    message: str
    file: str | None = None
    note: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.as_dict().items() if v is not None}


def _key(unit) -> str:
    return unit.heading.strip() if unit.kind == "section" else " ".join(unit.text.split())


def _words(text: str) -> frozenset:
    return frozenset(w.casefold() for w in _WORD.findall(text))


def has_forgotten(unit, prints: frozenset) -> bool:
    """Whether the entry, or a bullet inside it (a dated changelog or inbox day), is a forgotten one."""
    if fingerprint(unit.text) in prints:
        return True
    if unit.kind == "section" and "\n- " in unit.text:
        return any(fingerprint(b.text) in prints for b in split_units(unit.text.partition("\n")[2]).units)
    return False


def text_diff(old: str, new: str) -> list[str]:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
    return [line for line in lines if not line.startswith(("---", "+++"))]


def _pair(dropped: list, added: list) -> list[tuple]:
    """(old, new) bullets that are one reworded entry: most shared words first, each used once."""
    if not dropped or not added or len(dropped) * len(added) > PAIRING_LIMIT:
        return []
    scored = []
    for i, old in enumerate(dropped):
        ow = _words(old.text)
        for j, new in enumerate(added):
            nw = _words(new.text)
            union = len(ow | nw) or 1
            score = len(ow & nw) / union
            if score >= SIMILAR:
                scored.append((-score, i, j))
    used_old, used_new, pairs = set(), set(), []
    for _, i, j in sorted(scored):
        if i not in used_old and j not in used_new:
            used_old.add(i)
            used_new.add(j)
            pairs.append((dropped[i], added[j]))
    return pairs


def file_changes(name: str, base_units: list, head_units: list, forgotten_new: frozenset,
                 hidden: frozenset) -> list[EntryChange]:
    """The changed entries of one file, in the head's order (removed ones after, in the base's order).
    `hidden`: every fingerprint forgotten at the head, whose text is never shown."""
    before = {_key(u): u for u in base_units}
    after = {_key(u): u for u in head_units}
    gone = [u for k, u in before.items() if k not in after]
    new = [u for k, u in after.items() if k not in before]
    bullets = _pair([u for u in gone if u.kind == "bullet"], [u for u in new if u.kind == "bullet"])
    paired = {id(n): o for o, n in bullets if not has_forgotten(o, hidden)}
    reworded = {id(o) for o in paired.values()}
    out = []
    for unit in head_units:
        key = _key(unit)
        old = before.get(key) if key in before else paired.get(id(unit))
        if old is None:
            out.append(EntryChange(name, "added", unit.heading, unit.start_line, estimate_tokens(unit.text)))
        elif old.text.rstrip() != unit.text.rstrip():  # the blank line after an entry is the file's, not its text
            secret = has_forgotten(old, hidden)
            out.append(EntryChange(name, "changed", unit.heading, unit.start_line, estimate_tokens(unit.text),
                                   [] if secret else text_diff(old.text, unit.text)))
    for unit in gone:
        if id(unit) in reworded:
            continue
        if has_forgotten(unit, forgotten_new | hidden):
            out.append(EntryChange(name, "forgotten"))
        else:
            out.append(EntryChange(name, "removed", unit.heading, unit.start_line, estimate_tokens(unit.text)))
    return out


def curated_changes(base, head) -> list[EntryChange]:
    """Every changed entry of every curated file, files in name order; moves into `archive/` told once."""
    forgotten_new = head.forgotten - base.forgotten
    hidden = head.forgotten
    changes: list[EntryChange] = []
    for name in sorted(set(base.curated) | set(head.curated)):
        if name == "manifest.md":
            continue
        changes.extend(file_changes(name, base.units(name), head.units(name), forgotten_new, hidden))
    archived = {fingerprint(" ".join(u.text.split())): c for c in changes if c.file.startswith("archive/")
                and c.change == "added" for u in head.units(c.file) if u.start_line == c.line}
    out = []
    for change in changes:
        if change.change == "removed" and not change.file.startswith("archive/"):
            unit = next((u for u in base.units(change.file) if u.start_line == change.line), None)
            moved = archived.pop(fingerprint(" ".join(unit.text.split())), None) if unit is not None else None
            if moved is not None:
                change = change.replace(change="archived", to=moved.file)
                moved.change = "moved"
        out.append(change)
    return [c for c in out if c.change != "moved"]


def curated_flags(base, head, changes: list[EntryChange]) -> list[Flag]:
    """Entries over their budget, files now over theirs, routes to files that are not there, conflict markers."""
    flags = []
    manifest = head.manifest()
    for c in changes:
        if c.change not in ("added", "changed"):
            continue
        budget = budget_for(c.file, manifest)
        if c.file == "decisions.md" and c.tokens > DECISION_ENTRY_BUDGET:
            flags.append(Flag("entry-over-budget", f"decision {c.heading!r} is {c.tokens} tokens, over the "
                              f"{DECISION_ENTRY_BUDGET}-token entry budget", c.file))
        elif budget is not None and c.tokens > budget:
            flags.append(Flag("entry-over-budget", f"entry {c.heading!r} is {c.tokens} tokens, more than the whole "
                              f"file's {budget}-token budget: it never fits a pack whole", c.file))
    base_manifest = base.manifest()
    for name in sorted({c.file for c in changes}):
        budget = budget_for(name, manifest)
        text, old = head.text(name), base.text(name)
        if budget is None or text is None or name.startswith("archive/"):
            continue
        tokens, was = estimate_tokens(text.strip()), estimate_tokens((old or "").strip())
        was_budget = budget_for(name, base_manifest)
        newly = old is None or was_budget is None or was <= was_budget
        if tokens > budget and (newly or tokens > was):
            flags.append(Flag("file-over-budget", f"{name} is now {tokens} tokens, over its {budget}-token budget "
                              f"(was {was}): a pack leaves its oldest entries out", name))
    flags.extend(_route_flags(base, head, manifest, base_manifest))
    for name in head.curated:
        text = head.text(name) or ""
        line = marker_line(text)
        if line is not None and marker_line(base.text(name) or "") is None:
            flags.append(Flag("conflict-markers", f"{name}:{line} holds a merge's conflict markers: keep one "
                              "version of the entry and delete the marker lines", name))
    return flags


def _missing_routes(snapshot, manifest) -> dict[str, int]:
    if manifest is None:
        return {}
    routes = [(r.module, r.line) for r in manifest.always if r.required]
    routes += [(r.module, r.line) for s in manifest.task_sections for r in s.routes if r.required]
    routes += [(e.module, e.line) for e in manifest.index]
    return {module: line for module, line in routes if module not in snapshot.files}


def _route_flags(base, head, manifest, base_manifest) -> list[Flag]:
    was = _missing_routes(base, base_manifest)
    return [Flag("route-missing", f"manifest.md:{line} routes to {module}, which is not in the memory folder: "
                 "create it, or move the route under `Load if present:`", "manifest.md")
            for module, line in sorted(_missing_routes(head, manifest).items()) if module not in was]
