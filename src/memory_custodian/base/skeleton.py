"""The confusable skeleton of a line: what it looks like, whatever characters spell it.

A note body can hold a line that *looks* like the tool's own structure — an index line
`[#k7m2x9qa] directive/high · …`, a frame `(recorded by a person)`, a pack heading — spelled with
look-alike characters: a Cyrillic `е`, fullwidth `［＃`, an invisible U+200B in front. The frame
checks match the skeleton, not the raw text: invisible and format characters dropped, NFKC
compatibility forms folded (fullwidth, mathematical letters), every character Unicode lists as
confusable with a printable ASCII character (UTS #39, `confusables_data.py`) mapped to it, and
the case folded. An ASCII line is its own skeleton (casefolded), at no cost.
"""

from __future__ import annotations

import unicodedata

from .confusables_data import PAIRS
from .textsafe import INVISIBLE

_TABLE: dict[int, str | None] = {}


def _table() -> dict[int, str | None]:
    """Unicode's confusables: code point -> its printable ASCII look-alike (None: an invisible)."""
    if not _TABLE:
        data, i = "".join(PAIRS), 0
        while i < len(data):
            colon = data.index(":", i)
            _TABLE[int(data[i:colon], 16)] = data[colon + 1]
            i = colon + 2
        for code in INVISIBLE:
            _TABLE[code] = None
    return _TABLE


class _Fold(dict):
    """What each character looks like, worked out on first sight: an invisible is nothing; a
    character whose compatibility form is ASCII is that (fullwidth `［` is `[`, where Unicode's
    confusables give `(` for both); else its confusable, else its compatibility form's characters'."""

    def __missing__(self, code: int):
        table = _table()
        char = chr(code)
        if code in table and table[code] is None:
            shown = None
        else:
            compat = unicodedata.normalize("NFKC", char)
            if compat.isascii():
                shown = compat
            elif code in table:
                shown = table[code]
            else:
                shown = "".join(table.get(ord(c)) or c for c in compat if table.get(ord(c), c) is not None)
        self[code] = shown
        return shown


_FOLD = _Fold()


def skeleton(text: str) -> str:
    """`text` as it looks: invisible characters dropped, look-alikes mapped to ASCII, case folded."""
    if text.isascii():
        return text.casefold()
    return text.translate(_FOLD).casefold()


# Unicode groups some look-alikes with several ASCII characters (`l`, `I`, `1`, `|`; `O`, `0`); the
# skeleton takes one of them, so words are matched on a looser form where each group is one letter.
_LOOSE = str.maketrans("1|!i0", "llllo")


def loose(text: str) -> str:
    """A skeleton with the groups of one-stroke and round look-alikes folded together (for matching words)."""
    return text.translate(_LOOSE)
