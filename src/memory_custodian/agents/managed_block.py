"""The agent block MemoryCustodian 0.9.1 writes into AGENTS.md, CLAUDE.md and GEMINI.md.

0.9.1 puts its instructions between `<!-- memory-custodian:start -->` and
`<!-- memory-custodian:end -->` (older releases wrote a bare `## MemoryCustodian` section). We
recognise both: `init --agent` keeps such a block unless told `--force-agent`, which replaces it in
place with ours; `--remove` takes it out with ours. Markers that do not pair up (a start without its
end, two blocks) are refused, as 0.9.1 refuses them, and nothing is written.
"""

from __future__ import annotations

import os

from ..base.errors import InvalidInput
from ..base.fsutil import read_utf8

START = "<!-- memory-custodian:start -->"
END = "<!-- memory-custodian:end -->"  # our own block ends with the same marker
LEGACY_HEADING = "## MemoryCustodian"


def _span(text: str, name: str, our_begin: str) -> tuple[int, int] | None:
    """Where 0.9.1's managed block is, end marker and one newline included; None if there is none."""
    starts, ours, ends = text.count(START), text.count(our_begin), text.count(END)
    if starts + ours != ends:
        raise InvalidInput(f"malformed MemoryCustodian managed block in {name}: a start marker without its end "
                           f"marker (or the reverse); fix or delete the markers by hand, then run again")
    if starts > 1:
        raise InvalidInput(f"{starts} MemoryCustodian managed blocks in {name}; keep one by hand, then run again")
    if not starts:
        return None
    start = text.index(START)
    stop = text.find(END, start)
    if stop < 0 or our_begin in text[start:stop]:
        raise InvalidInput(f"malformed MemoryCustodian managed block in {name}: its start marker is not followed "
                           "by its own end marker; fix the markers by hand, then run again")
    stop += len(END)
    return start, stop + (1 if text[stop:stop + 1] == "\n" else 0)


def _bare_section(text: str) -> tuple[int, int] | None:
    """An unmarked `## MemoryCustodian` section of the shape older releases wrote, or None."""
    at = text.find(LEGACY_HEADING + "\n")
    if at < 0 or (at and text[at - 1] != "\n"):
        return None
    nxt = text.find("\n## ", at + len(LEGACY_HEADING))
    stop = len(text) if nxt < 0 else nxt + 1
    body = text[at:stop]
    if "This project uses MemoryCustodian" not in body or "manifest.md" not in body:
        return None  # someone's own section that happens to share the title: never touched
    return at, stop


def find(text: str | None, name: str, our_begin: str) -> tuple[int, int] | None:
    """The 0.9 block (marked, or a bare section of the known shape) in `text`, or None; refuses bad markers."""
    if not text:
        return None
    return _span(text, name, our_begin) or _bare_section(text)


def replace(text: str, span: tuple[int, int], block: str) -> str:
    """`text` with the 0.9 block at `span` replaced by `block`, where it stood."""
    after = text[span[1]:]
    sep = "\n" if after and not after.startswith("\n") and not block.endswith("\n\n") else ""
    return text[:span[0]] + block + sep + after


def remove(text: str, span: tuple[int, int]) -> str:
    before, after = text[:span[0]], text[span[1]:]
    if before.endswith("\n\n") and (not after or after.startswith("\n")):
        before = before[:-1]  # the blank line that separated the block
    return before + after


def kept_report(plans: list, remove: bool) -> dict:
    """`{"kept_09_block": [paths]}`: files whose 0.9 block an install left alone (empty dict if none)."""
    kept = sorted(rel for rel, current, new in plans
                  if not remove and current is not None and new == current and START in current)
    return {"kept_09_block": kept} if kept else {}


def refuse_bad_markers(root: str, host_modules, our_begin: str) -> None:
    """Before `init` writes anything: refuse a host Markdown file whose 0.9 block markers do not pair up."""
    for module in host_modules:
        for rel, kind in module.files:
            path = os.path.join(root, rel)
            if kind == "md" and os.path.isfile(path):
                find(read_utf8(path), rel, our_begin)
