"""`compact`: the mechanical part of memory maintenance, never the semantic part.

What a program can decide safely it does: drop exact duplicate bullets and inbox items, drop inbox
items a tombstone already rules out, and (only as `--target`, decisions only with `--archive-oldest`,
as in MemoryCustodian 0.9.1) move the oldest complete entries of an over-budget decisions or
changelog file to `archive/<file>-<date>.md`. What needs
judgment it lists: the remaining inbox candidates, and which entries an archive would move.
One pass over each file, so 4,000 decisions compact in milliseconds.
"""

from __future__ import annotations

import os

from ...base.errors import InvalidInput
from ...base.records import Record, field
from ...base.tokens import estimate_tokens
from ..manifest import index_edit
from ..manifest.reader import parse_manifest
from ..manifest.routing import MODULE_KINDS, Manifest
from ..parse.bullets import drop_items, split_items, tombstone_keys
from ..parse.files import curated_files
from ..parse.units import Document, Unit, serialize, split_units
from .entries import DECISION_ENTRY_BUDGET, NO_CANDIDATES, changelog_add, long_decisions, module_template
from .forget import topic_pattern
from .plans import Plan, PlanResult, Reader

TYPE_CHECKING = False  # not `typing`'s: importing it costs every fresh process
if TYPE_CHECKING:
    from typing import Any

BULLET_FILES = ("constraints.md", "preferences.md")
ARCHIVE_FILES = ("decisions.md", "changelog.md")
ARCHIVE_REASON = ("Active memory exceeded its context budget; older complete entries were moved to "
                  "explicit-only archive.")


def validate_target(target: str) -> str:
    raw = target.strip().replace("\\", "/")
    while raw.startswith("./"):
        raw = raw[2:]
    parts = raw.split("/")
    if not raw or raw.startswith("/") or any(p in ("", ".", "..") for p in parts) or not raw.endswith(".md"):
        raise InvalidInput(f"{{field}} {target!r} must be a .md file inside the memory folder, such as decisions.md",
                           field="target")
    if parts[0] in (".cache", "ledger", "archive") or raw == "manifest.md":
        raise InvalidInput(f"{{field}} {target!r} is not a curated file compact can change", field="target")
    return raw


def dedupe_bullets(text: str) -> tuple[str, list[str]]:
    """Drop repeated top-level bullets (the same text line by line, indentation included), keeping the first."""
    lines, items = split_items(text)
    seen: set[str] = set()
    dropped = []
    for item in items:
        if item.key in seen:
            dropped.append(item)
        seen.add(item.key)
    return (drop_items(lines, dropped) if dropped else text), [item.label for item in dropped]


def compact_inbox(text: str, tombstones: str) -> tuple[str, list[str], list[str], list[str], list[str]]:
    """(new text, duplicates dropped, tombstoned dropped, candidates left, candidates that mention a tombstone).

    Only exact matches go, as in MemoryCustodian 0.9.1: an item equal to an earlier one, or to a
    tombstone's title or bullet. An item that merely mentions a tombstoned topic is kept for review
    and flagged, since a person may be arguing to bring it back."""
    keys = tombstone_keys(tombstones)
    patterns = [topic_pattern(k) for k in sorted(keys) if "\n" not in k]
    lines, items = split_items(text)
    seen: set[str] = set()
    dupes: list[str] = []
    stoned: list[str] = []
    left: list[str] = []
    flagged: list[str] = []
    dropped: list = []
    for item in items:
        key = item.key
        if key in seen or key in keys:
            (dupes if key in seen else stoned).append(item.label)
            dropped.append(item)
        else:
            left.append(item.label)
            if any(p.search(key) for p in patterns):
                flagged.append(item.label)
        seen.add(key)
    if not dropped:
        return text, dupes, stoned, left, flagged
    new = drop_items(lines, dropped)
    if not left and NO_CANDIDATES not in new:
        new = new.rstrip("\n") + "\n\n" + NO_CANDIDATES + "\n"
    return new, dupes, stoned, left, flagged


def split_for_budget(text: str, budget: int) -> tuple[list[Unit], list[Unit], int, Document]:
    """(kept units, archived units, total tokens, document): keep from the top while the file fits its budget."""
    doc = split_units(text)
    total = estimate_tokens(text)
    if doc.mode != "section" or total <= budget:
        return doc.units, [], total, doc
    used = estimate_tokens(doc.preamble)
    kept: list[Unit] = []
    archived: list[Unit] = []
    for index, unit in enumerate(doc.units):
        cost = estimate_tokens(unit.text)
        if used + cost > budget and kept:
            archived = doc.units[index:]
            break
        used += cost
        kept.append(unit)
    return kept, archived, total, doc


class Compaction(Record):
    """What a compact plan collects while it goes through the files."""

    reader: Reader
    manifest: Manifest
    date: str
    archive_oldest: bool
    targeted: bool = False
    out: dict[str, str | None] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    review: list[dict[str, str]] = field(default_factory=list)
    changelog_messages: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)

    def text_of(self, rel: str) -> str | None:
        """The file as this plan leaves it so far."""
        return self.out.get(rel, self.reader.read(rel))


class CompactResult(PlanResult):
    """A compact plan: what it found in each file (`files`) and the items left for a person to review."""

    files: list[dict[str, Any]]
    review: list[dict[str, str]]
    refusals: list[str] = field(default_factory=list)


def build_plan(memory_dir, target: str | None, date: str, archive_oldest: bool, memory_rel: str) -> Plan:
    reader = Reader(memory_dir)
    manifest_text = reader.required("manifest.md")
    manifest = parse_manifest(manifest_text, reader.path_of("manifest.md"))
    work = Compaction(reader, manifest, date, archive_oldest, targeted=target is not None)
    files_info = [_compact_file(work, rel) for rel in _targets(memory_dir, reader, target)]
    out, lines = work.out, work.lines
    if any(rel.startswith("archive/") for rel in out):
        if reader.read("archive/README.md") is None:
            out["archive/README.md"] = module_template("archive/README.md", date, memory_rel)
        new_manifest = index_edit.explicit_only(manifest_text, "archive/")
        if new_manifest != manifest_text:
            out["manifest.md"] = new_manifest
    changelog = work.text_of("changelog.md")
    if changelog is not None and work.changelog_messages:
        for message in work.changelog_messages:
            changelog = changelog_add(changelog, message, date)
        out["changelog.md"] = changelog
        lines.append("changelog.md: record the compaction")
    if archive_oldest and target is None:
        lines.append("note: archiving the oldest entries needs one target file (decisions.md or changelog.md), as "
                     "in MemoryCustodian 0.9.1; this compact archived nothing")
    if not any(v is not None for v in out.values()) and not lines:
        lines.append("nothing to compact")
    return Plan(
        command=f"compact target={target or '*'} archive_oldest={archive_oldest}",
        changes=[reader.change(rel, new) for rel, new in sorted(out.items())],
        inputs=dict(reader.digests),
        lines=lines,
        details={"files": files_info, "review": work.review, "refusals": work.refusals},
    )


def _targets(memory_dir, reader: Reader, target: str | None) -> list[str]:
    if target is None:
        present = curated_files(memory_dir, include_archive=False)
        return [r for r in present if r in ("inbox.md",) + BULLET_FILES + ARCHIVE_FILES
                or (r.split("/", 1)[0] in MODULE_KINDS and not r.endswith("README.md"))]
    rel = validate_target(_inside_memory(memory_dir, target))
    if reader.read(rel) is None:
        raise InvalidInput(f"{{field}} {target!r} does not exist in the memory folder", path=os.fspath(memory_dir),
                           field="target")  # the folder, not folder + target: that path never existed
    return [rel]


def _inside_memory(memory_dir, target: str) -> str:
    """`docs/memory/decisions.md` (the memory folder from the project root, as a person copies it) is
    `decisions.md`: the part after the folder's own name."""
    parts = os.fspath(memory_dir).replace(os.sep, "/").rstrip("/").split("/")
    given = target.replace("\\", "/").lstrip("./")
    for n in range(len(parts), 0, -1):
        prefix = "/".join(parts[-n:]) + "/"
        if given.startswith(prefix):
            return given[len(prefix):]
    return target


def _compact_file(work: Compaction, rel: str) -> dict:
    """Plan the compaction of one file; returns what the JSON says about it."""
    text = work.text_of(rel) or ""
    info = {"path": rel}
    if rel == "inbox.md":
        _compact_inbox_file(work, text, info)
    elif rel in ARCHIVE_FILES:
        _archive_oldest(work, rel, text, info)
    elif rel in BULLET_FILES or rel.split("/", 1)[0] in MODULE_KINDS:
        _dedupe_file(work, rel, text, info)
    else:
        work.lines.append(f"{rel}: compact has nothing mechanical to do here; edit it by hand if it is too long")
    return info


def _compact_inbox_file(work: Compaction, text: str, info: dict) -> None:
    new, dupes, stoned, left, flagged = compact_inbox(text, work.reader.read("do-not-use.md") or "")
    info.update(duplicates_dropped=len(dupes), tombstoned_dropped=len(stoned), candidates=left,
                mentions_tombstone=flagged)
    lines = work.lines
    if dupes:
        lines.append(f"inbox.md: drop {len(dupes)} exact duplicate item(s)")
    if stoned:
        lines.append(f"inbox.md: drop {len(stoned)} item(s) a tombstone already rules out")
    if left:
        lines.append(f"inbox.md: {len(left)} candidate(s) to review (promote with `add`, or delete by hand):")
        lines.extend(f"  - {c}" + ("  (mentions a tombstoned topic)" if c in flagged else "") for c in left)
        work.review.extend({"path": "inbox.md", "item": c} for c in left)
    if new != text:
        work.out["inbox.md"] = new
        work.changelog_messages.append(
            f"Cleaned inbox: removed {len(dupes)} exact duplicate(s) and {len(stoned)} exact tombstone match(es).")


def _archive_oldest(work: Compaction, rel: str, text: str, info: dict) -> None:
    """Over budget: list the oldest entries, or (with --archive-oldest) move them to the archive.

    As in MemoryCustodian 0.9.1, `--target changelog.md` archives on `--apply` alone (old days are
    history), while `--target decisions.md` needs `--archive-oldest` and refuses while a kept
    decision is over the one-decision limit (archiving by age would keep a problem and move rules)."""
    lines = work.lines
    budget = work.manifest.budget_for(rel)
    if budget is None:
        lines.append(f"{rel}: unbudgeted; nothing to archive")
        return
    kept, archived, total, doc = split_for_budget(text, budget)
    long_entries = _long_entries(rel, text, lines)
    info.update(tokens=total, budget=budget, archive_candidates=len(archived), long_entries=long_entries)
    # as in 0.9.1, only a targeted compact archives; untargeted, `--archive-oldest` changes nothing
    move = work.targeted and (work.archive_oldest or rel == "changelog.md")
    if not archived:
        lines.append(f"{rel}: {total}/{budget} tokens; within budget" if total <= budget
                     else f"{rel}: {total}/{budget} tokens; over budget but nothing can be archived "
                          "(a single entry is larger than the budget) — shorten it by hand")
        return
    kept_long = [e for e in long_entries if e["line"] < archived[0].start_line]
    if kept_long and work.targeted:
        work.refusals.append(f"{len(kept_long)} decision(s) that would stay are over {DECISION_ENTRY_BUDGET} "
                             "tokens; shorten them before archiving by age — nothing was changed")
    elif work.targeted and not move:
        work.refusals.append(f"{rel} is over budget; archiving needs {{field:archive_oldest}} once you have checked "
                             "that the oldest entries hold no rule still in force — nothing was changed")
    if not move or kept_long:
        _list_archive_candidates(work, rel, total, budget, archived)
        return
    new = work.out[rel] = serialize(doc, kept).rstrip("\n") + "\n"
    arel = f"archive/{rel[:-3]}-{work.date}.md"
    body = "\n\n".join(u.text.strip("\n") for u in archived)
    existing = work.text_of(arel)
    if existing is None:
        existing = (f"# Archived Memory: {rel}\n\n## {work.date} - From {rel}\nReason:\n{ARCHIVE_REASON}\n")
    work.out[arel] = existing.rstrip("\n") + "\n\n" + body + "\n"
    lines.append(f"{rel}: move the {len(archived)} oldest entries to {arel} "
                 f"({total} -> {estimate_tokens(new)}/{budget} tokens)")
    if rel != "changelog.md":  # a line about itself would push the changelog back over its budget (0.9.1 too)
        work.changelog_messages.append(f"Compacted {rel}: archived {len(archived)} old entries.")


def _long_entries(rel: str, text: str, lines: list[str]) -> list[dict]:
    """Decisions over the one-decision limit, listed in the preview (0.9.1: "Long decision entries")."""
    if rel != "decisions.md":
        return []
    found = [{"heading": h, "line": n, "tokens": t} for h, n, t in long_decisions(text)]
    if found:
        lines.append(f"{rel}: {len(found)} decision(s) over {DECISION_ENTRY_BUDGET} tokens — shorten them by hand:")
        lines.extend(f"  - line {e['line']}: {e['heading']} ({e['tokens']} tokens)" for e in found)
    return found


def _list_archive_candidates(work: Compaction, rel: str, total: int, budget: int, archived: list) -> None:
    work.lines.append(f"{rel}: {total}/{budget} tokens; over budget. --archive-oldest would move the "
                      f"{len(archived)} oldest entries to archive/{rel[:-3]}-{work.date}.md — review them first "
                      "(merge, shorten, or move scoped ones to an area):")
    work.lines.extend(f"  - {u.heading}" for u in archived[:20])
    if len(archived) > 20:
        work.lines.append(f"  - … and {len(archived) - 20} more")
    work.review.extend({"path": rel, "item": u.heading} for u in archived)


def _dedupe_file(work: Compaction, rel: str, text: str, info: dict) -> None:
    new, dropped = dedupe_bullets(text)
    info.update(duplicates_dropped=len(dropped))
    if dropped:
        work.out[rel] = new
        work.lines.append(f"{rel}: drop {len(dropped)} exact duplicate bullet(s)")
        work.changelog_messages.append(f"Compacted {rel}: removed {len(dropped)} duplicate bullet(s).")
    budget = work.manifest.budget_for(rel)
    tokens = estimate_tokens(new)
    if budget is not None and tokens > budget:
        work.lines.append(f"{rel}: {tokens}/{budget} tokens; still over budget — merge or move bullets by hand")
