"""The edit buffer: active notes checked out as Markdown, and a check-in that turns edits into events.

A person edits text; the ledger only ever gains events. So check-out records, per block, the
note's last event and a hash of what was shown; check-in re-parses the file, treats a block as
touched only when its hash no longer matches, and maps each touched block to events (a removed
block to `revoke`, a changed one to a new note plus `supersede`, a new one to `create`). The
parser is strict where a guess could lose or invent a note: what it cannot read is refused with
the line number.
"""

from __future__ import annotations

import hashlib
import json
import re
from itertools import pairwise

from ...base.errors import InvalidInput, Refused
from ...base.records import Record, field
from ..storage.inputs import DEFAULT_PROVENANCE
from ..storage.inputs import default_title as from_text
from ..storage.model import KINDS, PRIORITIES, Note
from .export import (
    META_KEYS,
    SECTION_LABELS,
    SECTION_RE,
    escape_body,
    format_list,
    is_block_start,
    is_structural,
    one_line,
    sort_key,
    sorted_items,
    utc,
)

CHECKOUT_TAG = "<!-- memory-custodian edit check-out"
READONLY_KEYS = ("provenance", "state", "created", "updated", "supersedes", "expires", "scope", "quote")
_HEADING_PARTS = re.compile(r"^###[ \t]*(?:\[#([^\]]*)\])?[ \t]*(.*?)[ \t]*$")
_MARKER_PARTS = re.compile(r"^<!--\s*note\s+#?([0-9A-Za-z]*)(?:.*?\blast event\s+([0-9A-Za-z]+))?(?:.*?\bsha\s+([0-9a-f]+))?")
_FIELD = re.compile(r"^(?:-[ \t]*)?([A-Za-z][A-Za-z _-]*?)[ \t]*:[ \t]*(.*?)[ \t]*$")
_MANIFEST_LINE = re.compile(r"^\s*#?([0-9a-z]{8})\s+([0-9A-Za-z]+)(?:\s+([0-9a-f]+))?\s*$")
NOTE_ID_RE = re.compile(r"^[0-9abcdefghjkmnpqrstvwxyz]{8}$")

INSTRUCTIONS = """\
Check this file back in with `memory-custodian edit --checkin FILE [--reason R]`. Every change
becomes ledger events; nothing is overwritten, and an unchanged block records nothing.
- change a title, body, kind, priority, tags or paths: a new note supersedes the old one
- delete a block: the note is revoked; give `--reason R`, or keep its heading and write a
  `- reason: ...` line with no body below it
- add a note: a line `### Title`, then `- kind: finding` (optional `- priority:`, `- tags:`,
  `- paths:`), a blank line, then the body (provenance human)
- a `- reason: ...` line in a changed block is recorded as the reason for that change; `--reason`
  is the removals' reason, and the edits' only when no block was removed
Keep this comment above the first note, and each block's `<!-- note` line: they tie
blocks to notes, and a note that changed in the ledger since check-out refuses the check-in."""


def norm_body(body: str | None) -> str:
    lines = [line.rstrip() for line in (body or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def fields_of(title, body, kind, priority, tags, paths) -> dict:
    """The editable fields, normalized the way both sides of a comparison see them."""
    return {
        "title": one_line(title),
        "body": norm_body(body),
        "kind": kind,
        "priority": priority,
        "tags": sorted_items(tags),
        "paths": sorted_items(paths),
    }


def note_fields(note: Note) -> dict:
    return fields_of(note.title, note.body, note.kind, note.priority, note.tags, note.paths)


def fields_hash(fields: dict) -> str:
    raw = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


# ---- check-out ---------------------------------------------------------------------------------

def render_checkout(notes, *, checked_out_at: str) -> str:
    notes = sorted(notes, key=sort_key)
    out = [CHECKOUT_TAG, f"checked-out: {utc(checked_out_at)}", *INSTRUCTIONS.split("\n"),
           "notes (id, last event, sha at check-out):"]
    out.extend(f"{n.id} {n.last_event} {fields_hash(note_fields(n))}" for n in notes)
    out += ["-->", "# Active notes (edit check-out)", ""]
    current = None
    for note in notes:
        if note.kind != current:
            current = note.kind
            out += [f"## {SECTION_LABELS.get(current, current.capitalize())}", ""]
        out.extend(render_block(note))
    return "\n".join(out).rstrip("\n") + "\n"


def render_block(note: Note) -> list[str]:
    state = " · stale" if note.state == "stale" else ""
    marker = (f"<!-- note {note.id} · last event {note.last_event} · sha {fields_hash(note_fields(note))}"
              f" · provenance {note.provenance}{state} · created {utc(note.created_at)} · keep this line -->")
    out = [f"### [#{note.id}] {one_line(note.title)}".rstrip(), marker,
           f"- kind: {note.kind}", f"- priority: {note.priority}",
           f"- tags: {format_list(sorted_items(note.tags))}".rstrip(),
           f"- paths: {format_list(sorted_items(note.paths), code=True)}".rstrip(), ""]
    lines = escape_body([line.rstrip() for line in norm_body(note.body).split("\n")] if norm_body(note.body) else [])
    if lines:
        out += lines + [""]
    return out


# ---- parsing -----------------------------------------------------------------------------------

class Block(Record):
    """One note block of a checked-out buffer: `line` the 1-based line of its heading."""

    line: int
    id: str | None
    last_event: str | None
    sha: str | None
    title: str
    kind: str | None = None
    priority: str | None = None
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    reason: str | None = None
    body: str = ""
    field_lines: dict[str, int] = field(default_factory=dict)

    def fields(self) -> dict:
        return fields_of(self.title, self.body, self.kind, self.priority, self.tags, self.paths)


class Buffer(Record):
    """A parsed buffer: `manifest` is note id -> (last event id, sha)."""

    checked_out_at: str
    manifest: dict[str, tuple[str, ...]]
    blocks: list[Block]


def parse_list(value: str, path: str, line: int, what: str) -> tuple:
    value = value.strip()
    if not value:
        return ()
    if value.startswith("["):
        try:
            items = json.loads(value)
        except ValueError:
            items = None
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise InvalidInput(f"{what} must be a comma-separated list or a JSON list of strings", path=path, line=line)
        return tuple(items)
    if "`" in value:
        items = re.findall(r"`([^`]*)`", value)
        rest = re.sub(r"`[^`]*`", "", value)
        if rest.strip(" ,\t"):
            raise InvalidInput(f"{what}: text outside backticks ({rest.strip(' ,')!r}); write `a`, `b` or a, b",
                               path=path, line=line)
        return tuple(i.strip() for i in items if i.strip())
    return tuple(i.strip() for i in value.split(",") if i.strip())


def _unescape(lines: list[str]) -> list[str]:
    out = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if line.startswith("\\") and is_structural(line.lstrip("\\"), nxt):
            line = line[1:]
        out.append(line)
    return out


def parse_buffer(text: str, path: str = "<buffer>") -> Buffer:
    """Parse an edit buffer; anything it cannot read is an InvalidInput naming the line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    n = len(lines)
    starts = [i for i in range(n) if is_block_start(lines[i], lines[i + 1] if i + 1 < n else None)]
    bounds = [0, *starts, n]
    fenced: set[int] = set()
    for lo, hi in pairwise(bounds):
        fenced |= _fenced_lines(lines, lo, hi)
    # a section heading typed inside a code fence is body text; a block start always starts a block
    sections = [i for i in range(n) if SECTION_RE.match(lines[i]) and i not in fenced]
    structural = sorted(set(starts) | set(sections))
    first = structural[0] if structural else n
    checked_out_at, manifest = _parse_preamble(lines[:first], path)
    if manifest is None:
        raise InvalidInput("the check-out comment (`<!-- memory-custodian edit check-out ...`) is missing above "
                           "the first note; check out again with `edit --checkout FILE`", path=path, line=1)
    blocks = []
    start_set = set(starts)
    for k, s in enumerate(structural):
        end = structural[k + 1] if k + 1 < len(structural) else n
        if s in start_set:
            blocks.append(_parse_block(lines, s, end, path))
        else:
            for j in range(s + 1, end):
                if lines[j].strip():
                    raise _outside(path, j)
    seen: dict[str, int] = {}
    for b in blocks:
        if b.id is None:
            continue
        if b.id in seen:
            raise InvalidInput(f"note #{b.id} appears twice (lines {seen[b.id]} and {b.line}); keep one block",
                               path=path, line=b.line)
        seen[b.id] = b.line
        if b.id not in manifest:
            raise InvalidInput(f"note #{b.id} was not checked out in this file; remove its id to add it as a new note",
                               path=path, line=b.line)
        if b.last_event is None:
            b.last_event = manifest[b.id][0]
        if b.sha is None:
            b.sha = manifest[b.id][1]
    return Buffer(checked_out_at, manifest, blocks)


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _fenced_lines(lines: list[str], lo: int, hi: int) -> set[int]:
    """Lines inside closed code fences between `lo` and `hi`; an opener never closed fences nothing."""
    out: set[int] = set()
    i = lo
    while i < hi:
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        mark = m.group(1)
        close = next((j for j in range(i + 1, hi)
                      if (c := _FENCE.match(lines[j])) and c.group(1)[0] == mark[0] and len(c.group(1)) >= len(mark)
                      and not lines[j][c.end():].strip()), None)
        if close is None:
            i += 1
            continue
        out.update(range(i + 1, close))
        i = close + 1
    return out


def _outside(path: str, j: int) -> InvalidInput:
    return InvalidInput("text outside a note block; start a note with `### Title` and a `- kind:` line, or delete it",
                        path=path, line=j + 1)


def _parse_preamble(lines: list[str], path: str):
    checked_out_at, manifest = None, None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or line.startswith("# "):
            i += 1
            continue
        if stripped.startswith("<!--"):
            j = i
            while "-->" not in lines[j]:
                j += 1
                if j >= len(lines):
                    raise InvalidInput("comment is never closed with `-->`", path=path, line=i + 1)
            if line.startswith(CHECKOUT_TAG):
                if manifest is not None:
                    raise InvalidInput("a second check-out comment; keep one", path=path, line=i + 1)
                checked_out_at, manifest = _parse_manifest(lines[i:j + 1], i, path)
            i = j + 1
            continue
        raise _outside(path, i)
    return checked_out_at, manifest


def _parse_manifest(lines: list[str], offset: int, path: str):
    checked_out_at, manifest, listing = None, {}, False
    for k, line in enumerate(lines):
        body = line.replace(CHECKOUT_TAG, "", 1) if k == 0 else line
        body = body.split("-->")[0].strip()
        if not body:
            continue
        if body.startswith("checked-out:"):
            checked_out_at = body.split(":", 1)[1].strip()
        elif body.startswith("notes (id"):
            listing = True
        elif listing:
            m = _MANIFEST_LINE.match(body)
            if not m:
                raise InvalidInput("unreadable line in the check-out list (expected `<note id> <last event> <sha>`); "
                                   "check out again", path=path, line=offset + k + 1)
            manifest[m.group(1)] = (m.group(2), m.group(3))
    return checked_out_at, manifest


def _parse_block(lines: list[str], s: int, end: int, path: str) -> Block:
    m = _HEADING_PARTS.match(lines[s])
    assert m is not None  # `s` is a heading line, which the pattern matches
    note_id, title = m.group(1), m.group(2)
    if note_id is not None:
        note_id = note_id.strip().lstrip("#").lower()
        if not NOTE_ID_RE.match(note_id):
            raise InvalidInput(f"`[#{m.group(1)}]` is not a note id (8 characters); remove it to add a new note",
                               path=path, line=s + 1)
    block = Block(line=s + 1, id=note_id, last_event=None, sha=None, title=title)
    j = s + 1
    if j < end and re.match(r"^<!--\s*note\b", lines[j]):
        mm = _MARKER_PARTS.match(lines[j])
        marker_id = (mm.group(1) or "").lower() if mm else ""
        if marker_id and not NOTE_ID_RE.match(marker_id):
            raise InvalidInput(f"`note {marker_id}` in this line is not a note id; restore the line or delete it",
                               path=path, line=j + 1)
        if block.id and marker_id and marker_id != block.id:
            raise InvalidInput(f"the heading says #{block.id} but this line says #{marker_id}; keep them the same",
                               path=path, line=j + 1)
        block.id = block.id or marker_id or None
        if mm:
            block.last_event, block.sha = mm.group(2), mm.group(3)
        j += 1
    while j < end and lines[j].strip():
        fm = _FIELD.match(lines[j])
        if not fm:
            break  # the blank line before the body was deleted: the body starts here
        key = fm.group(1).strip().lower()
        if key in READONLY_KEYS:
            raise InvalidInput(f"`{key}:` is read-only here (an export is not an edit check-out; use `edit --checkout`)",
                               path=path, line=j + 1)
        if key not in META_KEYS:
            if not lines[j].lstrip().startswith("-"):
                break  # a body that starts right below the fields, like `Note: ...`
            raise InvalidInput(f"unknown field `{key}` (fields: {', '.join(META_KEYS)}); put a blank line before the body",
                               path=path, line=j + 1)
        if key in block.field_lines:
            raise InvalidInput(f"`{key}:` given twice (also line {block.field_lines[key]})", path=path, line=j + 1)
        block.field_lines[key] = j + 1
        value = fm.group(2)
        if key in ("kind", "priority"):
            value = value.lower()
        if key == "kind":
            if value not in KINDS:
                raise InvalidInput(f"unknown kind {value!r}; use one of {', '.join(KINDS)}", path=path, line=j + 1)
            block.kind = value
        elif key == "priority":
            if value not in PRIORITIES:
                raise InvalidInput(f"unknown priority {value!r}; use one of {', '.join(PRIORITIES)}", path=path, line=j + 1)
            block.priority = value
        elif key == "tags":
            block.tags = parse_list(value, path, j + 1, "tags")
        elif key == "paths":
            block.paths = parse_list(value, path, j + 1, "paths")
        else:
            block.reason = one_line(value) or None
        j += 1
    block.body = norm_body("\n".join(_unescape(lines[j:end])))
    if block.id is None and block.kind is None:
        raise InvalidInput("this note has no `- kind:` line; add one (e.g. `- kind: finding`)", path=path, line=s + 1)
    return block


# ---- diff → events -----------------------------------------------------------------------------

class Change(Record):
    """One step of a check-in: `action` create, supersede or revoke; `note` the existing note (None
    for create); `changed` the field names that differ."""

    action: str
    note: str | None
    line: int | None
    changed: list[str] = field(default_factory=list)
    reason: str | None = None
    block: Block | None = None
    recorded_last_event: str | None = None


def plan_changes(buf: Buffer, notes: dict, *, reason: str | None, path: str = "<buffer>") -> list:
    """What the check-in means, before any conflict check: one Change per touched note or new block.

    `notes` is the ledger's current notes by id; a touched note missing there is left for the
    conflict check to report (it was forgotten or rewritten since check-out).
    """
    by_id = {b.id: b for b in buf.blocks if b.id}
    # a --reason given for deleted blocks is theirs; it stands for the edits only when none was deleted
    edit_reason = None if any(note_id not in by_id for note_id in buf.manifest) else reason
    changes, missing_reason = [], []
    for note_id, (last_event, _sha) in buf.manifest.items():
        block = by_id.get(note_id)
        if block is None:
            if not reason:
                missing_reason.append(f"#{note_id}")
            changes.append(Change("revoke", note_id, None, reason=reason, recorded_last_event=last_event))
            continue
        if not block.body and block.reason:
            # an emptied block with a reason is a removal, whatever is left of its heading
            changes.append(Change("revoke", note_id, block.line, reason=block.reason, block=block,
                                  recorded_last_event=block.last_event))
            continue
        if block.sha and fields_hash(block.fields()) == block.sha:
            continue  # untouched: never an event, never a conflict
        current = notes.get(note_id)
        if not block.body and current is not None and norm_body(current.body):
            raise InvalidInput(f"note #{note_id} has no body left: to revoke it add a `- reason: ...` line, "
                               "to keep it restore its text", path=path, line=block.line)
        if block.kind is None or block.priority is None:
            missing = "kind" if block.kind is None else "priority"
            raise InvalidInput(f"note #{note_id} has no `- {missing}:` line; restore it", path=path, line=block.line)
        if current is not None and block.sha is None and note_fields(current) == block.fields():
            continue
        changed = []
        if current is not None:
            old = note_fields(current)
            changed = [k for k in ("title", "body", "kind", "priority", "tags", "paths") if old[k] != block.fields()[k]]
        changes.append(Change("supersede", note_id, block.line, changed=changed, reason=block.reason or edit_reason,
                              block=block, recorded_last_event=block.last_event))
    for block in buf.blocks:
        if block.id:
            continue
        if not block.body and not block.title:
            raise InvalidInput("a new note needs a title or a body", path=path, line=block.line)
        changes.append(Change("create", None, block.line, block=block))
    if missing_reason:
        raise Refused(f"removed notes need a reason: {', '.join(missing_reason)} — pass {{field=}}, or keep each "
                      "block's heading with a `- reason: ...` line and no body", path=path, field="reason")
    return changes


def describe_since(events: list, recorded: str | None) -> str:
    """What happened to a note after the recorded event, for a conflict message."""
    ids = [e.get("id") for e in events]
    later = events[ids.index(recorded) + 1:] if recorded in ids else events
    if not later:
        return "its history was rewritten"
    parts = []
    for e in later:
        why = f" ({one_line(e.get('reason'))})" if e.get("reason") else ""
        parts.append(f"{e.get('op')} by {e.get('actor')} at {utc(e.get('at'))}{why}")
    return "; ".join(parts)


def default_title(title: str, body: str) -> str:
    return title or from_text(body)


def build_events(changes: list, notes: dict, *, new_note_id, supersede_reason: str,
                 actor: str = "human") -> tuple[list, list]:
    """The txn's events by `actor`, in buffer order, and a report row per change. A block's words are the
    actor's, at its own provenance; a block whose labels alone changed keeps its author's words and
    provenance, but never `human` from anyone but a person (only a person reaches it)."""
    own = DEFAULT_PROVENANCE[actor]
    events, report = [], []
    for ch in changes:
        if ch.action == "revoke":
            events.append({"op": "revoke", "note": ch.note, "actor": actor, "reason": ch.reason})
            report.append({"action": "revoke", "note": ch.note, "reason": ch.reason, "line": ch.line})
            continue
        b = ch.block
        nid = new_note_id()
        create = {
            "op": "create", "note": nid, "actor": actor, "kind": b.kind, "priority": b.priority or "medium",
            "title": default_title(one_line(b.title), b.body), "body": b.body,
            "tags": list(b.tags), "paths": list(b.paths), "provenance": own, "scope": "workspace",
        }
        if ch.action == "create":
            events.append(create)
            report.append({"action": "create", "note": nid, "line": ch.line})
            continue
        old = notes[ch.note]
        text_changed = "title" in ch.changed or "body" in ch.changed
        if not text_changed and (old.provenance != "human" or actor == "human"):
            # only the labels changed: the words are still the old author's, so is the provenance
            create["provenance"] = old.provenance
            if old.quote:
                create["quote"] = old.quote
        create["scope"] = old.scope or "workspace"
        if old.branch:
            create["branch"] = old.branch
        if old.expires and not (old.extra or {}).get("expires_default"):
            create["expires"] = old.expires  # an explicit expiry carries over; a default one restarts
        create["supersedes"] = ch.note
        why = ch.reason or supersede_reason
        events.append(create)
        events.append({"op": "supersede", "note": ch.note, "actor": actor, "by": nid, "reason": why})
        report.append({"action": "supersede", "note": ch.note, "by": nid, "changed": ch.changed, "reason": why,
                       "line": ch.line})
    return events, report
