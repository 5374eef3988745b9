"""One search over both tiers: curated entries (every word of the query in the entry, case-insensitive,
whole words) and the ledger's notes through recall, ranked as an agent would get them."""

from __future__ import annotations

import os
import re

from ..base.fsutil import read_utf8
from ..base.records import Record, field
from ..curated.pack.reading import memory_files
from ..curated.parse.units import split_units
from .snapshot import CURATED_FOLDERS

TYPE_CHECKING = False  # not `typing`'s: importing it costs every fresh process
if TYPE_CHECKING:
    from ..ledger.recall.recall_result import RecallResult

CURATED_LIMIT = 100
_SPLIT: dict[tuple, list] = {}  # (path, mtime, size) -> the file's entries: a search reads only what changed


class EntryHit(Record):
    file: str
    heading: str
    line: int
    snippet: str


class SearchResult(Record):
    query: str
    entries: list[EntryHit] = field(default_factory=list)
    more_entries: int = 0
    recall: RecallResult | None = None


def _snippet(text: str, pattern: re.Pattern, width: int = 160) -> str:
    flat = " ".join(text.split())
    found = pattern.search(flat)
    start = max(0, (found.start() if found else 0) - width // 3)
    return ("\u2026" if start else "") + flat[start:start + width] + ("\u2026" if start + width < len(flat) else "")


def search_entries(memory, query: str) -> tuple[list[EntryHit], int]:
    """Curated entries holding every word of `query`: (the first hits in file order, how many more)."""
    words = [w for w in re.findall(r"\w+", query.casefold()) if w]
    if not words:
        return [], 0
    patterns = [re.compile(r"(?<!\w)" + re.escape(w) + r"(?!\w)", re.IGNORECASE) for w in words]
    hits: list[EntryHit] = []
    more = 0
    for name in memory_files(memory.memory_dir_str, CURATED_FOLDERS):
        if name in ("manifest.md", "MEMORY.md"):
            continue
        path = f"{memory.memory_dir_str}/{name}"
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
        if key not in _SPLIT:
            if len(_SPLIT) > 4096:
                _SPLIT.clear()
            _SPLIT[key] = split_units(read_utf8(path)).units
        for unit in _SPLIT[key]:
            if all(p.search(unit.text) for p in patterns):
                if len(hits) < CURATED_LIMIT:
                    hits.append(EntryHit(name, unit.heading, unit.start_line, _snippet(unit.text, patterns[0])))
                else:
                    more += 1
    return hits, more


def search_all(memory, query: str, *, limit: int = 50) -> SearchResult:
    entries, more = search_entries(memory, query)
    recall = memory.recall(query, limit=limit, ids=False) if query.strip() else None
    return SearchResult(query, entries, more, recall)
