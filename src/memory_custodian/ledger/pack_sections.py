"""The ledger's sections of the context pack: directives in full, gotchas for the touched paths,
and the top recall index lines for the task (owned by the ledger tier; `read` calls this).

Directives are never ranked: every active one is loaded in full, highest priority first. A stale
one ("active + stale") still holds until someone settles it, so it is loaded too, under a warning.
Each section packs whole notes (or whole index lines) under its budget from the manifest's
`## Context budget` (`- ledger directives: 800 tokens max`); whatever does not fit is named by id
as an Omission, so the explain section can say what was left out. A directive or gotcha scoped to
another branch is named the same way (reason `other-scope`), and the section ends with a line
saying so and counting the revoked, superseded and expired ones, which are no longer rules.

Default budgets (tokens): directives 800, gotchas 400, recall 300.
"""

from __future__ import annotations

from ..base.errors import LIBRARY_TERMS, Terms
from ..base.pack_parts import Omission, Section
from ..base.tokens import estimate_tokens
from .frames import index_line, provenance_frame, safe_body
from .index.in_force import in_force
from .recall.recall import run_recall
from .storage.ids import now_iso
from .storage.inputs import current_branch
from .storage.store import Ledger

DEFAULT_BUDGETS = {"directives": 800, "gotchas": 400, "recall": 300}
SECTION_NAMES = {"directives": "Ledger directives", "gotchas": "Ledger gotchas", "recall": "Ledger recall"}
RECALL_LINES = 15
OMITTED_BY_BUDGET = "omitted-by-budget"
OTHER_SCOPE = "other-scope"
PACK_STATES = ("active", "stale")  # what the directive and gotcha sections load
NOT_IN_FORCE = ("revoked", "superseded", "expired")  # counted at the end of a section, not loaded
TAIL_IDS = 5  # other-scope ids named in the section's own line; the omissions name them all


def _full(note, state: str = "active") -> str:
    lines = [index_line(note, state)]
    if state == "stale":  # warning first, before anything a reader might act on
        reason = (note.state_reason or "").strip()
        why = f" Reason: {reason}{'' if reason[-1:] in '.?!' else '.'}" if reason else ""
        lines.append(f"WARNING: flagged stale on {note.updated_at[:10]} — possibly out of date, but not withdrawn: "
                     f"it still applies until someone reinstates, supersedes or revokes it.{why}")
    # human notes too: a missing frame must never read as "recorded by a person"
    lines.append(f"({provenance_frame(note.provenance)})")
    if note.paths:
        lines.append("paths: " + ", ".join(note.paths))
    body = note.body.strip()
    prefix = note.title[:-1] if note.title.endswith("…") else note.title
    if body and body != note.title:
        # a title taken from the text is not said twice: the body goes on where the title stopped
        lines.append(safe_body("…" + body[len(prefix):].lstrip() if prefix and body.startswith(prefix)
                               and len(prefix) > 20 else note.body))
    return "\n".join(lines)


def _pack(key: str, blocks, budget: int | None, sep: str, tail: str | None = None, order: list[str] | None = None):
    """Whole blocks `(note id, text)` in order while they fit `budget`; the first that does not fit
    ends the section, and it and every note after it (`order`: all the ids, when `blocks` is read
    lazily and stops being asked) are named as omitted. A first block larger than the whole budget
    is kept whole (`oversized`) rather than cut."""
    shown: list[tuple[str, str]] = []
    used, oversized = 0, False
    for note_id, text in blocks:
        cost = estimate_tokens(text)
        if budget is not None and used + cost > budget:
            if shown:
                break
            oversized = True
        shown.append((note_id, text))
        used += cost
    ids = order if order is not None else [i for i, _ in blocks]
    module = f"ledger:{key}"
    omitted = [Omission(module, f"#{i}", OMITTED_BY_BUDGET) for i in ids[len(shown):]]
    text = sep.join(t for _, t in shown)
    if tail:
        text = (text + "\n" if text else "") + tail
    return Section(name=SECTION_NAMES[key], text=text + "\n" if text else "", tokens=estimate_tokens(text),
                   budget=budget, omitted=omitted, oversized=oversized, note_ids=[i for i, _ in shown])


def _left_out(index, key: str, res, hint: str, shown: bool) -> tuple[list, str | None]:
    """What a directive or gotcha recall did not load and why: Omissions naming each note scoped to
    another branch, and the section's closing line (those notes, and a count of the ones no longer
    in force). Forgotten notes keep no kind, so they cannot be counted here."""
    other = res.excluded_ids.get("other scope", [])
    omitted = [Omission(module=f"ledger:{key}", ref=f"#{i}", reason=OTHER_SCOPE) for i in other]
    lines = []
    count = res.excluded_counts.get("other scope", 0)
    if count:
        notes = index.get_notes(other[:TAIL_IDS])
        named = ", ".join(f"#{i} (branch `{notes[i].branch}`)" if notes.get(i) and notes[i].branch else f"#{i}"
                          for i in other[:TAIL_IDS])
        more = f" and {count - min(len(other), TAIL_IDS)} more" if count > min(len(other), TAIL_IDS) else ""
        lines.append(f"Not loaded (other scope): {named}{more} — scoped to another git branch")
    gone = [f"{res.excluded_counts[s]} {s}" for s in NOT_IN_FORCE if res.excluded_counts.get(s)]
    if gone:
        lines.append(f"Not loaded (no longer in force): {', '.join(gone)} — {hint} lists them")
    # a blank line first when notes precede it, so it does not read as part of the last note
    return omitted, ("\n" if shown else "") + "\n".join(lines) if lines else None


def unread_line(index, terms: Terms) -> str | None:
    """The pack's line for ledger lines that were skipped: how many, and who names them. A line
    this version cannot read (a newer version's, a hand edit's) and a torn last line each cost
    only that line, and the reader is told, so a missing note is never silent."""
    skipped, torn = index.unread_lines()
    pending = index.unread()
    if pending[0]:
        return (f"Ledger not read in full: {index.unread_said()} — {terms.phrase('{verb:reindex}')} reads it now."
                + (f" Besides, {skipped + torn} lines are skipped ({terms.phrase('{verb:doctor}')} names each)."
                   if skipped or torn else ""))
    if not skipped and not torn:
        return None
    parts = [f"{skipped} {'line' if skipped == 1 else 'lines'} this version cannot read"] if skipped else []
    if torn:
        parts.append(f"{torn} torn last {'line' if torn == 1 else 'lines'} (an interrupted write)")
    return (f"Ledger lines skipped: {' and '.join(parts)}; every other note is loaded as usual — "
            f"{terms.phrase('{verb:doctor}')} names each line.")


# What each section's closing line points to, in the caller's terms (`errors.Terms.phrase`).
HINTS = {"directives": "{verb:recall kinds=directive include_all}",
         "gotchas": "{verb:recall kinds=gotcha include_all paths=PATH}", "expand": "{verb:expand ids=ID}"}


def ledger_sections(memory, *, task: str, paths: tuple[str, ...] = (), query: str | None = None,
                    budgets: dict | None = None, terms: Terms = LIBRARY_TERMS) -> list:
    """Return a list of `memory_custodian.base.pack_parts.Section` for the pack (empty until the ledger
    exists); what a closing line hints at is worded in the caller's `terms`."""
    if not Ledger(memory.memory_dir_str).shards():
        return []
    limits = {**DEFAULT_BUDGETS, **(budgets or {})}
    # the Memory's own index connection, caught up: a session-start hook then opens one connection,
    # not one for the pack and one for its recall
    index = memory.index()
    # a cache damaged under an open connection is rebuilt and the sections read again, once
    return index.guarded(lambda: _sections(index, memory.root_str, paths, query, limits, terms))


def _in_force_section(index, key: str, root: str, limits: dict, terms: Terms, paths=()):
    """The directives (or the gotchas at `paths`) in force, read only as far as the budget takes them."""
    found = in_force(index, key[:-1], now=now_iso(), branch=lambda: current_branch(root), want_states=PACK_STATES,
                     paths=paths)
    left, tail = _left_out(index, key, found, terms.phrase(HINTS[key]), bool(found.ids))
    unread = unread_line(index, terms) if key == "directives" else None
    if unread:
        tail = (tail + "\n" if tail else ("\n" if found.ids else "")) + unread
    blocks = ((note.id, _full(note, state)) for note, state in found.pages())
    section = _pack(key, blocks, limits[key], "\n\n", tail=tail, order=found.ids)
    section.omitted += left
    return section


def _sections(index, root: str, paths: tuple[str, ...], query: str | None, limits: dict, terms: Terms) -> list:
    if index.unread()[0]:
        # the index holds part of the ledger (a command reads one step of a big backlog): the rules
        # must reach the agent all the same, so they are read straight from the shards
        sections = [_shard_directives(index.ledger.memory_dir_str, root, limits, unread_line(index, terms))]
    else:
        sections = [_in_force_section(index, "directives", root, limits, terms)]
    shown = list(sections[0].note_ids)
    if paths:
        sections.append(_in_force_section(index, "gotchas", root, limits, terms, paths))
        shown += sections[-1].note_ids
    if query or paths:
        if query:
            res = run_recall(index, query=query, limit=RECALL_LINES, root=root, near_paths=tuple(paths),
                             exclude_ids=tuple(shown), ids=False)
        else:
            res = run_recall(index, paths=paths, limit=RECALL_LINES, root=root, exclude_ids=tuple(shown), ids=False)
        left_out = not res.counted or res.below_cutoff or sum(res.excluded.values()) or res.partial or res.unranked \
            or res.unread[0]
        expand = terms.phrase(HINTS["expand"])
        tail = f"{res.footer(terms)} ({expand} for full notes)" if left_out else (
            f"{expand} for full notes" if res.hits else None)
        sections.append(_pack("recall", [(h.note.id, h.line()) for h in res.hits], limits["recall"], "\n", tail=tail))
    return sections


COLD_NOTICE = ("Recall is still being indexed (a fresh clone, or many new ledger lines): the directives above were read "
               "straight from the ledger; matching notes arrive with the next prompts once the index is built.")


def cold_sections(memory, *, budgets: dict | None = None) -> list:
    """The pack's ledger part while there is no index: every directive in force, and a line saying recall waits."""
    limits = {**DEFAULT_BUDGETS, **(budgets or {})}
    return [_shard_directives(memory.memory_dir_str, memory.root_str, limits, COLD_NOTICE)]


def _shard_directives(memory_dir: str, root: str, limits: dict, notice: str | None):
    """Every directive in force, read from the shards without the index (`cold_start.py`), and `notice`."""
    from .index.cold_start import directive_notes

    found = directive_notes(memory_dir, root, now_iso())
    tail = ("\n" if found else "") + notice if notice else None
    # blocks rendered as the budget takes them: 1,319 directives at 74,900 notes, about ten shown
    return _pack("directives", ((note.id, _full(note, state)) for note, state in found), limits["directives"],
                 "\n\n", tail=tail, order=[note.id for note, _ in found])
