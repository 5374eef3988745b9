"""Text from disk made safe to print on a terminal.

Notes come from people, agents, hand-edited shards and merged pull requests; a note holding
`ESC [2J` (clear the screen), `ESC ]0;…BEL` (set the window title), an OSC 8 hyperlink that
disguises its target, or the 8-bit CSI `U+009B` would drive the reader's terminal when printed
raw. Every command that prints stored text in text mode passes it through `printable`.

The convention: each C0 control character except `\\n` and `\\t` (so also `\\r`, which can
overwrite what a line seems to say), DEL and each C1 control character is shown as the Python
escape `\\xNN` (ESC becomes the four characters `\\x1b`); the Unicode bidirectional overrides
and isolates (U+202A–U+202E, U+2066–U+2069, the "Trojan Source" characters that reorder what a
line appears to say) are shown as `\\uNNNN`. Visible and greppable, and unlike a
replacement character it keeps which code point was there. Nothing else changes: letters of every
script, emoji and combining marks pass through.

`json_safe` does the same for JSON text: `json.dumps(..., ensure_ascii=False)` escapes C0 but
leaves DEL, C1 and the bidi controls raw; it rewrites them as `\\u00NN` escapes, which decode to
the very same string, so the JSON value is unchanged.
"""

from __future__ import annotations

import json
import re

from .limits import SHOWN_CHARS

# the bidi overrides and isolates, the marks that reorder as invisibly (LRM, RLM, ALM), and the
# line and paragraph separators that end a line for a reader while `\n` counts none
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C, 0x2028, 0x2029]
_CONTROLS = [c for c in range(0x20) if c not in (0x0A, 0x09)] + list(range(0x7F, 0xA0))

# Characters a reader does not see: every format character (Unicode category Cf: U+200B zero-width
# space, U+2060 word joiner, U+FEFF, the tag characters, …; `tests/test_security_frames.py` holds this
# list to `unicodedata`), the Hangul and braille fillers that render as blank, the combining grapheme
# joiner and the variation selectors. Shown as `\uNNNN` (`\U000NNNNN`), so a line cannot hide
# what starts it; an emoji sequence joined by U+200D shows its joiners too, the price of that.
_CF_RANGES = ((0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
              (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
              (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
              (0x110CD, 0x110CD), (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
              (0xE0020, 0xE007F))
_BLANK_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x2800, 0x2800), (0x3164, 0x3164), (0xFE00, 0xFE0F),
                 (0xFFA0, 0xFFA0), (0xE0100, 0xE01EF))
INVISIBLE = frozenset(c for lo, hi in (*_CF_RANGES, *_BLANK_RANGES) for c in range(lo, hi + 1))


def _escape(c: int) -> str:
    return f"\\u{c:04x}" if c <= 0xFFFF else f"\\U{c:08x}"


_TEXT_TABLE = {c: f"\\x{c:02x}" for c in _CONTROLS}
_TEXT_TABLE.update({c: _escape(c) for c in (*_BIDI, *INVISIBLE)})
# as ranges, not one escaped character each: the class compiles in a tenth of the time (every command pays it)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + "".join(
    chr(lo) if lo == hi else f"{chr(lo)}-{chr(hi)}" for lo, hi in (*_CF_RANGES, *_BLANK_RANGES)) + "]")

# inside a JSON document C0 is already escaped by json.dumps; only these can still be raw
_JSON_TABLE = {c: f"\\u{c:04x}" for c in (*range(0x7F, 0xA0), *_BIDI, *(i for i in INVISIBLE if i <= 0xFFFF))}
_JSON_TABLE.update({c: f"\\u{0xD800 + ((c - 0x10000) >> 10):04x}\\u{0xDC00 + ((c - 0x10000) & 0x3FF):04x}"
                    for c in INVISIBLE if c > 0xFFFF})


def printable(text: str) -> str:
    """`text` with terminal control characters shown as visible escapes (`\\x1b`); `\\n`, `\\t` kept."""
    if _UNSAFE.search(text) is None:  # the common case: no copy
        return text
    return text.translate(_TEXT_TABLE)


def json_safe(document: str) -> str:
    """A JSON document (from `json.dumps`) with DEL, C1 and bidi controls written as `\\uNNNN`."""
    return document.translate(_JSON_TABLE)


def json_text(obj) -> str:
    """The one JSON rendering every `--format json` prints: sorted keys, indent 2, UTF-8 text,
    and no raw control character (see `json_safe`). No trailing newline."""
    return json_safe(json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False))


SHOWN_MAX = SHOWN_CHARS


def shown(value: str, limit: int = SHOWN_MAX) -> str:
    """`value` quoted for an error message, at most `limit` characters of it: an error never
    echoes unbounded input back to its caller."""
    if len(value) <= limit:
        return repr(value)
    return repr(value[:limit]) + f"… ({len(value)} characters)"


def host_length(text: str, measure: str = "chars") -> int:
    """`text`'s length in a host's unit: code points, or UTF-16 units (a character past U+FFFF is two)."""
    if measure == "utf16":
        return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
    return len(text)
