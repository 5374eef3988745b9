"""A three-way merge of a curated file entry by entry, for the git merge driver `init` registers.

Each branch's version is compared with the merge base entry by entry, so a change made on one side
only — an add, an edit, a delete, a move, an archive, a compact, a changelog count — is taken as
made, and only the same entry changed differently on both sides is a conflict: one marked entry
(git's own markers around the two versions), which `check` and `read` refuse and no hook passes on.

An entry is known by its heading (a section) or its text (a bullet; a changelog bullet's
`(N times)` count aside). An edit that rewords a bullet changes that key, so an entry a side no
longer has is paired with a new entry of that side in the same place when their words mostly agree
(`SIMILAR`): the reword is an edit of the old entry, not a delete and an unrelated add. Two sides
that each counted the same changelog bullet add their counts.

A forget on either side wins over any edit of what it removed: `forgotten` holds the fingerprints
(`forgotten.fingerprint`) each side's forget recorded since the base, so an entry that side deleted
is dropped whatever the other side did to it, and an entry the other side added with the same text
is dropped too. New entries go where their branch put them (dated headings newest first). The
merge is linear in the size of the files: every lookup is a dict, no entry is searched for in a list.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from ..parse.units import BULLET, SECTION, split_units
from .fingerprints import fingerprint

CONFLICT_HEAD = ("<<<<<<< ours — memory-custodian: both branches changed this entry differently; keep the right "
                 "version (or write one that combines them) and delete these marker lines\n")
CONFLICT_MID = "=======\n"
CONFLICT_END = ">>>>>>> theirs\n"
SIMILAR = 0.5  # word-set overlap (Jaccard) from which an entry a side dropped and one it added are one edit
PAIRING_LIMIT = 4096  # dropped × added entries in one gap past which no pairing is tried (a rewrite)
_COUNT = re.compile(r"^(- .*?) \((\d+) times\)(\.?)\s*$")
_WORD = re.compile(r"\w+")


class Merged:
    """The merged text, how many entries are true conflicts (marked in the text) and how many entries
    a forget on one side removed from the other side's edits or additions (`forgotten`)."""

    def __init__(self, text: str, conflicts: int, forgotten: int = 0):
        self.text, self.conflicts, self.forgotten = text, conflicts, forgotten


class _Split:
    """A version as a preamble and entries; one without entries (the inbox's "no candidates" text) is all preamble."""

    def __init__(self, text: str):
        doc = split_units(text)
        self.mode = doc.mode if doc.mode in (SECTION, BULLET) else None
        self.preamble = doc.preamble if self.mode else text
        self.units = doc.units if self.mode else []


class Forgotten:
    """The fingerprints each side's forgets added since the base (`ours`, `theirs`)."""

    def __init__(self, ours=(), theirs=()):
        self.ours, self.theirs = frozenset(ours), frozenset(theirs)

    def __bool__(self) -> bool:
        return bool(self.ours or self.theirs)


NONE_FORGOTTEN = Forgotten()


def mergeable(base: str, ours: str, theirs: str) -> bool:
    """Whether the versions that hold entries split the same way (else git's own line merge is used)."""
    modes = {_Split(t).mode for t in (base, ours, theirs)} - {None}
    return len(modes) == 1


def merge_entries(base: str, ours: str, theirs: str, forgotten: Forgotten = NONE_FORGOTTEN) -> Merged:
    """The entry-by-entry merge of three versions of one curated file (see `mergeable`)."""
    docs = [_Split(t) for t in (base, ours, theirs)]
    mode = next(d.mode for d in docs if d.mode)
    conflicts = dropped = 0
    preamble = _pick(docs[0].preamble, docs[1].preamble, docs[2].preamble)
    if preamble is _UNCLEAR:
        preamble, conflicts = _marked(docs[1].preamble, docs[2].preamble), 1
    base_entries = _keyed(docs[0].units)
    sides = [_aligned(base_entries, _keyed(doc.units)) for doc in docs[1:]]
    order = _order(list(base_entries), list(sides[0]), list(sides[1]))
    chosen: list[tuple[str, str]] = []
    for key in order:
        b, o, t = base_entries.get(key), sides[0].get(key), sides[1].get(key)
        if _forgotten(b, o, t, forgotten):
            dropped += 1
            continue
        text, conflict, gone = _merge_one(b, o, t, forgotten)
        conflicts += conflict
        dropped += gone
        if text is not None:
            chosen.append((key, text))
    if mode == SECTION and all(_date(key) for key, _ in chosen):
        chosen.sort(key=lambda item: _date(item[0]), reverse=True)  # stable: same day keeps the merged order
    sep = "\n\n" if mode == SECTION else "\n"
    body = sep.join(text.rstrip("\n") for _, text in chosen)
    return Merged(preamble + body + ("\n" if body else ""), conflicts, dropped)


# ---- identity ------------------------------------------------------------------------------------

def _key_of(unit) -> str:
    if unit.kind == SECTION:
        return unit.heading.strip()
    first = unit.text.split("\n", 1)
    counted = _COUNT.match(first[0])
    head = counted.group(1) + counted.group(3) if counted else first[0]
    return " ".join((head + ("\n" + first[1] if len(first) > 1 else "")).split())


def _keyed(units) -> dict[str, str]:
    """Units by identity: a section by its heading, a bullet by its text; a repeat gets a counter."""
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for unit in units:
        key = _key_of(unit)
        n = seen.get(key, 0) + 1
        seen[key] = n
        out[key if n == 1 else f"{key}\x00{n}"] = unit.text
    return out


def _words(text: str) -> frozenset:
    return frozenset(w.casefold() for w in _WORD.findall(text))


def _similar(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _aligned(base: dict[str, str], side: dict[str, str]) -> dict[str, str]:
    """`side` keyed as the base is: an entry the side reworded in place takes the key of the base entry it edits.

    The entries both have fix the gaps; in each gap (the entries after one shared entry, in each
    version's own order) a base entry the side lacks is paired with the side's most similar new entry."""
    gaps_base: dict[str | None, list[str]] = {}
    anchor: str | None = None
    for key in base:
        if key in side:
            anchor = key
        else:
            gaps_base.setdefault(anchor, []).append(key)
    if not gaps_base:
        return side
    gaps_side: dict[str | None, list[str]] = {}
    anchor = None
    for key in side:
        if key in base:
            anchor = key
        else:
            gaps_side.setdefault(anchor, []).append(key)
    renamed: dict[str, str] = {}
    all_gone = [k for gone in gaps_base.values() for k in gone]
    all_new = [k for new in gaps_side.values() for k in new]
    if len(all_gone) * len(all_new) <= PAIRING_LIMIT:
        # across the file at once, the most similar pairs first and the same gap only breaking a tie: an
        # entry the side moved and reworded must not be taken for a weaker match that sits in its old
        # place (a forget of that one would then drop the wrong entry and keep the forgotten one's edit)
        same = {(old, new) for gap, gone in gaps_base.items() for old in gone for new in gaps_side.get(gap, ())}
        _pair(base, side, all_gone, all_new, renamed, same)
    else:  # too many to weigh at once: gap by gap, then what is left (an entry moved and reworded) across the file
        for gap, gone in gaps_base.items():
            _pair(base, side, gone, gaps_side.get(gap) or [], renamed)
        paired = set(renamed.values())
        _pair(base, side, [k for k in all_gone if k not in paired], [k for k in all_new if k not in renamed], renamed)
    if not renamed:
        return side
    return {renamed.get(key, key): text for key, text in side.items()}


def _stayed(base_index: dict[str, int], side: list[str]) -> set[str]:
    """The entries of `side` that kept their order from the base: a longest increasing run of base positions
    (patience sorting, O(n log n)); the others are the ones the side moved."""
    common = [k for k in side if k in base_index]
    tails: list[int] = []  # base position ending the best run of each length
    tail_at: list[int] = []  # index in `common` of that end
    before = [-1] * len(common)
    for i, key in enumerate(common):
        pos = base_index[key]
        at = bisect_left(tails, pos)
        if at == len(tails):
            tails.append(pos)
            tail_at.append(i)
        else:
            tails[at], tail_at[at] = pos, i
        before[i] = tail_at[at - 1] if at else -1
    kept: set[str] = set()
    i = tail_at[-1] if tail_at else -1
    while i >= 0:
        kept.add(common[i])
        i = before[i]
    return kept


def _pair(base: dict[str, str], side: dict[str, str], gone: list[str], new: list[str], renamed: dict,
          same_gap: set | frozenset = frozenset()) -> None:
    """Pair entries of `gone` (the base's) with entries of `new` (the side's) into `renamed`, the most similar
    pairs first (so two near-identical entries each find their own edit); among equals, a pair in
    `same_gap` (the same place in both versions) first, then the file's order."""
    if not gone or not new or len(gone) * len(new) > PAIRING_LIMIT:
        return
    taken = set(renamed.values())
    news = [(k, _words(side[k])) for k in new if k not in renamed]
    candidates = []
    for i, old in enumerate(k for k in gone if k not in taken):
        words = _words(base[old])
        for j, (key, other) in enumerate(news):
            score = _similar(words, other)
            if score >= SIMILAR:
                candidates.append((-score, (old, key) not in same_gap, i, j, old, key))
    for _, _, _, _, old, key in sorted(candidates):
        if old not in taken and key not in renamed:
            renamed[key] = old
            taken.add(old)


def _order(base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
    """The merged order: the base's, with each entry a side moved or added placed right after the entry
    that side has before it (ours' placements first; an entry both moved goes where ours put it)."""
    base_index = {k: i for i, k in enumerate(base)}
    placed: dict[str | None, list[str]] = {}
    moved: set[str] = set()
    for side in (ours, theirs):
        stayed = _stayed(base_index, side)
        previous: str | None = None
        for key in side:
            if key not in stayed and key not in moved:
                moved.add(key)
                placed.setdefault(previous, []).append(key)
            previous = key
    order: list[str] = []
    done: set[str] = set()

    def emit(key: str | None) -> None:
        stack = [key]
        while stack:
            current = stack.pop()
            if current is not None:
                if current in done:
                    continue
                done.add(current)
                order.append(current)
            stack.extend(reversed(placed.get(current, ())))

    emit(None)
    for key in base:
        if key not in moved:
            emit(key)
    for key in [*ours, *theirs]:  # placed after an entry that is in neither order any more
        if key not in done:
            emit(key)
    return order


# ---- one entry -----------------------------------------------------------------------------------

_UNCLEAR = object()  # both sides changed a piece differently: not the same answer as "deleted" (None)


def _pick(base, ours, theirs):
    """The three-way answer for one piece: its text, None when it is deleted, `_UNCLEAR` when both changed it."""
    if ours == theirs:
        return ours
    if ours == base:
        return theirs
    if theirs == base:
        return ours
    return _UNCLEAR


def _forgotten(b, o, t, forgotten: Forgotten) -> bool:
    """Whether a forget on one side removes this entry from the merge, whatever the other side did."""
    if not forgotten:
        return False
    if b is not None:
        return (o is None and fingerprint(b) in forgotten.ours) or (t is None and fingerprint(b) in forgotten.theirs)
    # new on a side: the text the other side forgot, added again (a copy, or the same entry re-added)
    return ((o is not None and fingerprint(o) in forgotten.theirs)
            or (t is not None and fingerprint(t) in forgotten.ours))


def _merge_one(b, o, t, forgotten: Forgotten) -> tuple[str | None, int, int]:
    """One entry merged: (its text or None when deleted, 1 when it is a marked conflict, entries a forget dropped)."""
    if b is not None and o is not None and t is not None and o != b and t != b:
        counted = _counts(b, o, t)  # both counted it again: "(2 times)" on each side is three in all
        if counted is not None:
            return counted, 0, 0
    if o == t and b is not None and o is not None and o != b and " times)" in o:
        nested = _nested(b, o, t, forgotten)  # a day both counted the same bullet on: each count is its own
        if nested is not None:
            return nested.text, 0, nested.forgotten
    picked = _pick(b, o, t)
    if picked is not _UNCLEAR:
        return picked, 0, 0
    if o is not None and t is not None:
        nested = _nested(b or "", o, t, forgotten)
        if nested is not None:
            return nested.text, 0, nested.forgotten
    return _marked(o, t), 1, 0


def _counts(b, o, t) -> str | None:
    """A changelog bullet both sides counted again: the base count plus what each side added."""
    found = [_COUNT.match(x.split("\n", 1)[0]) if x is not None else None for x in (b, o, t)]
    if not (found[1] and found[2]) or found[1].group(1) != found[2].group(1) or "\n" in o.rstrip("\n"):
        return None
    n = [int(m.group(2)) if m else (1 if x is not None else 0) for m, x in zip(found, (b, o, t), strict=True)]
    total = n[1] + n[2] - n[0]
    return f"{found[1].group(1)} ({total} times){found[1].group(3)}\n"


def _nested(base: str, ours: str, theirs: str, forgotten: Forgotten) -> Merged | None:
    """A section both sides added bullets to (a dated inbox or changelog section), merged bullet by bullet."""
    heads = {t.split("\n", 1)[0] for t in (base, ours, theirs) if t}
    if len(heads) != 1:
        return None
    head = heads.pop() + "\n"
    bodies = [t[len(head):] if t.startswith(head) else "" for t in (base, ours, theirs)]
    if not mergeable(*bodies) or _Split(bodies[1]).mode != BULLET:
        return None
    merged = merge_entries(bodies[0], bodies[1], bodies[2], forgotten)
    if merged.conflicts:
        return None
    return Merged(head + merged.text, 0, merged.forgotten)


def _marked(ours: str | None, theirs: str | None) -> str:
    deleted = "(deleted on this branch)\n"
    ours_text = (ours.rstrip("\n") + "\n") if ours else deleted
    theirs_text = (theirs.rstrip("\n") + "\n") if theirs else deleted
    return CONFLICT_HEAD + ours_text + CONFLICT_MID + theirs_text + CONFLICT_END


def _date(key: str) -> str:
    """The `YYYY-MM-DD` a dated heading starts with (`## 2026-07-01 - Title`), or ""."""
    text = key.lstrip("#").strip()
    head = text[:10]
    if len(head) == 10 and head[4] == "-" and head[7] == "-" and (head[:4] + head[5:7] + head[8:]).isdigit():
        return head
    return ""
