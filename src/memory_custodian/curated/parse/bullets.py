"""Top-level bullet items as MemoryCustodian 0.9.1 reads them in inbox.md and do-not-use.md.

An item starts at column 0 with `- `, `* ` or `+ ` outside a code fence and runs over the indented
lines below it (nested bullets are part of it, never items of their own). Two items are the same
only if their text is the same line by line, indentation included, ignoring case and trailing
spaces: `- A\\n  - B` and `- A\\n    - B` are different items, so compact never deletes either.
"""

from __future__ import annotations

import re

from ...base.records import Record
from .units import fence_mask

_MARKER_RE = re.compile(r"[-*+](?:[ \t]|$)")
_BREAK_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")  # a thematic break (`* * *`), not a bullet
DATE_HEADING_RE = re.compile(r"^## \d{4}-\d{2}-\d{2}[ \t]*$")


class Item(Record):
    """One top-level bullet: its exact `lines` (endings kept), 0-based `start` index, and `key`."""

    start: int
    lines: list[str]

    @property
    def label(self) -> str:
        """The first line without its marker, as previews name the item."""
        return self.lines[0][1:].strip()

    @property
    def key(self) -> str:
        return item_key(self.lines)


def item_key(lines: list[str]) -> str:
    """What makes two items the same: marker dropped, first line stripped, the others' indentation kept."""
    if not lines:
        return ""
    body = [lines[0][1:].strip()] + [line.rstrip() for line in lines[1:]]
    return "\n".join(body).strip().casefold()


def _starts_item(line: str, fenced: bool) -> bool:
    return not fenced and bool(_MARKER_RE.match(line)) and not _BREAK_RE.match(line.rstrip("\r\n"))


def split_items(text: str) -> tuple[list[str], list[Item]]:
    """(all lines with endings, the top-level items); lines outside items are left to the caller."""
    lines = text.splitlines(keepends=True)
    mask, _ = fence_mask(lines)
    items: list[Item] = []
    index = 0
    while index < len(lines):
        if not _starts_item(lines[index], mask[index]):
            index += 1
            continue
        end = index + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t") \
                and not _starts_item(lines[end], mask[end]):
            end += 1
        while end > index + 1 and not lines[end - 1].strip():
            end -= 1  # blank lines after an item separate it from what follows; they are not its text
        items.append(Item(index, lines[index:end]))
        index = end
    return lines, items


def tombstone_keys(text: str) -> set[str]:
    """The exact texts do-not-use.md rules out: each `## Tombstone: X` title and each top-level bullet."""
    keys = {item.key for item in split_items(text)[1] if item.key}
    lines = text.splitlines()
    mask, _ = fence_mask(lines)
    for line, fenced in zip(lines, mask):
        if not fenced and line.startswith("## ") and line[3:].casefold().startswith("tombstone:"):
            title = line[3:].split(":", 1)[1].strip().casefold()
            if title:
                keys.add(title)
    return keys


def drop_items(lines: list[str], dropped: list[Item]) -> str:
    """The text without the `dropped` items, the rest byte for byte; a dated `## YYYY-MM-DD` heading
    whose every item went goes too, with the blank lines that separated what was removed."""
    gone: set[int] = set()
    for item in dropped:
        gone.update(range(item.start, item.start + len(item.lines)))
    for head in (i for i, line in enumerate(lines) if DATE_HEADING_RE.match(line.rstrip("\r\n"))):
        end = next((i for i in range(head + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        body = [i for i in range(head + 1, end) if lines[i].strip()]
        if body and all(i in gone for i in body):
            gone.update(range(head, end))
    out: list[str] = []
    after_removal = False
    for index, line in enumerate(lines):
        if index in gone:
            after_removal = True
            continue
        if after_removal and not line.strip() and (not out or not out[-1].strip()):
            continue  # a removal never leaves two blank lines in a row, nor a blank first line
        after_removal = after_removal and not line.strip()
        out.append(line)
    text = "".join(out)
    return text.rstrip("\n") + "\n" if text.strip() else text
