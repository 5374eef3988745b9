"""The ledger rendered as Markdown: the read-only mirror people `cat`, `grep`, review and diff.

The output is a pure function of the notes: no clock, no locale, no hash order, no input order
reaches it, so an unchanged ledger exports byte-identical on any machine. Time-derived expiry is
shown as the `expires` date rather than as a state for the same reason. The block layout is the
one `edit` checks out, so what people review is what they edit.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from operator import itemgetter

from ...base.records import Factory
from ...base.skeleton import skeleton
from ..storage.model import KINDS, NOTE_FIELDS, STATES, Note

SECTION_LABELS = {
    "directive": "Directives",
    "task": "Tasks",
    "gotcha": "Gotchas",
    "finding": "Findings",
    "decision": "Decisions",
    "reference": "References",
    "operational": "Operational",
}
KIND_ORDER = {kind: i for i, kind in enumerate(KINDS)}

# Lines that are structure in a rendered block; a body line that would read as one is escaped
# with one more leading backslash (and the parser removes exactly one), so rendering is injective.
SECTION_RE = re.compile(rf"^## ({'|'.join(SECTION_LABELS.values())})(?: \(\d+\))?\s*$")
HEADING_RE = re.compile(r"^###(?:[ \t]|$)")
ID_HEADING_RE = re.compile(r"^###[ \t]+\[#[0-9a-zA-Z]+\]")
MARKER_RE = re.compile(r"^<!--\s*note\b")
# a skeleton is case-folded, and a look-alike `（` may fold to `[`
_SECTION_LOOK = re.compile(SECTION_RE.pattern.replace(r"\(\d+\)", r"[\[(]\d+[\])]"), re.I)
META_KEYS = ("kind", "priority", "tags", "paths", "reason")
META_RE = re.compile(rf"^(?:-[ \t]*)?({'|'.join(META_KEYS)})[ \t]*:", re.I)

HEADER_COMMENT = ("<!-- GENERATED FILE, do not edit: `memory-custodian export` renders it from the ledger and nothing "
                  "reads it back. To change a note, use `memory-custodian edit` (check out, edit, `edit --checkin`). -->")


def utc(iso: str | None) -> str:
    """Any ISO 8601 time as `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC (naive times are taken as UTC)."""
    if not iso:
        return ""
    if len(iso) == 24 and iso[10] == "T" and iso[19] == "." and iso[23] == "Z":
        return iso  # already the canonical UTC form (every `at` the ledger writes): skip the parse
    text = iso[:-1] + "+00:00" if iso.endswith(("Z", "z")) else iso
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return iso  # shown as recorded rather than guessed; the ledger validates its own times
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def sort_key(note: Note) -> tuple:
    """Fixed kind order, then `(created at, note id)`: the id is the total tie-break."""
    return (KIND_ORDER.get(note.kind, len(KINDS)), note.kind, utc(note.created_at), note.id)


def one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def body_lines(body: str | None) -> list[str]:
    if not body:
        return []
    if "\r" in body:
        body = body.replace("\r\n", "\n").replace("\r", "\n")
    return body.split("\n")


def is_block_start(line: str, next_line: str | None) -> bool:
    if not HEADING_RE.match(line):
        return False
    if ID_HEADING_RE.match(line):
        return True
    return next_line is not None and bool(MARKER_RE.match(next_line) or META_RE.match(next_line))


def is_structural(line: str, next_line: str | None) -> bool:
    """Whether `line` reads as the mirror's structure, by its text or by its confusable skeleton
    (a fullwidth `＃＃＃ [#…]`, a `### ` behind an invisible character): escaped either way, so a
    body cannot pose as another note's block to whoever reads the committed mirror."""
    if SECTION_RE.match(line) or is_block_start(line, next_line):
        return True
    if line.isascii() and (next_line is None or next_line.isascii()):
        return False

    look = skeleton(line)
    nxt = skeleton(next_line) if next_line is not None else None
    return bool(_SECTION_LOOK.match(look) or _looks_like_block(look, nxt))


def _looks_like_block(line: str, next_line: str | None) -> bool:
    if not HEADING_RE.match(line):
        return False
    return bool(ID_HEADING_RE.match(line)) or (next_line is not None and bool(MARKER_RE.match(next_line)
                                                                            or META_RE.match(next_line)))


def escape_body(lines: list[str]) -> list[str]:
    if not any(line[:1] in ("#", "\\") or not line.isascii() for line in lines):
        return lines  # only a line starting with `#` or a backslash, or a look-alike of one, can need escaping
    out = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        out.append("\\" + line if is_structural(line.lstrip("\\"), nxt) else line)
    return out


_PLAIN_OK: dict[tuple[str, bool], bool] = {}  # tags and paths repeat across notes: judge each once


def _plain_ok(item: str, code: bool) -> bool:
    key = (item, code)
    ok = _PLAIN_OK.get(key)
    if ok is None:
        ok = bool(item) and "`" not in item and item == item.strip() and item.isprintable() and \
            (code or ("," not in item and not item.startswith("[")))
        if len(_PLAIN_OK) < 100_000:
            _PLAIN_OK[key] = ok
    return ok


def format_list(items, *, code: bool = False) -> str:
    """Tags and paths: plain or backticked, comma-separated; JSON when an item cannot be written so."""
    if not items:
        return ""
    for i in items:
        if not _plain_ok(i, code):
            return json.dumps(list(items), ensure_ascii=False)
    if code:
        return "`" + "`, `".join(items) + "`"
    return ", ".join(items)


def sorted_items(items) -> list[str]:
    # tags and paths are sets to the reader: sorted so neither input order nor hash order shows
    return sorted(set(items)) if items else []


# The renderer reads rows, not `Note`s: a row is {field: value} of every field of a note. A
# `Note`'s row is its own attribute dict; the index hands over rows it read without making a
# `Note` (`Index.export_rows`), so both paths share one renderer and give the same bytes. The
# fields declared `shown="line"` in the model get a `- name: value` line after the fixed ones.
LINE_FIELDS = tuple((f.name, f.default.make() if isinstance(f.default, Factory) else f.default)
                    for f in NOTE_FIELDS if f.shown == "line")


def note_row(note: Note) -> dict:
    return note.__dict__


# raw tags or paths (tuple or newline-joined text) -> the rendered line; combinations repeat a lot
_LABEL_LINES: dict[str, dict] = {"tags": {}, "paths": {}}


def _label_line(name: str, raw, code: bool) -> str:
    cache = _LABEL_LINES[name]
    line = cache.get(raw)
    if line is None:
        items = raw.split("\n") if raw.__class__ is str else raw
        text = format_list(sorted_items(items), code=code) if items else ""
        line = f"- {name}: {text}\n" if text else f"- {name}:\n"
        if len(cache) > 50_000:
            cache.clear()
        cache[raw] = line
    return line


def _render_blocks(out: list, entries) -> None:
    """Append each entry's block to `out` as one string; entries are `(UTC created at, id, row)`.

    This runs 75k times on a big ledger: one f-string per block, lines that are usually absent
    tested once, and a body that needs no escaping or trimming copied as it is.
    """
    ap = out.append
    label = _label_line
    tag_lines, path_lines = _LABEL_LINES["tags"], _LABEL_LINES["paths"]
    for created, nid, v in entries:
        title, body, tags, paths = v["title"], v["body"], v["tags"], v["paths"]
        if title:
            title = " ".join(title.split())
            if title:
                title = " " + title
        state = v["state"]
        if state == "active":
            state_text = "active"
        else:
            reason = v["state_reason"]
            reason = " ".join(reason.split()) if reason else ""
            tail = f" — {reason}" if reason else ""
            if state == "superseded":
                by = v["superseded_by"]
                state_text = f"superseded by #{by}{tail}" if by else f"superseded{tail}"
            else:
                state_text = f"{state}{tail}"
        opt = ""
        updated = v["updated_at"]
        if updated and updated != v["created_at"]:
            opt = f"- updated: {utc(updated)}\n"
        if v["supersedes"]:
            opt += f"- supersedes: #{v['supersedes']}\n"
        extra = v["extra"]
        expires = v["expires"]
        if expires:
            default = " (the kind's default lifetime)" if extra and extra.get("expires_default") else ""
            opt += f"- expires: {utc(expires)}{default}\n"
        scope = v["scope"]
        if scope and scope != "workspace":
            branch = v["branch"]
            opt += f"- scope: {scope} `{branch}`\n" if branch else f"- scope: {scope}\n"
        quote = v["quote"]
        if quote or extra:
            if quote:
                opt += f"- quote: {json.dumps(quote, ensure_ascii=False)}\n"
            for key in sorted(k for k in extra if k != "expires_default"):
                opt += f"- {key}: {json.dumps(extra[key], ensure_ascii=False, sort_keys=True)}\n"
        for name, unset in LINE_FIELDS:
            if v[name] != unset:
                opt += f"- {name}: {json.dumps(v[name], ensure_ascii=False, sort_keys=True)}\n"
        if body:
            plain = body.isascii()
            if "#" in body or "\\" in body or "\r" in body or body[-1].isspace() or not plain:
                # only a line starting with `#`, a backslash or a look-alike can need escaping; trailing blank lines go
                lines = escape_body(body_lines(body)) if ("#" in body or "\\" in body or "\r" in body or not plain) \
                    else body.split("\n")
                while lines and not lines[-1].strip():
                    lines.pop()
                body = "\n".join(lines)
            # else: the last line is not blank and nothing needs escaping: the text is the lines joined
        end = f"\n{body}\n\n" if body else "\n"
        tag_line = (tag_lines.get(tags) or label("tags", tags, False)) if tags else "- tags:\n"
        path_line = (path_lines.get(paths) or label("paths", paths, True)) if paths else "- paths:\n"
        ap(f"### [#{nid}]{title}\n- kind: {v['kind']}\n- priority: {v['priority']}\n{tag_line}{path_line}"
           f"- provenance: {v['provenance']}\n- state: {state_text}\n- created: {created} by {v['created_by']}\n{opt}{end}")


def _joined_key(entry) -> str:
    return entry[0] + entry[1]


_pair_key = itemgetter(0, 1)


def render_export(notes, *, source: str = "docs/memory/ledger/") -> str:
    """The whole mirror. `notes` in any order; forgotten notes are never rendered."""
    return render_rows([note_row(n) for n in notes if n.state != "forgotten"], source=source)


def render_rows(rows, *, source: str = "docs/memory/ledger/") -> str:
    """The whole mirror from rows (see `note_row`), in any order; forgotten notes are never rendered.

    Order: fixed kind order (unknown kinds after, by name), then `(UTC created at, note id)` —
    the id is the total tie-break (and the input position after it, should an id repeat).
    """
    counts = {state: 0 for state in STATES if state != "forgotten"}
    by_kind: dict[str, list] = {}
    n = 0
    fixed_width = True  # every UTC time is 24 characters: then `time + id` sorts as `(time, id)` does
    for row in rows:
        state = row["state"]
        if state == "forgotten":
            continue
        counts[state] = counts.get(state, 0) + 1
        kind = row["kind"]
        bucket = by_kind.get(kind)
        if bucket is None:
            bucket = by_kind[kind] = []
        created = utc(row["created_at"])
        if len(created) != 24:
            fixed_width = False
        bucket.append((created, row["id"], row))
        n += 1
    # one string key per note compares much faster than a tuple; sort is stable, so notes with the
    # same time and id (only possible in hand-made input) keep their input order either way
    order = _joined_key if fixed_width else _pair_key
    summary = " · ".join(f"{counts[s]} {s}" for s in sorted(counts, key=lambda s: (STATES.index(s) if s in STATES else 99, s)))
    header = [
        HEADER_COMMENT,
        "# Ledger export",
        "",
        f"Read-only mirror of the ledger in `{source}`, rendered by `memory-custodian export`.",
        "Nothing reads this file back and every export overwrites it: to change memory, use",
        "`memory-custodian edit` (or `remember`, `supersede`, `revoke`, `forget --note`).",
        "Every note is listed, superseded, revoked and expired ones included; times are UTC.",
        "",
        f"**{n} notes**: {summary}",
        "",
    ]
    out = ["\n".join(header) + "\n"]
    for kind in sorted(by_kind, key=lambda k: (KIND_ORDER.get(k, len(KINDS)), k)):
        bucket = by_kind[kind]
        bucket.sort(key=order)
        out.append(f"## {SECTION_LABELS.get(kind, kind.capitalize())} ({len(bucket)})\n\n")
        _render_blocks(out, bucket)
    # the text ends in exactly one newline (trimmed per piece: no copy of the whole text)
    while len(out) > 1 and not out[-1].rstrip("\n"):
        out.pop()
    out[-1] = out[-1].rstrip("\n")
    out.append("\n")
    return "".join(out)
