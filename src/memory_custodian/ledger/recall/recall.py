"""Ranked recall over the index: filters inside the SQL, a cutoff, and an account of the rest.

A recall never hides anything silently: besides the hits it counts what matched below the cutoff
and what its state or scope excluded (with the ids), and the text form always ends with that line.
The ranking knobs live in `ranking.py`, the plan in `recall_plan.py`, the scans that run it in
`recall_scans.py` and what a recall returns in `recall_result.py`; this module is the entry point.
"""

from __future__ import annotations

from ...base.errors import InvalidInput
from ..storage.ids import now_iso
from ..storage.inputs import clean_limit, clean_paths, clean_tags, require_utf8
from ..storage.model import KINDS, RECALL_DEFAULT_STATES, RECALL_STATES
from . import ranking
from .recall_plan import RecallQuery, plan_recall
from .recall_result import RecallResult
from .recall_scans import choose_scan

# what a caller's `counts` asks to account for (see RecallQuery)
ACCOUNTING = {True: "full", "matched": "matched", False: "hits"}
# The thesaurus and the context of a note (`context.py`) serve the callers that ask for the full
# account: `recall`, the MCP server, `eval`.
# The hooks ask for less and stay within their budget.
EXPANSION_ACCOUNTING = "full"


def check_query(query=None, *, kinds=(), tags=(), paths=(), states=(), limit=10, include_all=False, now=None,
                root=None, near_paths=(), exclude_ids=(), counts=True, ids=True, expand=False) -> RecallQuery:
    """The query `run_recall` is asked, checked: bad input is refused here, before anything is read.
    `expand`: re-rank by the thesaurus (`query_expand.py`) when the caller asks for the full account."""
    limit = clean_limit(limit)
    if counts not in ACCOUNTING:
        raise InvalidInput(f"counts must be True, False or 'matched', not {counts!r}")
    kinds = tuple(sorted(set(kinds)))
    for k in kinds:
        if k not in KINDS:
            raise InvalidInput(f"unknown kind {k!r}; use one of: {', '.join(KINDS)}")
    for s in states:
        if s not in RECALL_STATES:
            raise InvalidInput(f"unknown state {s!r}; use one of: {', '.join(RECALL_STATES)}")
    tags, paths = clean_tags(tags), clean_paths(paths, query=True)
    near_paths = clean_paths(near_paths, query=True)
    now = now or now_iso()
    text = require_utf8(query, "QUERY").strip() if isinstance(query, str) and query.strip() else None
    words = ranking.match_words(text) if text else []
    broad = ranking.build_match(text, paths=tuple(paths), words=words) if text else None
    expansion = None
    full = expand and broad is not None and ACCOUNTING[counts] == EXPANSION_ACCOUNTING
    if full and text and ranking.USE_EXPANSION:
        from .query_expand import build_expansion

        expansion = build_expansion(text, words)
    if full:
        from . import context  # the full account's re-ranking: a hook never loads it (nor `datetime`)
    return RecallQuery(text=text, words=words, broad=broad, expansion=expansion, context=full and context.USE_CONTEXT,
                       kinds=kinds, tags=tags, paths=paths,
                       near_paths=near_paths, exclude_ids=tuple(exclude_ids), states=tuple(states),
                       want_states=tuple(states) or RECALL_DEFAULT_STATES, include_all=include_all, limit=limit,
                       now=now, root=root, accounting=ACCOUNTING[counts], ids=ids)


def run_recall(index, *, query=None, kinds=(), tags=(), paths=(), states=(), limit=10, include_all=False,
               now=None, root=None, near_paths=(), exclude_ids=(), counts=True, ids=True,
               expand=False) -> RecallResult:
    """Rank, filter (inside the SQL, before the cutoff) and account for the rest.

    `counts=False` is for callers that show only the hits and say so: it skips counting what fell
    below the cutoff or was excluded; `RecallResult.counted` is then False. `counts="matched"` (the
    prompt hook, which says how many more matched) counts what matched but not what was excluded
    or why: one count query instead of reading every match (40 -> 14 ms at 7,490 notes);
    `RecallResult.excluded_counted` is then False.
    `ids=False` keeps the exact counts but skips listing the excluded ids (text output needs only counts).
    `expand=True` (`Memory.recall`: the CLI, the MCP server, `eval`; not the context pack) re-ranks
    by the thesaurus and by each note's neighbours in time, when the caller asks for the full account.
    """
    ask = check_query(query, kinds=kinds, tags=tags, paths=paths, states=states, limit=limit, include_all=include_all,
                      now=now, root=root, near_paths=near_paths, exclude_ids=exclude_ids, counts=counts, ids=ids,
                      expand=expand)
    result = RecallResult(query=ask.text, filters=ask.filters(), accounting=ask.accounting, unread=index.unread(),
                          unread_failure=index.unread_failure())
    if ask.text and ask.broad is None:
        return result  # a query of nothing FTS5 can match
    plan = plan_recall(index, ask)
    result.unranked = plan.unranked
    return choose_scan(index, plan)(index, plan, result)
