"""Curated entries as MemoryCustodian 0.9.1 writes them, and where they go in a file.

Decisions (`## YYYY-MM-DD - title` / `Decision:` / `Reason:`, plus our `Scope:`), tombstones
(`## Tombstone: …`) and dated inbox and changelog items go newest first, right after the file's
preamble; bullets (constraints, preferences, rules, profiles, areas) go at the end of the list,
replacing a template's placeholder bullet. The rest of the file is kept byte for byte.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from ...base.errors import InvalidInput
from ...base.secrets import refuse_secrets
from ...base.textsafe import shown
from ...base.tokens import estimate_tokens
from ..parse.units import split_units
from . import templates

DECISION_ENTRY_BUDGET = 120  # MemoryCustodian's per-decision limit, in tokens
BUDGET_WARN_PERCENT = 80

TARGETS = {
    "decision": "decisions.md",
    "constraint": "constraints.md",
    "preference": "preferences.md",
    "tombstone": "do-not-use.md",
    "inbox": "inbox.md",
}
TYPES = ("decision", "constraint", "preference", "tombstone", "rule", "profile", "area", "inbox")
AREA_SCOPED_TYPES = {"decision", "constraint", "preference", "tombstone"}
FOLDERS = {"rule": "rules", "profile": "profiles", "area": "areas"}

SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
NO_CANDIDATES = "No unprocessed memory candidates."

PLACEHOLDER_BULLETS = {
    "- Add rules that should apply only when this task type is relevant.",
    "- Add workflow rules that should apply only when this profile is relevant.",
    "- Add durable context that should load only when this area is touched.",
}


def today() -> str:
    return datetime.now(timezone.utc).date().isoformat()


# A name becomes a file name (plus `.md` and a temp file's prefix and suffix), which most file
# systems cap at 255 bytes; the name is ASCII, so its characters are its bytes.
NAME_MAX = 100


def safe_name(name: str | None, what: str) -> str:
    """A rule/profile/area name: one path segment, no `..`, no extension games, no secret."""
    raw = (name or "").strip()
    if raw.endswith(".md"):
        raw = raw[:-3]
    if not raw or not SAFE_NAME_RE.match(raw) or ".." in raw:  # the pattern already allows no `/`
        raise InvalidInput(
            f"invalid {what} name {shown(name or '')}: use letters, digits, '.', '_' and '-' only, such as output or code-style"
        )
    if len(raw) > NAME_MAX:
        raise InvalidInput(f"the {what} name is {len(raw)} characters; at most {NAME_MAX} — give a shorter name")
    refuse_secrets(raw, f"the {what} name")
    return raw


HEADING_MAX = 72


def title_of(message: str) -> str:
    """An entry's heading from its text, as MemoryCustodian 0.9.1 takes it: the whitespace-collapsed
    text, its first 72 characters (the entry's body keeps the whole text)."""
    clean = " ".join(message.strip().split())
    return clean[:HEADING_MAX] if clean else "Untitled memory"


def long_decisions(text: str) -> list[tuple[str, int, int]]:
    """(heading, line, tokens) of each decision entry over the one-decision limit."""
    found = []
    for unit in split_units(text).units:
        if unit.kind == "section":
            tokens = estimate_tokens(unit.text)
            if tokens > DECISION_ENTRY_BUDGET:
                found.append((unit.heading, unit.start_line, tokens))
    return found


def _block(lines: list[str]) -> str:
    return "\n".join(line.rstrip() for line in lines)


def _reason_lines(reasons: list[str]) -> list[str]:
    reasons = [r.strip() for r in reasons if r and r.strip()]
    if not reasons:
        return []
    if len(reasons) == 1:
        return ["Reason:", reasons[0]]
    return ["Reason:"] + [f"- {r}" for r in reasons]


def decision_entry(message: str, reasons: list[str], scope: str | None, date: str, title: str | None = None) -> str:
    lines = ["Decision:", message.strip()]
    lines += _reason_lines(reasons)
    if scope:
        lines += ["Scope:", scope.strip()]
    return f"## {date} - {title_of(title or message)}\n" + _block(lines)


TOMBSTONE_GUARD = "Do not reintroduce unless the user explicitly reverses this."
TOMBSTONE_NO_REASON = "Added as a rejected or guarded topic."


def tombstone_entry(message: str, reasons: list[str], scope: str | None, date: str, title: str | None = None) -> str:
    """`## Tombstone: TEXT` and 0.9.1's guard line (`Do not reintroduce … Reason: … Date: ….`).

    The text is the heading, as 0.9.1 writes it; when the heading cannot hold all of it (a title
    was given, or the text is longer than a heading or spans lines) the text is also the first line
    of the body, which 0.9.1 would have dropped."""
    fits = title is None and "\n" not in message.strip() and len(" ".join(message.split())) <= HEADING_MAX
    body = [] if fits else [message.strip()]
    why = "; ".join(r.strip() for r in reasons if r and r.strip()) or TOMBSTONE_NO_REASON
    lines = [*body, f"{TOMBSTONE_GUARD} Reason: {why} Date: {date}."]
    if scope:
        lines += ["Scope:", scope.strip()]
    return f"## Tombstone: {title_of(title or message)}\n" + _block(lines)


def bullet_entry(message: str) -> str:
    """`- message`; further lines become continuation lines so the bullet stays one unit."""
    first, *rest = message.strip().splitlines() or [""]
    return _block([f"- {first.strip()}"] + [f"  {line.strip()}" if line.strip() else "" for line in rest])


def _join(before: str, entry: str, after: str) -> str:
    parts = [p for p in (before.rstrip(), entry.strip("\n"), after.strip("\n")) if p]
    return "\n\n".join(parts) + "\n"


def prepend_entry(text: str, entry: str) -> str:
    """Insert `entry` as the newest unit: after the preamble, before the first existing unit."""
    doc = split_units(text)
    if doc.mode in ("empty", "body", "bullet"):
        # in a bullet-only file a section put first would swallow the bullets below it
        return _join(text, entry, "")
    return _join(doc.preamble, entry, text[len(doc.preamble):])


def _drop_lines(text: str, drop: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if line.strip() != drop)


def prepend_dated_item(text: str, date: str, item: str, *, drop_line: str | None = None) -> str:
    """A dated item (inbox, changelog): newest first, under `## date` (today's top section is reused)."""
    if drop_line:
        text = _drop_lines(text, drop_line)
    doc = split_units(text)
    bullet = bullet_entry(item)
    if doc.mode == "section":
        first = doc.units[0]
        if first.heading == date:
            body = first.text[first.text.index("\n") + 1:] if "\n" in first.text else ""
            merged = f"## {date}\n{bullet}\n{body}"
            rest = text[len(doc.preamble) + len(first.text):]
            return doc.preamble + merged + rest
        return _join(doc.preamble, f"## {date}\n{bullet}", text[len(doc.preamble):])
    if doc.mode == "bullet":
        # undated legacy items: keep them as they are and date the new one inline
        return doc.preamble.rstrip("\n") + "\n\n" + bullet_entry(f"{date}: {item}") + "\n" + text[len(doc.preamble):]
    return _join(text, f"## {date}\n{bullet}", "")


def append_bullet(text: str, bullet: str) -> str:
    """Add a bullet at the end of the file's list, replacing a template placeholder bullet.

    Separated by a blank line, as MemoryCustodian 0.9.1 appends, unless the list already ends in
    two bullets on consecutive lines: a tight list stays tight."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.strip() in PLACEHOLDER_BULLETS:
            lines[index] = bullet
            return "\n".join(lines).rstrip("\n") + "\n"
    stripped = text.rstrip()
    if not stripped:
        return bullet + "\n"
    tail = stripped.splitlines()[-2:]
    tight = len(tail) == 2 and all(line[:1] in ("-", "*", "+", " ") and line.strip() for line in tail)
    return stripped + ("\n" if tight else "\n\n") + bullet + "\n"


def prepend_dated_section(text: str, date: str, item: str, *, drop_line: str | None = None) -> str:
    """A new `## date` section with one item, newest first, as 0.9.1 writes inbox items and changelog
    lines: every write its own section, even on a day that already has one. An inbox of undated
    items (no `## ` sections) gets the item dated inline instead, so the old items keep no date."""
    if drop_line:
        text = _drop_lines(text, drop_line)
    if split_units(text).mode == "bullet":
        return prepend_dated_item(text, date, item)
    return prepend_entry(text, f"## {date}\n{bullet_entry(item)}")


def changelog_add(text: str, message: str, date: str) -> str:
    """The changelog with `message` recorded today (a caller without one has no changelog enabled)."""
    return prepend_dated_section(text, date, message)


# ---- templates -------------------------------------------------------------------------------

def _title_case(name: str) -> str:
    return name.replace("-", " ").replace("_", " ").title()


def module_template(rel: str, date: str, memory_dir: str = "docs/memory") -> str:
    """The text a module is created with (init's templates; MemoryCustodian 0.9.1's for rules, profiles, areas)."""
    folder, _, file = rel.partition("/")
    name = file[:-3] if file.endswith(".md") else file
    if rel in templates.EMPTY_CORE:  # a core file someone deleted comes back empty, not with init's example
        return templates.EMPTY_CORE[rel]
    if rel in templates.FILES and rel != "manifest.md":
        return templates.FILES[rel].format(date=date, memory_dir=memory_dir, package_version="", protocol_version="")
    # MemoryCustodian 0.9.1's wording (MIT; see tests/fixtures/memorycustodian/), so `enable` and
    # `add` write into a 0.9.1 folder what 0.9.1 itself would
    if folder == "rules":
        return (f"# Rule: {_title_case(name)}\n\n"
                "Rules here apply only when this task type is relevant. Keep them short and operational.\n")
    if folder == "profiles":
        return f"# Profile: {_title_case(name)}\n\nRules here apply only when this workflow profile is relevant.\n"
    if folder == "areas":
        return (f"# Area: {_title_case(name)}\n\n"
                "Memory here applies only when touched files or task scope match this area.\n")
    raise InvalidInput(f"no template for {rel}")
