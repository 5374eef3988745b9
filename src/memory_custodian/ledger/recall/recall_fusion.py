"""Lexical and semantic recall fused by reciprocal rank: each channel ranks the notes the filters
let through, and a note's fused score is the sum of each channel's weight over (RRF_K + its rank).

Filters, states and scope are the lexical plan's own SQL, so the semantic side can never surface
a note the caller filtered out. The account stays whole: `matched` is every note either channel
matched (lexical: a shared word; semantic: among the SEMANTIC_DEPTH most similar eligible notes at
or above `semantic.MIN_COSINE`), the
exclusions are the lexical scan's, and `channels` keeps each channel's ranking for `eval`.
"""

from __future__ import annotations

import json

from . import semantic
from .recall_result import RecallHit
from .recall_scans import BELOW_IDS_CAP, choose_scan

RRF_K = 5
# the semantic channel ranks this many notes (its "matched"); past it a rank adds under 1/(RRF_K + 100)
SEMANTIC_DEPTH = 100
# the weights of the two channels (tuned on the train splits of both truth sets)
LEXICAL_WEIGHT = 1.0
SEMANTIC_WEIGHT = 1.0


def fused_recall(index, plan, result):
    """Run the lexical scan, rank the same eligible notes semantically, and fuse the two."""
    ask = plan.ask
    lexical = choose_scan(index, plan)(index, plan, result)
    lex = [h.note.id for h in lexical.hits] + list(lexical.below_ids)
    deeper = max(0, lexical.matched - len(lex))  # lexical matches past the ids a scan lists
    plan.branch()
    sql = (f"SELECT n.id FROM notes n WHERE n.id IN (SELECT value FROM json_each(:fuse_ids)) "
           f"AND {plan.base} AND {plan.included}")

    def keep(ids: list[str]) -> set[str]:
        return {r[0] for r in index.db.execute(sql, dict(plan.params, fuse_ids=json.dumps(ids)))}

    sem = semantic.ranked(index, ask.text, keep, SEMANTIC_DEPTH)
    scores: dict[str, float] = {}
    for rank, note_id in enumerate(lex, 1):
        scores[note_id] = LEXICAL_WEIGHT / (RRF_K + rank)
    for rank, note_id in enumerate(sem, 1):
        scores[note_id] = scores.get(note_id, 0.0) + SEMANTIC_WEIGHT / (RRF_K + rank)
    order = sorted(scores, key=lambda n: (-scores[n], n))
    top = order[:ask.limit]
    notes = index.get_notes(top)
    result.hits = [RecallHit(rank=i, score=scores[n], note=notes[n], state=notes[n].state_at(ask.now))
                   for i, n in enumerate(top, 1)]
    result.below_ids = order[ask.limit:ask.limit + BELOW_IDS_CAP]
    result.matched = len(order) + deeper
    result.channels = {"lexical": lex, "semantic": sem}
    return result
