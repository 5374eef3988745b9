"""A note in its context: the notes recorded just before and after it lend it part of their score.

Notes written in one burst explain one another. In a conversation an answer is worded after the
question it answers ("She's ninety-one and still tends her garden every morning" comes right after
"What does your grandmother grow?"), and what one session records is about one piece of work. So
among the notes a query matched, each gains CONTEXT_WEIGHT times the best score of the CONTEXT_SPAN
nearest matched notes on either side of it in time, recorded within CONTEXT_WINDOW_S of it — but
not at the same instant: notes written in one go (a bulk import, an `edit` check-in) are one write,
not one conversation, and their order among themselves says nothing.

Only what the query matched is a candidate (a neighbour lends score, never a place in the results),
and only the full-account callers re-rank so (`recall`, the MCP server, `eval`), as with the
thesaurus: the hooks and the context pack never do. Measured on the held-out chats
(`benchmarks/heldout/`, recall@10): dev 0.700 -> 0.785, test 0.679 -> 0.783; the generated
conversational set 0.633 -> 0.712 (test), the software set unchanged (0.710). Weight 0.5, a span of
1, or a 300 s window did no better on dev (docs/recall-benchmarks.md).
"""

from __future__ import annotations

import heapq
from datetime import datetime
from functools import lru_cache
from operator import itemgetter

USE_CONTEXT = True
CONTEXT_WEIGHT = 0.25
CONTEXT_SPAN = 2
CONTEXT_WINDOW_S = 120.0
CONTEXT_LENDERS = 128  # as good as every note lending on every set (64: conversation train -0.9)

_AT_ID = itemgetter(4, 0)


def _score_id(row) -> tuple:
    return (row[1] or 0.0, row[0])

_EPOCH = datetime(1970, 1, 1)


@lru_cache(maxsize=1 << 17)  # a note's time is parsed once a process, not once a recall
def _seconds(at: str) -> float:
    """Seconds since the epoch of a stored UTC time (`2026-03-07T19:00:50.000Z`)."""
    return (datetime.fromisoformat(at[:23]) - _EPOCH).total_seconds()


def context_gains(rows) -> dict[str, float]:
    """{note id: the best score its matched neighbours lend it} for candidate rows
    `(id, score, state, in scope, created_at, created_event)`; neighbours in (created_at, id) order.
    Only the CONTEXT_LENDERS best-scored notes lend: a note further down lends too little to lift
    another into view, and a recall parses a time only where it lends (a broad query at 8,541 notes
    matches ~1,900)."""
    by_time = sorted((r for r in rows if r[4]), key=_AT_ID)
    if len(by_time) < 2:
        return {}
    pos = {r[0]: i for i, r in enumerate(by_time)}
    gains: dict[str, float] = {}
    window, span, last = CONTEXT_WINDOW_S, CONTEXT_SPAN, len(by_time) - 1
    for lender in heapq.nlargest(CONTEXT_LENDERS, by_time, key=_score_id):
        i, score = pos[lender[0]], lender[1] or 0.0
        if not score:
            continue
        at = _seconds(lender[4])
        for j in range(max(0, i - span), min(last, i + span) + 1):
            other = by_time[j]
            if j != i and 0.0 < abs(_seconds(other[4]) - at) <= window and score > gains.get(other[0], 0.0):
                gains[other[0]] = score
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
