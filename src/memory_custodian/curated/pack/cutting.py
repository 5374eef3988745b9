"""The context pack cut to a character limit on whole entries, by its structure (`ReadResult.cut_to`).

A host may truncate what a hook sends (Claude Code: 10,000 characters, tail first, without a
word). So a pack that is longer is cut here: on whole entries, in order of value (what was not
loaded and the warnings, then directives, then constraints, tombstones and rules, then the rest),
and everything left out is named by note id or entry heading, so nothing is missed silently.
"""

from __future__ import annotations

from ...base.errors import LIBRARY_TERMS, Terms
from ...base.records import Record
from .pack_text import pack_footer, pack_head, short_ref

RANKS = {"Ledger directives": 1, "Ledger gotchas": 2, "constraints.md": 2, "do-not-use.md": 2}

# Names listed per block of the notice: past these, a count and where every name is (listing
# hundreds of headings would cost more room than the entries they stand for).
CUT_IDS, CUT_NAMES = 60, 20


class PackPart(Record):
    """One block of the pack as whole entries: `lead` (heading and preamble) then `entries`, each
    `(text, ref, note id or None)`, exact slices of the pack's text, so a cut block reads as the
    same block with its tail removed. `rank` orders the cut: lower ranks are kept first."""

    title: str
    lead: str
    entries: list[tuple[str, str, str | None]]
    rank: int


class CutPack(Record):
    """The pack as sent: `text` (framed, at most the limit) and the ledger notes it shows in it."""

    text: str
    note_ids: list[str]
    cut: bool


def rank_of(title: str) -> int:
    return RANKS.get(title, 2 if title.startswith("rules/") else 3)


def lines_part(title: str, lines) -> PackPart:
    """A block of one-line entries `(line, note id)` under `## {title}`; a line without a note id
    goes with the entry before it (as a "more are open" line does)."""
    entries = []
    for line, note_id in lines:
        if note_id:
            entries.append((line + "\n", f"#{note_id}", note_id))
        elif entries:
            text, ref, last_id = entries[-1]
            entries[-1] = (text + line, ref, last_id)
    return PackPart(title, f"## {title}\n\n", entries, rank_of(title))


def cut_pack(result, limit: int, frame=None, extra=(), terms: Terms = LIBRARY_TERMS) -> CutPack:
    """`result`'s pack with the `extra` parts after it, framed by `frame`, in at most `limit` characters;
    the notice of a cut points to the whole pack in the caller's `terms`."""
    frame = frame or (lambda body: body)
    text = result.rendered
    for part in extra:
        text = text.rstrip("\n") + "\n\n" + (part.lead + "".join(e[0] for e in part.entries)).rstrip("\n") + "\n"
    out = frame(text) if len(text) <= limit else ""  # framing a long pack only to measure it is slow
    if out and len(out) <= limit:
        ids = result.note_ids + [e[2] for part in extra for e in part.entries if e[2]]
        return CutPack(out, ids, False)
    parts = sorted(_parts(result) + list(extra), key=lambda part: part.rank)  # stable: pack order within a rank
    order = [(part, entry) for part in parts for entry in part.entries]

    # the cut pack's tail names every warning, those the person running `read` sees on stderr too
    head = pack_head(result.task, result.canonical_task)
    tail = pack_footer(result.modules, result.sections, result.omissions, result.warnings).strip()
    room = limit
    while True:
        kept = _fit(order, head, tail, (result.task, terms), limit, room, frame)
        body = _render_cut(head, _cut_notice(order[kept:], (result.task, terms), limit), tail, order[:kept])
        out = frame(body)
        if len(out) <= limit or kept == 0:
            break
        room -= len(out) - limit  # the estimate was short (fence escapes, joins): try again
    if len(out) > limit:  # notices alone over the cap (thousands of warnings): a plain cut, still named
        out = frame(cap_text(body, max(0, limit - len(frame("")) - 200), terms))
    return CutPack(out, [entry[2] for _, entry in order[:kept] if entry[2]], True)


def cap_text(text: str, limit: int, terms: Terms = LIBRARY_TERMS) -> str:
    """`text` cut at a line end before `limit` characters, saying where the whole pack is (in `terms`)."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > limit // 2 else limit
    return text[:cut] + f"\n… cut at {limit} characters: run {terms.verb('read')} for the whole pack"


def _parts(result) -> list[PackPart]:
    from ..parse.units import split_units

    parts = []
    for module in result.modules:
        if module.disposition != "loaded" or not (module.text or "").strip():
            continue
        doc = split_units(module.text)
        entries: list[tuple[str, str, str | None]] = [(unit.text, unit.ref, None) for unit in doc.units]
        parts.append(PackPart(module.module, f"## {module.module}\n\n{doc.preamble}", entries, rank_of(module.module)))
    for section in result.sections:
        if section.text.strip():
            parts.append(PackPart(section.name, f"## {section.name}\n\n",
                                  _note_entries(section.text.strip(), section.note_ids), rank_of(section.name)))
    return parts


def _note_entries(text: str, note_ids: list[str]) -> list[tuple[str, str, str | None]]:
    """A ledger section's text split at each note's `[#id]` line; one entry if a note cannot be found."""
    whole: list[tuple[str, str, str | None]] = [(text, ", ".join(f"#{i}" for i in note_ids) or text.split("\n", 1)[0], None)]
    starts: list[int] = []
    at = 0
    for note_id in note_ids:
        found = text.find(f"[#{note_id}]", at)
        while found > 0 and text[found - 1] != "\n":
            found = text.find(f"[#{note_id}]", found + 1)
        if found < 0 or (not starts and found != 0):
            return whole
        starts.append(found)
        at = found + 1
    if not starts:
        return whole
    ends = starts[1:] + [len(text)]
    return [(text[a:b], f"#{i}", i) for a, b, i in zip(starts, ends, note_ids)]


def _fit(order, head: str, tail: str, task_terms: tuple[str, Terms], limit: int, room: int, frame) -> int:
    """How many entries (in order of value) fit with the notice naming the rest."""
    size = len(frame("")) + len(head) + len(tail) + 4
    sizes, total, started = [0], 0, set()
    for part, (text, _, _) in order:
        total += len(text)
        if id(part) not in started:
            started.add(id(part))
            total += len(part.lead) + 2
        sizes.append(total)

    def fits(kept: int) -> bool:
        return size + sizes[kept] + len(_cut_notice(order[kept:], task_terms, limit)) + 2 <= room

    # Keeping one more entry adds its text and takes at most its name (capped, see CUT_NAMES) off
    # the notice, so what is sent grows with `kept`: the most that fits is found by halving, with
    # a notice built a dozen times rather than once per entry (quadratic on a big file).
    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _cut_notice(dropped, task_terms: tuple[str, Terms], limit: int) -> str:
    """What a cut left out, and where the whole pack is (`task_terms`: the pack's task, the caller's terms)."""
    task, terms = task_terms

    if not dropped:
        return ""
    lines = [f"## Cut to fit the host's limit\n\nThe pack is longer than the {limit} characters this hook may "
             "send, so whole entries were left out (none was cut in half). "
             f"Run {terms.call('read', [('task', task)])} for the whole pack, "
             f"and {terms.call('expand', [('ids', 'ID')])} for one note. Not shown here:"]
    by_part: dict[int, tuple] = {}
    for part, entry in dropped:
        by_part.setdefault(id(part), (part, []))[1].append(entry)
    for part, entries in by_part.values():
        refs = [ref for _, ref, _ in entries]
        if any(note_id for _, _, note_id in entries) or part.title.startswith("Ledger"):
            # notes by id, as `expand` takes them
            lines.append(f"- {part.title}: {', '.join(refs[:CUT_IDS])}{_more(len(refs) - CUT_IDS, task, terms)}")
        elif len(entries) == len(part.entries):
            lines.append(f"- {part.title}: the whole file ({len(entries)} entr{'y' if len(entries) == 1 else 'ies'})")
        else:
            lines.append(f"- {part.title}: {len(entries)} of {len(part.entries)} entries: "
                         + "; ".join(short_ref(ref) for ref in refs[:CUT_NAMES])
                         + _more(len(refs) - CUT_NAMES, task, terms))
    return "\n".join(lines)


def _more(count: int, task: str, terms: Terms) -> str:
    if count <= 0:
        return ""
    return f"; and {count} more ({terms.call('read', [('task', task), ('explain', None)])} names every one)"


def _render_cut(head: str, notice: str, tail: str, kept) -> str:
    blocks = [head, notice, tail]
    by_part: dict[int, tuple] = {}
    for part, (text, _, _) in kept:
        by_part.setdefault(id(part), (part, []))[1].append(text)
    blocks.extend((part.lead + "".join(texts)).strip() for part, texts in by_part.values())
    return "\n\n".join(block for block in blocks if block) + "\n"
