"""Query expansion from a general English thesaurus: the notes a query matches are re-ranked, at a
lower weight, by the words WordNet relates to its words (synonyms, derivations, broader and
narrower words), so `When did Mei go to a wedding?` finds `my sister got married` among Mei's turns.

The table (`data/expansions.tsv`, generated from Princeton WordNet 3.0 by
`benchmarks/make_expansions.py`; its licence is `data/WORDNET-LICENSE`) is read on the first
expanded recall only: recall asks for it when the caller wants the full account (`recall`, the
MCP server, `eval`), never the hooks. The expanded words form their own MATCH, scored apart and
added at `ranking.EXPANSION_WEIGHT` to the notes the query itself matched (`recall_scans.expanded`).
"""

from __future__ import annotations

import mmap
import os
import re
from functools import lru_cache
from itertools import pairwise

from . import ranking

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "expansions.tsv")
# The suffixes a query word may carry beyond the table's base forms (WordNet's own detachment rules).
_SUFFIXES = (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("ses", "s"), ("xes", "x"), ("men", "man"),
             ("es", "e"), ("es", ""), ("s", ""), ("ied", "y"), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""),
             ("er", ""), ("est", ""))
_CAPITALISED_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+")


@lru_cache(maxsize=1)
def _table():
    """The table's lines, `word<TAB>expansions`, sorted by word, mapped and searched in place: a
    fresh `recall` pays no load (decompressing a gzip copy cost 12 ms; the wheel compresses it anyway)."""
    with open(TABLE, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def entry(word: str) -> tuple[str, ...] | None:
    """The expansions the table lists for `word` (closest first), or None: a binary search over
    the sorted lines."""
    data, key = _table(), word.encode("utf-8")
    lo, hi = 0, len(data)
    while lo < hi:
        mid = (lo + hi) // 2
        start = data.rfind(b"\n", 0, mid) + 1
        end = data.find(b"\n", start)
        tab = data.find(b"\t", start, end)
        found = data[start:tab]
        if found == key:
            return tuple(data[tab + 1:end].decode("utf-8").split(" "))
        if found < key:
            lo = end + 1
        else:
            hi = start
    return None


def lookup(word: str) -> tuple[str, ...]:
    """The expansions of `word` as written or of its base form."""
    found = entry(word)
    if found is not None:
        return found
    for suffix, base in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) + len(base) >= 3:
            found = entry(word[: -len(suffix)] + base)
            if found is not None:
                return found
    return ()


def expansion_words(query: str, words) -> tuple[list[str], int]:
    """The words the expansion MATCH ORs together, and how many of the query's terms were looked
    up: each prose term's (and two adjacent terms') expansions, none of `words` (the query's own
    MATCH words) nor a stop word. Names (capitalised inside a sentence) are not expanded, nor is a
    query that names code."""
    if ranking.names_code(query):
        return [], 0
    names = {m.group(0).lower() for m in _CAPITALISED_RE.finditer(query)}
    terms = [t for t in ranking.query_terms(query) if t not in names and t.isalpha()]
    taken = {w for w, _ in words} | ranking.QUERY_STOPWORDS
    out: list[str] = []
    for key in terms + [f"{a}_{b}" for a, b in pairwise(terms)]:
        for word in lookup(key):
            if word not in taken:
                taken.add(word)
                out.append(word)
    return out, len(terms)


def build_expansion(query: str, words) -> tuple[str, float, tuple[str, ...]] | None:
    """The expansion's FTS5 MATCH (each word quoted), its weight and its words, or None when
    nothing expands.
    The weight is shared among the terms past the first: a long query already says what it wants,
    and its many expansions otherwise lift look-alikes (software test recall@10 at 8,541 notes
    0.628 unshared, 0.656 shared)."""
    found, terms = expansion_words(query, words)
    if not found:
        return None
    return " OR ".join('"' + w + '"' for w in found), ranking.EXPANSION_WEIGHT / max(1, terms - 1), tuple(found)
