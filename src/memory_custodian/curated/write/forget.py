"""`forget TOPIC`: remove every curated entry that mentions a topic, as one previewed plan.

Matching is whole-word and case-insensitive (`redis` never matches "redistribute"). Entries are
complete units (an H2 section, a top-level bullet with its continuation); in the changelog and
a dated inbox a matching bullet is removed from its day rather than the whole day. Text that is
not a removable unit (a preamble, a body-only file, the manifest) is never rewritten by a
program: the plan is refused and the line named, so a person rewrites it.

Hard and purge never let the topic out: not in the preview, the plan id, the changelog, the
journal or an error. Only the caller's own argument holds it.
"""

from __future__ import annotations

import os
import re

from ...base.errors import InvalidInput, Refused
from ...base.records import Record, field
from ...base.secrets import scan
from ..parse.files import curated_files
from ..parse.units import make_unit, serialize, split_units
from .entries import changelog_add, module_template, prepend_entry, title_of
from .fingerprints import FILE as FORGOTTEN_FILE
from .fingerprints import fingerprint, with_added
from .plans import Plan, PlanResult, Reader

MODES = ("soft", "hard", "purge")
MIN_TOPIC_CHARS = 4
BROAD_MATCH_UNITS = 2  # more than one matching unit is "several", as in 0.9.1: the apply needs --allow-broad-match
DATED_BULLET_FILES = {"changelog.md", "inbox.md"}
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def topic_pattern(topic: str) -> re.Pattern:
    """Whole-word, case-insensitive; inner whitespace matches any run of whitespace."""
    words = topic.split()
    if not words:
        raise InvalidInput("forget needs a non-empty TOPIC")
    body = r"\s+".join(re.escape(word) for word in words)
    return re.compile(r"(?<![A-Za-z0-9_])" + body + r"(?![A-Za-z0-9_])", re.IGNORECASE)


class Removal(Record):
    """One removed entry's lines and its `fingerprint` (for `forgotten.txt`); its `heading` is shown only
    in soft mode."""

    start_line: int
    end_line: int
    heading: str
    fingerprint: str = ""


class FileResult(Record):
    path: str
    new_text: str
    removals: list[Removal] = field(default_factory=list)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


class Blocked(Record):
    """A mention forget cannot remove as a whole entry: a person rewrites that line first."""

    path: str
    line: int
    where: str

    def text(self) -> str:
        return (f"the topic appears in {self.where}, which forget cannot remove as a whole entry — rewrite that "
                "line by hand (or move it into its own entry), then run forget again")

    def message(self) -> str:
        return f"{self.path}:{self.line}: {self.text()}"


def refusal(blocked: list[dict]) -> Refused:
    """The apply of a plan with blocked mentions: refused, naming the first line."""
    first = Blocked(**blocked[0])
    more = f" ({len(blocked) - 1} more place(s) in the preview)" if len(blocked) > 1 else ""
    return Refused(f"{first.text()}; nothing was changed{more}", path=first.path, line=first.line)


class _Stop(Exception):
    """Raised inside one file's scan to hand its Blocked back."""

    def __init__(self, blocked: Blocked):
        super().__init__(blocked.where)
        self.blocked = blocked


def _blocked(rel: str, line: int, where: str) -> _Stop:
    return _Stop(Blocked(rel, line, where))


def _is_tombstone(rel: str, unit) -> bool:
    """In do-not-use.md only tombstones (`## Tombstone: …` or a bullet) are entries forget may remove."""
    return rel != "do-not-use.md" or unit.kind == "bullet" or unit.heading.casefold().startswith("tombstone:")


def _forget_in_text(rel: str, text: str, pattern: re.Pattern) -> FileResult:
    doc = split_units(text)
    result = FileResult(rel, text)
    if doc.mode == "empty" or not pattern.search(text):
        return result
    pre = pattern.search(doc.preamble)
    if pre:
        raise _blocked(rel, _line_of(doc.preamble, pre.start()), "the file's preamble")
    if doc.mode == "body":
        hit = pattern.search(text)
        assert hit is not None  # searched for above
        raise _blocked(rel, _line_of(text, hit.start()), "a file without entries (no `## ` sections or `- ` bullets)")
    kept = []
    for unit in doc.units:
        if not pattern.search(unit.text):
            kept.append(unit)
            continue
        if not _is_tombstone(rel, unit):
            hit = pattern.search(unit.text)
            assert hit is not None  # searched for above
            raise _blocked(rel, unit.start_line + unit.text.count("\n", 0, hit.start()),
                           "a section of do-not-use.md that is not a tombstone")  # no heading: it may name the topic
        if rel in DATED_BULLET_FILES and unit.kind == "section" and _DATE_RE.match(unit.heading):
            head, _, body = unit.text.partition("\n")
            sub = split_units(body)
            if sub.mode == "bullet" and not pattern.search(sub.preamble):
                keep_bullets = [b for b in sub.units if not pattern.search(b.text)]
                for b in sub.units:
                    if pattern.search(b.text):
                        result.removals.append(Removal(unit.start_line + b.start_line, unit.start_line + b.end_line,
                                                       f"{unit.heading}: {b.heading}", fingerprint(b.text)))
                if keep_bullets:
                    new_body = serialize(sub, keep_bullets)
                    if not new_body.endswith("\n\n") and unit.text.endswith("\n\n"):
                        new_body = new_body.rstrip("\n") + "\n\n"
                    kept.append(make_unit(head + "\n" + new_body))
                continue
        result.removals.append(Removal(unit.start_line, unit.end_line, unit.heading, fingerprint(unit.text)))
    new = serialize(doc, kept)
    result.new_text = new.rstrip("\n") + "\n" if new.strip() else new
    return result


def _read_loosely(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _count_ledger_mentions(memory_dir, pattern) -> int:
    count = 0
    ledger = os.path.join(os.fspath(memory_dir), "ledger")
    shards = sorted(name for name in os.listdir(ledger) if name.endswith(".jsonl")) if os.path.isdir(ledger) else []
    for name in shards:
        text = _read_loosely(os.path.join(ledger, name))
        count += sum(1 for line in text.splitlines() if pattern.search(line))
    export = os.path.join(os.fspath(memory_dir), "MEMORY.md")
    if os.path.isfile(export) and pattern.search(_read_loosely(export)):
        count += 1
    return count


def soft_tombstone(topic: str, date: str) -> str:
    """MemoryCustodian 0.9.1's soft tombstone: it names the topic, so nothing brings it back unasked."""
    return (f"## Tombstone: {' '.join(topic.split())}\n"
            "Do not reintroduce unless the user explicitly reverses this. Reason: the user asked MemoryCustodian "
            f"to forget this topic. Mode: soft. Date: {date}.")


def hard_tombstone() -> str:
    """MemoryCustodian 0.9.1's hard tombstone: the same words whatever was removed, so it names nothing."""
    return ("## Tombstone: Redacted user-requested removal\n"
            "A user-requested topic was removed in hard mode. Do not reconstruct removed content from prior context "
            "unless the user explicitly reverses this request.")


class ForgetResult(PlanResult):
    """A forget plan: `mode`, how many entries it removes and where (`files`, no heading in hard or
    purge), whether the match is broad and still needs `allow_broad_match` (`loose_matches`: the entries
    holding the topic even inside a word, as 0.9.1 counts them), the mentions it does not reach (archive,
    ledger) and `notes` saying where the topic may still be."""

    mode: str
    removed_entries: int
    files: list[dict[str, list[dict] | str]]
    needs_allow_broad_match: bool
    broad_match: bool
    archive_mentions: int
    ledger_mentions: int
    notes: list[str]
    blocked: list[dict[str, int | str]] = field(default_factory=list)
    loose_matches: int = 0


def build_plan(memory_dir, topic: str, mode: str, date: str, allow_broad_match: bool) -> Plan:
    if mode not in MODES:
        raise InvalidInput(f"unknown forget mode {mode!r}; use soft, hard or purge")
    pattern = topic_pattern(topic)
    private = mode != "soft"
    if not private:
        _refuse_secret_topic(topic)
    reader = Reader(memory_dir)
    manifest_text = reader.required("manifest.md")
    hit = pattern.search(manifest_text)
    blocked = [Blocked("manifest.md", _line_of(manifest_text, hit.start()), "the manifest")] if hit else []
    # a soft forget keeps the topic in do-not-use.md by design (its tombstone names it), so as in
    # 0.9.1 it neither scans nor changes the tombstones already there
    results = _matching_files(memory_dir, reader, pattern, include_archive=(mode == "purge"), blocked=blocked,
                              skip=("do-not-use.md",) if mode == "soft" else ())
    if blocked:
        return _blocked_plan(mode, reader, blocked)
    removed = sum(len(r.removals) for r in results)
    by_path = {r.path: r.new_text for r in results}
    archive_mentions = 0 if mode == "purge" else _archive_mentions(memory_dir, reader, pattern)
    lines = [f"{res.path}: remove {_where(rm)}" + ("" if private else f": {rm.heading}")
             for res in results for rm in res.removals]
    if removed or mode == "soft":  # a soft forget of a topic nothing mentions still guards it, as 0.9.1's does
        lines.extend(_tombstone_and_changelog(reader, by_path, topic, mode, date))
    if removed:
        prints = with_added(reader.read(FORGOTTEN_FILE), (rm.fingerprint for r in results for rm in r.removals))
        if prints is not None:  # so no merge of a branch that still has (or edits) the entries brings them back
            by_path[FORGOTTEN_FILE] = prints
            lines.append(f"{FORGOTTEN_FILE}: record the removed entries' fingerprints (no text)")
    if private:
        # the plan must leave no trace of the topic in what it writes
        for rel, new in by_path.items():
            if new is not None and pattern.search(new):
                raise Refused("forget could not remove every mention of the topic; nothing was changed — "
                              "rewrite the remaining mention by hand", path=rel)

    changes = [reader.change(rel, new) for rel, new in sorted(by_path.items())]
    loose = _loose_mentions(memory_dir, reader, topic, skip=("do-not-use.md",) if mode == "soft" else ())
    broad = removed >= BROAD_MATCH_UNITS or loose >= BROAD_MATCH_UNITS or len(topic.strip()) < MIN_TOPIC_CHARS
    ledger_mentions = _count_ledger_mentions(memory_dir, pattern)
    plan = Plan(
        command=f"forget --mode {mode}",
        changes=changes,
        inputs=dict(reader.digests),
        lines=lines,
        details={
            "mode": mode,
            "removed_entries": removed,
            "loose_matches": loose,
            "files": [{"path": r.path, "removed": [_removal_dict(rm, private) for rm in r.removals]} for r in results],
            "needs_allow_broad_match": broad and not allow_broad_match,
            "broad_match": broad,
            "archive_mentions": archive_mentions,
            "ledger_mentions": ledger_mentions,
            "notes": _notes(mode, removed, archive_mentions, ledger_mentions),
        },
    )
    if not removed:
        plan.lines.append("no entry mentions the topic" + ("; the tombstone guards it from now on" if mode == "soft"
                                                           else "; nothing to forget"))
    return plan


def _refuse_secret_topic(topic: str) -> None:
    found = scan(topic)
    if found:
        # a soft tombstone names its topic, so it would write the credential into memory
        raise Refused(f"the topic looks like a{'n' if found[0].kind[0] in 'AEIOU' else ''} {found[0].kind}; "
                      "a soft forget writes the topic into a tombstone — use {field} hard or {field} purge", field="mode")


def _blocked_plan(mode: str, reader: Reader, blocked: list) -> Plan:
    """A preview that changes nothing and names each line a person must rewrite; its apply is refused."""
    return Plan(command=f"forget --mode {mode}", changes=[], inputs=dict(reader.digests),
                lines=[b.message() for b in blocked] + ["nothing can be applied until those lines are rewritten"],
                details={"mode": mode, "removed_entries": 0, "files": [], "needs_allow_broad_match": False,
                         "broad_match": False, "archive_mentions": 0, "ledger_mentions": 0, "notes": [],
                         "blocked": [b.as_dict() for b in blocked]})


def _matching_files(memory_dir, reader: Reader, pattern: re.Pattern, *, include_archive: bool,
                    blocked: list, skip: tuple[str, ...] = ()) -> list[FileResult]:
    results = []
    for rel in curated_files(memory_dir, include_archive=include_archive):
        text = None if rel in skip else reader.read(rel)
        if text is None:
            continue
        try:
            res = _forget_in_text(rel, text, pattern)
        except _Stop as stop:
            blocked.append(stop.blocked)
            continue
        if res.removals:
            results.append(res)
    return results


def _loose_mentions(memory_dir, reader: Reader, topic: str, skip: tuple[str, ...]) -> int:
    """The entries (tombstones included) and preambles that hold `topic` anywhere, part of a word too,
    case ignored: what MemoryCustodian 0.9.1 counts before it asks for `--allow-broad-match`, so a
    forget it refuses is refused here too, though only whole words are removed."""
    needle = " ".join(topic.split()).casefold()
    count = 0
    for rel in curated_files(memory_dir, include_archive=False):
        text = None if rel in skip else reader.read(rel)
        if not text or needle not in " ".join(text.split()).casefold():
            continue
        doc = split_units(text)
        parts = [doc.preamble, *(u.text for u in doc.units)] if doc.mode != "body" else [text]
        count += sum(needle in " ".join(part.split()).casefold() for part in parts)
    return count


def _archive_mentions(memory_dir, reader: Reader, pattern: re.Pattern) -> int:
    return sum(len(pattern.findall(reader.read(rel) or "")) for rel in curated_files(memory_dir, include_archive=True)
               if rel.startswith("archive/"))


def _where(rm: Removal) -> str:
    return f"lines {rm.start_line}-{rm.end_line}" if rm.end_line > rm.start_line else f"line {rm.start_line}"


def _removal_dict(rm: Removal, private: bool) -> dict:  # the fingerprint stays out of previews
    out: dict[str, int | str] = {"start_line": rm.start_line, "end_line": rm.end_line}
    if not private:
        out["heading"] = rm.heading
    return out


def _tombstone_and_changelog(reader: Reader, by_path: dict, topic: str, mode: str, date: str) -> list[str]:
    """Add the tombstone (soft, hard) and the changelog item, in MemoryCustodian 0.9.1's words, to
    `by_path`; returns their preview lines."""
    private = mode != "soft"
    lines = []
    if mode in ("soft", "hard"):
        tomb_rel = "do-not-use.md"
        base = by_path.get(tomb_rel, reader.read(tomb_rel))
        if base is None:
            base = module_template(tomb_rel, date)
        stone = soft_tombstone(topic, date) if mode == "soft" else hard_tombstone()
        if stone not in base:
            by_path[tomb_rel] = prepend_entry(base, stone)
            lines.append(f"{tomb_rel}: add a tombstone" + ("" if private else f": {title_of(topic)}")
                         + (" that does not name the topic" if private else ""))
    changelog = by_path.get("changelog.md", reader.read("changelog.md"))
    if changelog is not None:
        shown = " ".join(topic.split())
        message = f"Forgot topic '{shown}' with mode soft." if mode == "soft" else f"Completed {mode} forget operation."
        by_path["changelog.md"] = changelog_add(changelog, message, date)
        lines.append("changelog.md: record the change" + ("" if private else f": {message}"))
    return lines


def _notes(mode: str, removed: int, archive_mentions: int, ledger_mentions: int) -> list[str]:
    """Where the topic may still be, which forget does not reach."""
    notes = []
    if archive_mentions:
        notes.append(f"archive/ still mentions it {archive_mentions} time(s); --mode purge removes those too")
    if ledger_mentions:
        notes.append(f"the ledger mentions it in {ledger_mentions} place(s); find the notes with `recall` "
                     "and remove each with `forget --note ID`")
    if mode == "purge":
        notes.append("git history and backups still hold it: rewrite history (e.g. git filter-repo) and "
                     "rotate backups if it must be gone everywhere")
    elif mode == "hard" and removed:
        notes.append("git history still holds the removed text")
    return notes
