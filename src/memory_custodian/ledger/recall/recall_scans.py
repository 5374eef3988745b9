"""The scans that answer a planned recall (`recall_plan.Plan`), each filling a `RecallResult`.

Two scans read every candidate once and rank in Python: from SQL (`scan_sql_once`) or from the
note metadata kept in memory (`scan_in_memory`) — the same rows and the same floats either way,
so the same ranks and ties. The others rank inside SQLite: the hits alone (`scan_hits`), a browse
without a query (`scan_browse`), and the general case, a ranked page plus one counting pass
(`scan_two_pass`). Every scan orders by score, then newest first, then id.
"""

from __future__ import annotations

import json
from operator import itemgetter

from . import ranking
from .recall_plan import EFFECTIVE_STATE, IN_SCOPE, count, plan_recall
from .recall_result import RecallHit, RecallResult

SINGLE_PASS_MAX = 5000  # candidates up to which one scan, sorted in Python, beats two SQL passes
BELOW_IDS_CAP = 500  # JSON lists at most this many below-cutoff ids (the count is always exact)
EXCLUDED_IDS_CAP = 500  # likewise for excluded ids, per reason, lowest ids first
# a candidate row: (id, score, state, in scope, created_at, created_event); its id, and its rank key
_ID, _RANK = itemgetter(0), itemgetter(1, 4, 5)


def _add_hits(index, result, top, now) -> None:
    """The hits for `top`, rows of (note id, score, ...) in rank order."""
    notes = index.get_notes([r[0] for r in top])
    for i, r in enumerate(top, 1):
        note = notes[r[0]]
        result.hits.append(RecallHit(rank=i, score=float(r[1] or 0.0), note=note, state=note.state_at(now)))


def _included(ask, rows) -> list:
    include_all, want = ask.include_all, ask.want_states
    return [r for r in rows if include_all or (r[2] in want and r[3])]


def _fill(index, ask, result, rows, inc):
    """Fill `result` from one scan: `rows` every candidate, `inc` the included ones in rank order."""
    result.matched = len(inc)
    _add_hits(index, result, inc[:ask.limit], ask.now)
    result.below_ids = [r[0] for r in inc[ask.limit:ask.limit + BELOW_IDS_CAP]]
    if not ask.include_all:
        want = ask.want_states
        reasons: dict[str, int] = {}
        listed: dict[str, list[str]] = {}
        for r in rows:
            if r[2] in want and r[3]:
                continue
            reason = r[2] if r[2] not in want else "other scope"
            reasons[reason] = reasons.get(reason, 0) + 1
            listed.setdefault(reason, []).append(r[0])
        result.excluded_counts = reasons
        if ask.ids:
            result.excluded_ids = {k: sorted(v)[:EXCLUDED_IDS_CAP] for k, v in listed.items()}
    result.ids_listed = bool(ask.ids)
    return result


def _note_partial(db, plan, result, rank_match, rank_count=None) -> None:
    """When a narrower tier was ranked: how many notes match only the broad one (`partial`),
    exact or a lower bound. `rank_count`: the ranked tier's count, when known."""
    if plan.cut is not None:  # the candidates were ranked: the rest of the broad tier shares only some words
        rank_count = plan.rank_count
    elif rank_match == plan.tiers[0]:
        return
    if rank_count is None:
        rank_count = count(db, rank_match, window=plan.window)
    broad_count, broad_exact = plan.broad_count, plan.broad_exact
    if not broad_exact and rank_count >= broad_count:
        broad_count, broad_exact = count(db, plan.tiers[0], window=plan.window), True  # the lower bound would not hold
    result.partial, result.partial_exact = broad_count - rank_count, broad_exact


def _rank_in_python(index, plan, result, scan, keys=None):
    """Rank, count and list exclusions from one scan of the candidates (the common case: a few
    thousand at most), sorting exactly as the SQL `ORDER BY` would. `scan(match)` gives the
    candidate rows; a tier that keeps too few for the page falls back to a broader one."""
    ask, tiers = plan.ask, plan.tiers
    rank_match = plan.rank_match
    rows = scan(rank_match)
    inc = _included(ask, rows)
    at = tiers.index(rank_match)
    while at and len(inc) < ask.limit:
        # filters go straight back to the broad tier (one scan more); an unfiltered query whose
        # last tier was left uncounted, to the next broader tier
        at = at - 1 if plan.rank_count is None else 0
        rank_match = tiers[at]
        rows = scan(rank_match)
        inc = _included(ask, rows)
    known = None
    if rank_match == plan.rank_match:
        known = len(rows) if plan.rank_count is None else plan.rank_count  # unfiltered: the scan saw the tier
    _note_partial(index.db, plan, result, rank_match, known)
    # score DESC, created_at DESC, created_event DESC, then id: a stable sort by id, then one by the
    # rest reversed (reverse=True keeps equal items in their order)
    by_id, by_rank = keys or (lambda r: r[0], lambda r: (r[1] or 0.0, r[4] or "", r[5] or ""))
    inc.sort(key=by_id)
    inc.sort(key=by_rank, reverse=True)
    return _fill(index, ask, result, rows, inc)


def sql_rows(index, plan):
    """`scan(match, only=None)`: the candidate rows of `plan` for one MATCH, scored in SQL; `only`:
    the note ids to score, when the caller needs no others (BM25 is paid per row returned)."""
    sql = (f"SELECT n.id, {plan.score}, {EFFECTIVE_STATE}, {IN_SCOPE}, n.created_at, n.created_event "
           f"FROM {plan.source} WHERE {plan.base}{plan.match_cond}")
    only_sql = sql + " AND n.id IN (SELECT value FROM json_each(:only))"

    def scan(match_expr, only=None):
        if only is None:
            return index.db.execute(sql, dict(plan.params, match=match_expr)).fetchall()
        return index.db.execute(only_sql, dict(plan.params, match=match_expr, only=json.dumps(only))).fetchall()
    return scan


def _fts_scores(db, match_expr: str) -> dict:
    return {rowid: -bm25 for rowid, bm25 in db.execute(
        f"SELECT rowid, {ranking.bm25_sql()} FROM notes_fts WHERE notes_fts MATCH ?", (match_expr,))}


def _bm25_scores(index, ask, match_expr: str) -> dict:
    """{rowid: BM25 (positive)} for the broad match: from the in-memory postings when the index
    keeps them (the query's words; each path phrase, which postings of single words cannot score,
    from FTS5 and added last, as FTS5 sums phrases in order), else from FTS5 for the whole match."""
    postings = index.postings()
    scored = postings.scores(ask.words) if postings is not None else None
    if scored is None:
        return _fts_scores(index.db, match_expr)
    for phrase in ranking.path_phrases(ask.paths):
        for rowid, score in _fts_scores(index.db, phrase).items():
            scored[rowid] = scored.get(rowid, 0.0) + score
    return scored


def _expansion_scores(index, expansion) -> dict:
    """{rowid: BM25} for the expansion's MATCH: from the in-memory postings (a plain OR of words)."""
    postings = index.postings()
    scored = postings.scores([(w, False) for w in expansion[2]]) if postings is not None else None
    return _fts_scores(index.db, expansion[0]) if scored is None else scored


def memory_rows(index, plan):
    """`sql_rows` without the join: BM25 from the in-memory postings (the broad tier) or FTS5 (any
    tier), the priors, state and scope from the in-memory metadata, kinds filtered in memory and
    the selective filters (tags, paths, excluded ids) as one set of rowids from SQL — the same rows
    and scores as `sql_rows` (`ranking.score` is `ranking.score_sql` in Python)."""
    db, ask, meta, params = index.db, plan.ask, plan.meta, plan.params
    allowed = {r for (r,) in db.execute(f"SELECT n.rowid FROM notes n WHERE {plan.base}", params)} \
        if ask.selective else None
    lifted = {r for (r,) in db.execute(f"SELECT n.rowid FROM notes n WHERE {plan.near}", params)} \
        if plan.near else None
    kinds, now, score_of = ask.kinds, ask.now, ranking.score
    if plan.cut is not None:
        allowed = set(plan.cut) if allowed is None else allowed & set(plan.cut)
    priors: dict = {}

    def scan(match_expr, only=None):  # `only` as in `sql_rows`: the postings cost no more for all
        if match_expr == ask.broad:
            scored = _bm25_scores(index, ask, match_expr)
        elif ask.expansion is not None and match_expr == ask.expansion[0]:
            scored = _expansion_scores(index, ask.expansion)
        else:
            scored = _fts_scores(db, match_expr)
        rows = []
        append = rows.append
        for rowid, bm25 in scored.items():
            m = meta.get(rowid)
            if m is None:
                continue
            note_id, pk, state, expires, scope, note_branch, created_at, created_event = m
            if state == "forgotten" or (kinds and pk[1] not in kinds) or (allowed is not None and rowid not in allowed):
                continue
            prior = priors.get(pk)
            if prior is None:
                prior = priors[pk] = ranking.prior(*pk)
            if expires is not None and expires <= now and state in ("active", "stale"):
                state = "expired"
            append((note_id, score_of(bm25, prior, None if lifted is None else rowid in lifted), state,
                    scope == "workspace" or note_branch == plan.branch(), created_at, created_event))
        return rows
    return scan


def expanded(plan, scan):
    """`scan` with the query's expansion added: a note the query matches gains the expansion's weight
    times its score on the expansion's MATCH. A note only the expansion finds is no candidate, so a
    thesaurus word never outranks the query's own and `matched` counts what the query matched."""
    if plan.ask.expansion is None:
        return scan
    expansion, weight, _ = plan.ask.expansion

    def scan_expanded(match_expr):
        rows = {r[0]: r for r in scan(match_expr)}
        for r in scan(expansion, only=sorted(rows)):
            own = rows.get(r[0])
            if own is not None:
                rows[r[0]] = (r[0], (own[1] or 0.0) + weight * (r[1] or 0.0), *own[2:])
        return list(rows.values())
    return scan_expanded


def scan_in_memory(index, plan, result):
    from .context import in_context  # full-account scans only: a hook never loads it (nor `datetime`)

    # the metadata holds no NULLs (see Index.note_meta): plain item keys order as SQL's do
    return _rank_in_python(index, plan, result, in_context(plan, expanded(plan, memory_rows(index, plan))),
                           keys=(_ID, _RANK))


def scan_sql_once(index, plan, result):
    from .context import in_context  # as in scan_in_memory

    return _rank_in_python(index, plan, result, in_context(plan, expanded(plan, sql_rows(index, plan))))


def _ranked(index, plan, cap: int):
    """The top `cap` included notes `(id, score)` in rank order, and the MATCH they were ranked on:
    the plan's tier, or the broad one when filters left that tier too few for the page."""
    ask, tiers = plan.ask, plan.tiers
    sql = (f"SELECT n.id, {plan.score} AS score FROM {plan.source} WHERE {plan.base}{plan.match_cond} "
           f"AND {plan.included} ORDER BY {plan.order} LIMIT :cap")

    def ranked(match_expr):
        p = dict(plan.params, cap=cap)
        if match_expr is not None:
            p["match"] = match_expr
        return index.db.execute(sql, p).fetchall()

    rows = ranked(plan.rank_match)
    if tiers and plan.rank_match != tiers[0] and len(rows) < ask.limit:
        return ranked(tiers[0]), tiers[0]
    return rows, plan.rank_match


def scan_hits(index, plan, result):
    """The hits, ranked in SQL; with "matched" accounting, also how many matched (one count)."""
    ask, db = plan.ask, index.db
    rows, rank_match = _ranked(index, plan, ask.limit)
    _add_hits(index, result, rows, ask.now)
    if ask.accounting == "hits":
        result.matched = len(rows)
        return result
    result.ids_listed = False
    p = dict(plan.params, match=rank_match) if plan.tiers else plan.params
    source, cond = plan.counted_from()
    result.matched = len(rows) if len(rows) < ask.limit else db.execute(
        f"SELECT count(*) FROM {source} WHERE {plan.base}{cond} AND {plan.included}", p).fetchone()[0]
    if plan.tiers:
        _note_partial(db, plan, result, rank_match)
    return result


def scan_browse(index, plan, result):
    """Without a query but with a selective filter (paths, tags): one scan ranked in Python, or
    the two SQL passes when the filter keeps more than SINGLE_PASS_MAX notes (they serve those better)."""
    ask = plan.ask
    if SINGLE_PASS_MAX < 0:
        return scan_two_pass(index, plan, result)
    rows = index.db.execute(
        f"SELECT n.id, {plan.score}, {EFFECTIVE_STATE}, {IN_SCOPE}, n.created_at, n.created_event, n.prio "
        f"FROM notes n WHERE {plan.base} LIMIT :one_pass_cap", dict(plan.params, one_pass_cap=SINGLE_PASS_MAX + 1)
    ).fetchall()
    if len(rows) > SINGLE_PASS_MAX:
        return scan_two_pass(index, plan, result)
    inc = _included(ask, rows)
    # score DESC (near a touched path), prio, created_at DESC, created_event DESC, id — as the SQL orders
    inc.sort(key=lambda r: r[0])
    inc.sort(key=lambda r: (r[4] or "", r[5] or ""), reverse=True)
    inc.sort(key=lambda r: r[6])
    inc.sort(key=lambda r: r[1] or 0.0, reverse=True)
    return _fill(index, ask, result, rows, inc)


def _count_matched(index, plan, result, params) -> dict:
    """One pass that counts what matched, and why and which of the rest were excluded; returns
    {reason: count}."""
    ask = plan.ask
    matched = 0
    reasons: dict[str, int] = {}
    listed: dict[str, list[str]] = {}
    id_expr = f"group_concat(CASE WHEN {plan.included} THEN NULL ELSE n.id END, ' ')" if ask.ids else "NULL"
    source, cond = plan.counted_from()
    for state, in_scope, n, excluded_ids in index.db.execute(
            f"SELECT {EFFECTIVE_STATE} AS st, {IN_SCOPE} AS ok, count(*), {id_expr} FROM {source} "
            f"WHERE {plan.base}{cond} GROUP BY st, ok", params):
        if state in ask.want_states and in_scope:
            matched += n
            continue
        reason = state if state not in ask.want_states else "other scope"
        reasons[reason] = reasons.get(reason, 0) + n
        if excluded_ids:
            listed.setdefault(reason, []).extend(excluded_ids.split(" "))
    result.matched = matched
    for reason, got in listed.items():
        result.excluded_ids[reason] = sorted(got)[:EXCLUDED_IDS_CAP]
    return reasons


def scan_two_pass(index, plan, result):
    """The general case: a ranked page (and the below-cutoff ids) from SQL, then one counting pass."""
    ask, tiers, params = plan.ask, plan.tiers, plan.params
    cap = ask.limit + BELOW_IDS_CAP
    rows, rank_match = _ranked(index, plan, cap)
    if tiers:
        # On a broad query over a big ledger the counts cover the ranked tier (every word); the
        # notes that share only some words are counted, unfiltered, as `partial`.
        params["match"] = rank_match
        _note_partial(index.db, plan, result, rank_match)
    complete = rank_match == (tiers[0] if tiers else None) and len(rows) < cap
    reasons: dict[str, int] = {}
    if ask.include_all:
        source, cond = plan.counted_from()
        result.matched = len(rows) if complete else index.db.execute(
            f"SELECT count(*) FROM {source} WHERE {plan.base}{cond}", params).fetchone()[0]
    else:
        reasons = _count_matched(index, plan, result, params)
    _add_hits(index, result, rows[:ask.limit], ask.now)
    result.below_ids = [r[0] for r in rows[ask.limit:]]
    result.excluded_counts = reasons
    result.ids_listed = bool(ask.ids)
    return result


def choose_scan(index, plan):
    """The planner's choice of scan for `plan`; after a candidate cut that left fewer notes than the
    page holds (most of them in states not asked for), the broad tier ranked in full."""
    scan = _choose_scan(index, plan)
    if plan.cut is None:
        return scan

    def cut_or_broad(index, plan, result):
        got = scan(index, plan, result)
        if len(got.hits) >= plan.ask.limit:
            return got

        full = plan_recall(index, plan.ask, cut=False)
        again = RecallResult(query=result.query, filters=result.filters, accounting=result.accounting,
                             unread=result.unread, unread_failure=result.unread_failure, unranked=full.unranked)
        return _choose_scan(index, full)(index, full, again)
    return cut_or_broad


def _choose_scan(index, plan):
    ask = plan.ask
    one_scan = plan.rank_count is None or plan.rank_count <= SINGLE_PASS_MAX
    if ask.accounting == "full" and plan.tiers and SINGLE_PASS_MAX >= 0 and one_scan and plan.window is None:
        plan.meta = index.note_meta()  # a caller asking again, on a ledger small enough: rank from memory
        if plan.meta is not None:
            return scan_in_memory
    plan.branch()  # every scan below is SQL, which compares note branches with :branch
    if ask.accounting != "full":
        return scan_hits
    if plan.tiers and one_scan:
        return scan_sql_once
    if not plan.tiers and (ask.paths or ask.tags):
        return scan_browse
    return scan_two_pass
