"""The one token estimator, used by every budget in the tool.

It is MemoryCustodian 0.9.1's: a word of letters, digits and `_` is one token, and so is each
other non-space character. It is cheap, offline, deterministic, and it over-counts punctuation
and CJK, which errs on the side of smaller packs. Keeping it identical is what makes our packs
byte-identical to theirs.
"""

from __future__ import annotations

import re

TOKEN_RE = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")


def cut_words(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, cut at a word boundary with "…" when it is longer (a
    title cut mid-word loses the word that mattered: "next: tests/conf")."""
    if len(text) <= limit:
        return text
    room = text[: limit - 1]
    space = room.rfind(" ")
    cut = room[:space] if space >= limit // 2 else room  # one long word: cut it rather than lose the title
    return cut.rstrip(" ,;:.-—") + "…"


def estimate_tokens(text: str) -> int:
    # findall builds the list in C: several times faster than counting a finditer in Python
    return len(TOKEN_RE.findall(text))
