"""Git conflict markers in a memory file: a merge that stopped half-way must never read as memory.

`<<<<<<< ours` … `=======` … `>>>>>>> theirs` left in `decisions.md` would reach an agent as two
contradicting rules and three lines of noise; `check` and `read` name the first marker's line
instead, and the hooks send a problem line in its place.
"""

from __future__ import annotations

MARKERS = ("<<<<<<<", ">>>>>>>", "|||||||")
ADVICE = ("holds git conflict markers (a merge stopped half-way) — for each marked entry keep the right version "
          "(or write one that combines them), delete the marker lines, then run `memory-custodian check`")


def marker_line(text: str) -> int | None:
    """The 1-based line of the first conflict marker in `text`, or None.

    A marker is seven `<`, `>` or `|` at the start of a line followed by a space or the line's end, as
    git writes them; a bare `=======` alone is also a Markdown heading underline, so it never counts.
    """
    if "<<<<<<<" not in text and ">>>>>>>" not in text and "|||||||" not in text:
        return None
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith(MARKERS) and line[7:8] in ("", " ", "\r"):
            return number
    return None
