"""Semantic units: how a curated file splits into complete entries that packing never cuts.

A file is H2 sections if it has any, otherwise top-level (column-0 `- `) bullets with their
continuation lines, otherwise one body. Lines before the first unit are the preamble. Fenced
code (``` or ~~~) is opaque: a `## ` or `- ` inside a fence is never a boundary, which is where
we deliberately differ from MemoryCustodian 0.9.1.

The split is lossless: `Document.lines` keep their line endings, the preamble and every unit's
`text` are exact slices of them, so `serialize(doc)` rebuilds the input byte for byte and a
writer can drop or insert units and re-serialise without disturbing the rest of the file.
"""

from __future__ import annotations

from ...base.records import Record, field
from ...base.tokens import estimate_tokens

SECTION = "section"
BULLET = "bullet"
BODY = "body"


class Unit(Record):
    """One complete entry: an H2 section, a top-level bullet with its continuation lines, or a body.

    `kind` is section, bullet or body; `heading` the H2 text, or the bullet's / body's first line;
    `text` the exact source text, line endings included; `start_line`..`end_line` 1-based, inclusive."""

    kind: str
    heading: str
    text: str
    start_line: int
    end_line: int

    # a file splits into thousands of units: the generic Record init would double the split's time
    def __init__(self, kind: str, heading: str, text: str, start_line: int, end_line: int):
        self.kind, self.heading, self.text, self.start_line, self.end_line = kind, heading, text, start_line, end_line

    @property
    def ref(self) -> str:
        """How explain names this unit: its heading, or its first line for bullets and bodies."""
        return self.heading

    def __repr__(self) -> str:  # not the whole text, which can be long
        return f"Unit({self.kind!r}, {self.heading!r}, lines {self.start_line}-{self.end_line})"


class Document(Record):
    """A file split into its preamble and units; `serialize` puts it back together.

    `preamble` is the exact text before the first unit (may be ""); `source` the text that was split;
    `mode` section, bullet, body or empty; `unclosed_fence_line` the 1-based line of a fence that never
    closes, or None."""

    preamble: str
    units: list[Unit]
    source: str = ""
    mode: str = BODY
    unclosed_fence_line: int | None = None

    @property
    def lines(self) -> list[str]:
        """Source lines (split on `\\n` only), endings kept."""
        return _lines(self.source)

    @property
    def text(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"Document(mode={self.mode!r}, units={len(self.units)})"


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    out = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def fence_mask(lines: list[str]) -> tuple[list[bool], int | None]:
    """For each line, whether it is inside (or delimits) a fenced code block; plus an unclosed fence's line."""
    mask = [False] * len(lines)
    fence_char = ""
    fence_len = 0
    opened_at: int | None = None
    for index, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if fence_char:
            mask[index] = True
            if indent <= 3 and stripped.startswith(fence_char * fence_len):
                run = len(stripped) - len(stripped.lstrip(fence_char))
                if run >= fence_len and not stripped[run:].strip():
                    fence_char = ""
                    opened_at = None
            continue
        if indent <= 3 and stripped.startswith(("```", "~~~")):
            char = stripped[0]
            run = len(stripped) - len(stripped.lstrip(char))
            # a backtick fence's info string may not contain a backtick (CommonMark)
            if char == "`" and "`" in stripped[run:]:
                continue
            fence_char, fence_len, opened_at = char, run, index + 1
            mask[index] = True
    return mask, (opened_at if fence_char else None)


def unclosed_fence(text: str) -> int | None:
    """The 1-based line of a code fence in `text` that never closes, or None."""
    if "```" not in text and "~~~" not in text:
        return None
    return fence_mask(_lines(text))[1]


def hidden_entries(unit: Unit) -> list[tuple[str, int]]:
    """(heading, line) of each fenced line inside `unit` that would otherwise start an entry.

    Asked only of files with a fence that never closes: there, every later entry is fenced and
    rides along inside one unit, and each must still be named when that unit is left out. Every
    fenced marker line counts, not only those after the unclosed fence: a stray fence can pair with
    a later entry's fence, and naming a line of code too many beats missing a rule.
    """
    if unit.kind == BODY or ("```" not in unit.text and "~~~" not in unit.text):
        return []
    markers = ("## ",) if unit.kind == SECTION else ("## ", "- ")
    lines = _lines(unit.text)
    mask, _ = fence_mask(lines)
    found = []
    for index, (line, fenced) in enumerate(zip(lines, mask)):
        marker = next((m for m in markers if line.startswith(m)), None) if fenced else None
        if marker is not None:
            found.append((line[len(marker):].strip(), unit.start_line + index))
    return found


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _boundaries(text: str, marker: str, mask: list[bool] | None, lines: list[str] | None) -> list[int]:
    """Character offsets of lines starting with `marker` (outside fences when a mask is given)."""
    if mask is None:
        offsets = [0] if text.startswith(marker) else []
        at = text.find("\n" + marker)
        while at >= 0:
            offsets.append(at + 1)
            at = text.find("\n" + marker, at + 1)
        return offsets
    assert lines is not None  # a mask is made from the lines
    offsets, pos = [], 0
    for line, fenced in zip(lines, mask):
        if not fenced and line.startswith(marker):
            offsets.append(pos)
        pos += len(line)
    return offsets


def split_units(text: str) -> Document:
    """Split `text` into a preamble and complete units (see the module docstring)."""
    if not text.strip():
        return Document(preamble=text, units=[], source=text, mode="empty")
    mask = lines = unclosed = None
    if "```" in text or "~~~" in text:
        lines = _lines(text)
        mask, unclosed = fence_mask(lines)
    mode = SECTION
    starts = _boundaries(text, "## ", mask, lines)
    if not starts:
        mode = BULLET
        starts = _boundaries(text, "- ", mask, lines)
    if not starts:
        # no boundaries: the whole file is one body unit, so there is no preamble to keep apart
        unit = Unit(BODY, _first_line(text), text, 1, _line_count(text))
        return Document(preamble="", units=[unit], source=text, mode=BODY, unclosed_fence_line=unclosed)
    units: list[Unit] = []
    append = units.append
    find, count = text.find, text.count
    skip = 3 if mode == SECTION else 2
    line = count("\n", 0, starts[0]) + 1
    size = len(text)
    for start, end in zip(starts, starts[1:] + [size]):
        newline = find("\n", start, end)
        heading = text[start + skip: end if newline < 0 else newline].strip()
        span = count("\n", start, end)
        append(Unit(mode, heading, text[start:end], line, line + span - 1))
        line += span
    if not text.endswith("\n"):
        units[-1].end_line += 1  # the last line has no newline of its own
    return Document(preamble=text[: starts[0]], units=units, source=text, mode=mode, unclosed_fence_line=unclosed)


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def render(document: Document, units: list[Unit], *, include_preamble: bool = True) -> str:
    """The packing render: the preamble and each chosen unit, stripped, joined by one blank line."""
    parts = [document.preamble.strip()] if include_preamble else []
    parts.extend(unit.text.strip() for unit in units)
    return "\n\n".join(part for part in parts if part)


def serialize(document: Document, units: list[Unit] | None = None, *, preamble: str | None = None) -> str:
    """Rebuild the file from its preamble and `units` (default: the document's own, giving the input back).

    Unit texts are concatenated exactly; a unit whose text lacks a final newline gets one when
    something follows it, so removing or inserting units never glues two entries together.
    """
    chosen = document.units if units is None else units
    head = document.preamble if preamble is None else preamble
    pieces = [head]
    for unit in chosen:
        if pieces[-1] and not pieces[-1].endswith("\n"):
            pieces.append("\n")
        pieces.append(unit.text)
    return "".join(pieces)


def make_unit(text: str) -> Unit:
    """A new unit (for inserting) from its source text; its kind is decided by its first line."""
    first = text.lstrip("\n").split("\n", 1)[0]
    if first.startswith("## "):
        kind, heading = SECTION, first[3:].strip()
    elif first.startswith("- "):
        kind, heading = BULLET, first[2:].strip()
    else:
        kind, heading = BODY, _first_line(text)
    return Unit(kind, heading, text, 0, 0)


class Packed(Record):
    """What packing kept (`chosen`, rendered as `text`) and what it left out (`omitted`).

    `omitted_entries` names what was left out as (heading, line), one per entry: an omitted unit,
    then any entries a fence that never closes hid inside it, so counts and names are complete.
    """

    text: str
    chosen: list[Unit]
    omitted: list[Unit]
    oversized: bool
    tokens: int
    omitted_entries: list[tuple[str, int]] = field(default_factory=list)


def _exceeds(text: str, budget: int) -> bool:
    """estimate_tokens(text) > budget, without counting a large file to its end."""
    # every token is at least one character, so a prefix with more tokens than the budget decides it
    window = 16 * (budget + 1)
    if len(text) > window and estimate_tokens(text[:window]) > budget:
        return True
    return estimate_tokens(text) > budget


def pack(text: str, budget: int | None) -> Packed:
    """Complete units in source order until the next does not fit; never a unit cut in half.

    This is MemoryCustodian 0.9.1's algorithm, kept exactly so packs are byte-identical: the
    candidate is the chosen items rendered (stripped, joined by a blank line) and its size is
    counted as a whole, with the preamble as the first item. The first item that does not fit is
    kept whole and reported oversized when nothing semantic was chosen before it; otherwise it and
    everything after it are omitted. Counting is incremental: the joins are whitespace, which the
    estimator never counts and never merges across, so a candidate's tokens are the sum of its parts.
    """
    normalized = text.strip()
    if budget is None or not _exceeds(normalized, budget):
        return Packed(normalized, [], [], False, estimate_tokens(normalized))
    document = split_units(normalized)
    items: list[Unit | None] = ([None] if document.preamble.strip() else []) + list(document.units)
    use_preamble = False
    chosen: list[Unit] = []
    oversized = False
    stop = len(items)
    used = 0
    for index, item in enumerate(items):
        cost = estimate_tokens(document.preamble if item is None else item.text)
        if used + cost <= budget:
            used += cost
            if item is None:
                use_preamble = True
            else:
                chosen.append(item)
            continue
        if item is None or not chosen:
            used += cost
            if item is None:
                use_preamble = True
            else:
                chosen.append(item)
            oversized = True
            stop = index + 1
        else:
            stop = index
        break
    omitted = [item for item in items[stop:] if item is not None]
    entries = []
    for unit in omitted:
        entries.append((unit.ref, unit.start_line))
        if document.unclosed_fence_line is not None:
            entries.extend(hidden_entries(unit))
    packed = render(document, chosen, include_preamble=use_preamble).strip()
    return Packed(packed, chosen, omitted, oversized, estimate_tokens(packed), entries)
