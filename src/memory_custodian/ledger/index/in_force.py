"""The notes of one kind in force, in the order the context pack takes them, read only as far as it can send.

The pack's directive and gotcha sections are not ranked: every note in force (active or stale, in
scope) goes in, highest priority first, newest first, until the section's budget is full. At 74,900
notes there are 1,288 directives for a budget of about ten, so the order, the counts and the ids of
what is left out come from the index alone (one query over `notes`, no note decoded), and the
notes themselves are read a page at a time, only while the budget has room.
"""

from __future__ import annotations

from ..recall.recall_plan import EFFECTIVE_STATE, path_filter
from ..recall.recall_scans import EXCLUDED_IDS_CAP

PAGE = 16  # notes decoded at a time: a budget of 800 tokens takes about ten directives


class InForce:
    """`ids`: the notes in force in pack order; `excluded_counts` {reason: n} and `excluded_ids`
    {reason: ids} of the rest of the kind (a state no longer in force, or "other scope"), as
    `RecallResult` names them; `states` {note id: its state as of now}."""

    def __init__(self, index, ids: list[str], states: dict[str, str], excluded_counts: dict, excluded_ids: dict):
        self.index, self.ids, self.states = index, ids, states
        self.excluded_counts, self.excluded_ids = excluded_counts, excluded_ids

    def pages(self):
        """(note, state) in pack order, decoded PAGE notes at a time as the caller asks for more."""
        for start in range(0, len(self.ids), PAGE):
            chunk = self.ids[start:start + PAGE]
            notes = self.index.get_notes(chunk)
            for note_id in chunk:
                yield notes[note_id], self.states[note_id]


def in_force(index, kind: str, *, now: str, branch, want_states: tuple[str, ...], paths=()) -> InForce:
    """The notes of `kind` in `want_states` and in scope (`branch`: the current git branch, a
    callable asked only when a note is scoped to a branch), anchored at `paths` when given."""
    params: dict = {"now": now, "kind": kind}
    where = "n.kind = :kind AND n.state != 'forgotten'"
    if paths:
        where += " AND " + path_filter(list(paths), "p", params)
    rows = index.db.execute(
        f"SELECT n.id, {EFFECTIVE_STATE}, n.scope, n.branch FROM notes n WHERE {where} "
        "ORDER BY n.prio, n.created_at DESC, n.created_event DESC", params).fetchall()
    current = None
    ids: list[str] = []
    states: dict[str, str] = {}
    counts: dict[str, int] = {}
    listed: dict[str, list[str]] = {}
    for note_id, state, scope, note_branch in rows:
        if state in want_states and scope != "workspace":
            if current is None:
                current = (branch() if callable(branch) else branch,)
            in_scope = note_branch == current[0]
        else:
            in_scope = True
        if state in want_states and in_scope:
            ids.append(note_id)
            states[note_id] = state
            continue
        reason = state if state not in want_states else "other scope"
        counts[reason] = counts.get(reason, 0) + 1
        listed.setdefault(reason, []).append(note_id)
    return InForce(index, ids, states, counts, {k: sorted(v)[:EXCLUDED_IDS_CAP] for k, v in listed.items()})

