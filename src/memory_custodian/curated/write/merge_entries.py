"""A three-way merge of a curated file entry by entry, for the git merge driver `init` registers.

Two branches that each `add` a decision insert at the same place (newest first), which git's
line merge reports as a conflict. Entry by entry there is none: both new entries are kept, in the
protocol's order (dated headings newest first; otherwise where each branch put them), and a
dated inbox or changelog section that both branches added to is merged bullet by bullet. Only
when both branches changed the same entry differently does the result hold one marked entry —
git's own markers around the two versions, which `check` and `read` refuse and no hook passes on.
"""

from __future__ import annotations

from ..parse.units import BULLET, SECTION, split_units

CONFLICT_HEAD = ("<<<<<<< ours — memory-custodian: both branches changed this entry; keep the right "
                 "version and delete these marker lines\n")
CONFLICT_MID = "=======\n"
CONFLICT_END = ">>>>>>> theirs\n"


class Merged:
    """The merged text and how many entries are true conflicts (marked in the text)."""

    def __init__(self, text: str, conflicts: int):
        self.text, self.conflicts = text, conflicts


class _Split:
    """A version as a preamble and entries; one without entries (the inbox's "no candidates" text) is all preamble."""

    def __init__(self, text: str):
        doc = split_units(text)
        self.mode = doc.mode if doc.mode in (SECTION, BULLET) else None
        self.preamble = doc.preamble if self.mode else text
        self.units = doc.units if self.mode else []


def mergeable(base: str, ours: str, theirs: str) -> bool:
    """Whether the versions that hold entries split the same way (else git's own line merge is used)."""
    modes = {_Split(t).mode for t in (base, ours, theirs)} - {None}
    return len(modes) == 1


def merge_entries(base: str, ours: str, theirs: str) -> Merged:
    """The entry-by-entry merge of three versions of one curated file (see `mergeable`)."""
    docs = [_Split(t) for t in (base, ours, theirs)]
    mode = next(d.mode for d in docs if d.mode)
    conflicts = 0
    preamble = _pick(docs[0].preamble, docs[1].preamble, docs[2].preamble)
    if preamble is None:
        preamble, conflicts = _marked(docs[1].preamble, docs[2].preamble), 1
    keyed = [_keyed(doc.units) for doc in docs]
    order = _order(list(keyed[1]), list(keyed[2]))
    chosen: list[tuple[str, str]] = []
    for key in order:
        texts = [k.get(key) for k in keyed]
        text, conflict = _merge_one(*texts)
        conflicts += conflict
        if text is not None:
            chosen.append((key, text))
    if all(_date(key) for key, _ in chosen) and mode == SECTION:
        chosen.sort(key=lambda item: _date(item[0]), reverse=True)  # stable: same day keeps ours then theirs
    sep = "\n\n" if mode == SECTION else "\n"
    body = sep.join(text.rstrip("\n") for _, text in chosen)
    return Merged(preamble + body + ("\n" if body else ""), conflicts)


def _keyed(units) -> dict[str, str]:
    """Units by identity: a section by its heading, a bullet by its text; a repeat gets a counter."""
    out: dict[str, str] = {}
    for unit in units:
        key = unit.heading.strip() if unit.kind == SECTION else " ".join(unit.text.split())
        n, unique = 1, key
        while unique in out:
            n += 1
            unique = f"{key}\x00{n}"
        out[unique] = unit.text
    return out


def _order(ours: list[str], theirs: list[str]) -> list[str]:
    """Ours' order, each of theirs' entries inserted before the next entry theirs has after it."""
    order = list(ours)
    known = set(order)
    for i, key in enumerate(theirs):
        if key in known:
            continue
        anchor = next((k for k in theirs[i + 1:] if k in known), None)
        order.insert(order.index(anchor) if anchor is not None else len(order), key)
        known.add(key)
    return order


def _pick(base, ours, theirs):
    """The three-way answer for one piece when it is clear, else None (both changed it differently)."""
    if ours == theirs:
        return ours
    if ours == base:
        return theirs
    if theirs == base:
        return ours
    return None


def _merge_one(base, ours, theirs) -> tuple[str | None, int]:
    """One entry merged: (its text or None when deleted, 1 when it is a marked conflict)."""
    picked = _pick(base, ours, theirs)
    if picked is not None or (ours is None and theirs is None):
        return picked, 0
    if ours is not None and theirs is not None and (base is None or base.strip()):
        nested = _nested(base or "", ours, theirs)
        if nested is not None:
            return nested, 0
    return _marked(ours, theirs), 1


def _nested(base: str, ours: str, theirs: str) -> str | None:
    """A section both sides added bullets to (a dated inbox or changelog section), merged bullet by bullet."""
    heads = {t.split("\n", 1)[0] for t in (base, ours, theirs) if t}
    if len(heads) != 1:
        return None
    head = heads.pop() + "\n"
    bodies = [t[len(head):] if t.startswith(head) else "" for t in (base, ours, theirs)]
    if not mergeable(*bodies) or _Split(bodies[1]).mode != BULLET:
        return None
    merged = merge_entries(*bodies)
    return None if merged.conflicts else head + merged.text


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
