"""The merge matrix: every curated file kind × every pair of operations × both merge directions, each cell
with the result a model says it must have (the base plus both sides' changes; the same entry changed
differently on both sides is one marked conflict; a forget wins over anything done to what it removed).

A cell is a group of four entries (g0..g3) in one file; each side applies one operation to the group:
none, add (a new entry after g1), edit (g0, each side its own words), edit-same (g0, the same words on
both sides), delete (g0), forget (g0, with its fingerprint), move (g2 to the top of the group),
archive (g3, the oldest, out of the file), count (the changelog's g1 counted again and moved to the top
of its day). Groups are disjoint, so a whole kind's cells fit in one file: one real `git merge` then
runs every cell of that kind (`benchmarks/bench_merge.py`), and the suite runs a sample of them.
"""

from __future__ import annotations

from itertools import product

from memory_custodian.curated.write.fingerprints import fingerprint
from memory_custodian.curated.write.merge_entries import CONFLICT_END, CONFLICT_HEAD, CONFLICT_MID

OPS = ("none", "add", "edit", "edit-same", "delete", "forget", "move", "archive")
COUNT = "count"

# name: (preamble, entry style, operations); styles: "bullet", "section", "dated" (a dated section each),
# "day" (one dated section a group, its entries bullets: the inbox and the changelog)
KINDS = {
    "decisions.md": ("# Decisions\n\nEntries are newest first.\n\n", "dated", OPS),
    "constraints.md": ("# Constraints\n\n", "bullet", OPS),
    "do-not-use.md": ("# Do Not Use\n\n", "section", OPS),
    "preferences.md": ("# Preferences\n\n", "bullet", OPS),
    "inbox.md": ("# Memory Inbox\n\nEntries are newest first.\n\n", "day", OPS),
    "changelog.md": ("# Changelog\n\n", "day", (*OPS, COUNT)),
    "areas/payments.md": ("# Area: payments\n\n", "section", OPS),
}


def cells(kind: str) -> list[tuple[str, str]]:
    """Every ordered pair of operations for `kind` (side one's, side two's)."""
    return list(product(KINDS[kind][2], repeat=2))


def case_count() -> int:
    """Cells over every kind and both merge directions."""
    return sum(len(cells(kind)) for kind in KINDS) * 2


class Entry:
    """One entry of the model: an identity, its words, and (for the changelog) how often it was said."""

    def __init__(self, ident: str, words: str, count: int = 1):
        self.ident, self.words, self.count = ident, words, count


def _words(group: int, i: int) -> str:
    return f"Group {group} entry {i} keeps the payment service idempotent across retries number {group * 10 + i}"


def base_group(group: int) -> list[Entry]:
    return [Entry(f"g{group}e{i}", _words(group, i)) for i in range(4)]


def apply(op: str, entries: list[Entry], group: int, side: str) -> tuple[list[Entry], set[str]]:
    """A side's group after `op`, and the fingerprints of what it forgot (its entries' rendered text)."""
    out = [Entry(e.ident, e.words, e.count) for e in entries]
    forgot: set[str] = set()
    if op == "add":
        out.insert(2, Entry(f"g{group}new-{side}", f"New rule {side} {group}: refunds are queued, never sent twice"))
    elif op in ("edit", "edit-same"):
        word = side if op == "edit" else "both"
        out[0].words += f" and always logged ({word})"
    elif op in ("delete", "forget"):
        gone = out.pop(0)
        if op == "forget":
            forgot.add(gone.ident)
    elif op == "move":
        out.insert(0, out.pop(2))
    elif op == "archive":
        out.pop(3)
    elif op == COUNT:
        out[1].count += 1
        out.insert(0, out.pop(1))
    return out, forgot


def render_entry(style: str, group: int, e: Entry, position: int) -> str:
    if style == "bullet":
        return f"- {e.words}."
    if style == "day":
        return f"- {e.words}." if e.count == 1 else f"- {e.words} ({e.count} times)."
    if style == "dated":
        return f"## 2026-{1 + group // 28:02d}-{1 + group % 28:02d} - Decision {e.ident}\n{e.words}."
    return f"## Rule {e.ident}\n{e.words}."


def render_group(style: str, group: int, entries: list[Entry]) -> list[str]:
    """The group's units as they appear in the file (a day section holds its bullets)."""
    units = [render_entry(style, group, e, i) for i, e in enumerate(entries)]
    if style == "day":
        return [f"## 2026-{1 + group // 28:02d}-{1 + group % 28:02d}\n" + "\n".join(units)]
    return units


def render(kind: str, groups: list[list[Entry]]) -> str:
    preamble, style, _ = KINDS[kind]
    units: list[str] = []
    for group, entries in enumerate(groups):
        units.extend(render_group(style, group, entries))
    if style == "dated":  # the protocol's order: newest first (what the merge sorts to)
        units.sort(key=lambda u: u[3:13], reverse=True)
    if style == "day":
        units.sort(key=lambda u: u[3:13], reverse=True)
    sep = "\n" if style == "bullet" else "\n\n"
    return preamble + sep.join(units) + "\n"


def fingerprints_of(kind: str, group: int, forgot: set[str], entries: list[Entry]) -> set[str]:
    style = KINDS[kind][1]
    return {fingerprint(render_entry(style, group, e, 0) + "\n") for e in entries if e.ident in forgot}


def expected_group(op_ours: str, op_theirs: str, group: int, style: str,
                   labels: tuple[str, str] = ("one", "two")) -> tuple[list, int]:
    """What the merge must give for one group: its entries (an entry, or a ("conflict", ours, theirs)
    pair of renderings) in order, and its conflict count. The rules are the task's, written once here."""
    base = base_group(group)
    ours, forgot_o = apply(op_ours, base, group, labels[0])
    theirs, forgot_t = apply(op_theirs, base, group, labels[1])
    by_id = [{e.ident: e for e in side} for side in (ours, theirs)]
    result: dict[str, object] = {}
    conflicts = 0
    for e in base:
        o, t = by_id[0].get(e.ident), by_id[1].get(e.ident)
        if e.ident in forgot_o | forgot_t:
            continue  # a forget wins over any edit of what it removed
        o_changed = o is None or o.words != e.words or o.count != e.count
        t_changed = t is None or t.words != e.words or t.count != e.count
        if not o_changed:
            pick = t
        elif not t_changed:
            pick = o
        elif o is None and t is None:
            pick = None
        elif o is not None and t is not None and o.words == t.words == e.words:
            pick = Entry(e.ident, e.words, o.count + t.count - e.count)  # both counted it again: the counts add
        elif o is not None and t is not None and o.words == t.words and o.count == t.count:
            pick = o
        else:
            pick = ("conflict", o, t)
            conflicts += 1
        if pick is not None:
            result[e.ident] = pick
    order = _expected_order(base, (op_ours, op_theirs), (ours, theirs))
    for side in (ours, theirs):
        for e in side:
            if e.ident not in {b.ident for b in base}:
                result[e.ident] = e
    return [result[i] for i in order if i in result], conflicts


MOVED = {"move": 2, COUNT: 1}  # the entry each operation moves to the top of its group


def _expected_order(base: list[Entry], ops: tuple[str, str], both: tuple[list[Entry], list[Entry]]) -> list[str]:
    """Base order; an entry a side moved to the top of the group comes first (ours' before theirs'), a new
    entry right after g1 wherever g1 ends up (ours' new one before theirs')."""
    ids = [e.ident for e in base]
    top: list[str] = []
    for op in ops:
        if op in MOVED and ids[MOVED[op]] not in top:
            top.append(ids[MOVED[op]])
    order = top + [i for i in ids if i not in top]
    news = [e.ident for side in both for e in side if e.ident not in ids]
    at = order.index(ids[1]) + 1
    return order[:at] + news + order[at:]


def expected_text(kind: str, pairs: list[tuple[str, str]], labels: tuple[str, str] = ("one", "two")) -> tuple[str, int]:
    """The merged file for `pairs` (one group each: (ours' operation, theirs')), sides named by `labels`,
    and its conflict count."""
    preamble, style, _ = KINDS[kind]
    units: list[tuple[str, str]] = []  # (sort key, text)
    conflicts = 0
    for group, (op_o, op_t) in enumerate(pairs):
        entries, n = expected_group(op_o, op_t, group, style, labels)
        conflicts += n
        if style == "day":
            head = f"## 2026-{1 + group // 28:02d}-{1 + group % 28:02d}"
            if n:
                ours, _ = apply(op_o, base_group(group), group, labels[0])
                theirs, _ = apply(op_t, base_group(group), group, labels[1])
                text = _marked(render_group(style, group, ours)[0], render_group(style, group, theirs)[0])
            else:
                text = head + "\n" + "\n".join(render_entry(style, group, e, 0) for e in entries)
            units.append((head[3:13], text))
            continue
        for e in entries:
            if isinstance(e, tuple):
                _, o, t = e
                text = _marked(render_entry(style, group, o, 0) if o else None,
                               render_entry(style, group, t, 0) if t else None)
                key = f"2026-{1 + group // 28:02d}-{1 + group % 28:02d}"
            else:
                text = render_entry(style, group, e, 0)
                key = text[3:13]
            units.append((key, text))
    if style in ("dated", "day"):
        units.sort(key=lambda u: u[0], reverse=True)
    sep = "\n" if style == "bullet" else "\n\n"
    body = sep.join(text.rstrip("\n") for _, text in units)
    return preamble + body + ("\n" if body else ""), conflicts


def _marked(ours: str | None, theirs: str | None) -> str:
    deleted = "(deleted on this branch)"
    return (CONFLICT_HEAD + (ours or deleted) + "\n" + CONFLICT_MID + (theirs or deleted) + "\n" + CONFLICT_END)


def sides(kind: str, pairs: list[tuple[str, str]]) -> tuple[str, str, str, set[str], set[str]]:
    """(base, side one, side two, side one's new fingerprints, side two's) for the groups `pairs`."""
    base_groups, one, two, fp_one, fp_two = [], [], [], set(), set()
    for group, (op_a, op_b) in enumerate(pairs):
        base = base_group(group)
        base_groups.append(base)
        a, forgot_a = apply(op_a, base, group, "one")
        b, forgot_b = apply(op_b, base, group, "two")
        one.append(a)
        two.append(b)
        fp_one |= fingerprints_of(kind, group, forgot_a, base)
        fp_two |= fingerprints_of(kind, group, forgot_b, base)
    return render(kind, base_groups), render(kind, one), render(kind, two), fp_one, fp_two
