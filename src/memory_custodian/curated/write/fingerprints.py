"""What `forget` leaves so a merge never brings a forgotten entry back: a fingerprint, never the text.

`forgotten.txt` in the memory folder holds one fingerprint a line (the first 128 bits of the SHA-256
of the entry's text, whitespace collapsed), committed and merged by git's union. The curated merge
driver reads each branch's copy: an entry a branch forgot is dropped from the merge whatever the
other branch did to it (`merge_entries.Forgotten`), and `check` names an entry whose text matches one.
A fingerprint says nothing of the text to anyone who does not already hold the very same entry.
"""

from __future__ import annotations

import hashlib

FILE = "forgotten.txt"
HEADER = ("# memory-custodian: fingerprints of forgotten entries (no text), so no merge brings them back. "
          "One per line; git merges this file by union.\n")


def fingerprint(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:32]


def parse(text: str | None) -> frozenset:
    """The fingerprints in a `forgotten.txt` text (None: no file)."""
    if not text:
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines()
                     if len(line.strip()) == 32 and all(c in "0123456789abcdef" for c in line.strip()))


def with_added(text: str | None, prints) -> str | None:
    """`text` (the file's, None: none yet) with `prints` appended, or None when it holds them all already."""
    new = sorted(set(prints) - parse(text))
    if not new:
        return None
    head = text if text else HEADER
    if not head.endswith("\n"):
        head += "\n"
    return head + "".join(p + "\n" for p in new)
