"""A note in its context: the notes recorded just before and after it lend it part of their score.

Notes written in one burst explain one another. In a conversation an answer is worded after the
question it answers ("She's ninety-one and still tends her garden every morning" comes right after
"What does your grandmother grow?"), and what one session records is about one piece of work. So
among the notes a query matched, each gains CONTEXT_WEIGHT times the best score of the CONTEXT_SPAN
nearest matched notes on either side of it in time, recorded within CONTEXT_WINDOW_S of it.

Only what the query matched is a candidate (a neighbour lends score, never a place in the results),
and only the full-account callers re-rank so (`recall`, the MCP server, `eval`), as with the
thesaurus: the hooks and the context pack never do. Measured on the held-out chats
(`benchmarks/heldout/`, recall@10): dev 0.700 -> 0.785, test 0.679 -> 0.783; the generated
conversational set 0.633 -> 0.712 (test), the software set unchanged (0.710). Weight 0.5, a span of
1, or a 300 s window did no better on dev (docs/recall-benchmarks.md).
"""

from __future__ import annotations

from datetime import datetime

USE_CONTEXT = True
CONTEXT_WEIGHT = 0.25
CONTEXT_SPAN = 2
CONTEXT_WINDOW_S = 120.0

_EPOCH = datetime(1970, 1, 1)


def _seconds(at: str) -> float:
    """Seconds since the epoch of a stored UTC time (`2026-03-07T19:00:50.000Z`)."""
    return (datetime.fromisoformat(at[:23]) - _EPOCH).total_seconds()


def context_gains(rows) -> dict[str, float]:
    """{note id: the best score among its matched neighbours} for candidate rows
    `(id, score, state, in scope, created_at, created_event)`; neighbours in (created_at, id) order."""
    line = sorted(((_seconds(r[4]), r[0], r[1] or 0.0) for r in rows if r[4]), key=lambda x: (x[0], x[1]))
    gains: dict[str, float] = {}
    span, window, n = CONTEXT_SPAN, CONTEXT_WINDOW_S, len(line)
    for i, (at, note_id, _) in enumerate(line):
        best = 0.0
        for j in range(max(0, i - span), min(n, i + span + 1)):
            if j != i and abs(line[j][0] - at) <= window and line[j][2] > best:
                best = line[j][2]
        if best:
            gains[note_id] = best
    return gains


def in_context(plan, scan):
    """`scan` with each candidate's context gain added (see the module's docstring)."""
    if not plan.ask.context:
        return scan

    def scan_in_context(match_expr):
        rows = scan(match_expr)
        gains = context_gains(rows)
        weight = CONTEXT_WEIGHT
        return [(r[0], (r[1] or 0.0) + weight * gains[r[0]], *r[2:]) if r[0] in gains else r for r in rows]
    return scan_in_context
