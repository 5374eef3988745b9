"""What a recall asks (`RecallQuery`) and how it will be answered (`Plan`): the filters as SQL, the
score, the tier of the MATCH to rank on big ledgers, and which scan (`recall_scans.py`) runs it.

Filters are part of every scan's SQL, applied before the cutoff, never after an over-fetch.
"""

from __future__ import annotations

import json
from itertools import combinations

from ...base.limits import RANKED_NOTES
from ...base.records import Record
from ..storage.inputs import current_branch
from ..storage.paths import candidate_prefixes
from . import ranking
from .tiers import match_tiers, tier_units

# A note's state as of :now (time-derived expiry applied), and whether its scope is in reach.
EFFECTIVE_STATE = ("(CASE WHEN n.state IN ('active','stale') AND n.expires IS NOT NULL AND n.expires <= :now "
                   "THEN 'expired' ELSE n.state END)")
IN_SCOPE = "(n.scope = 'workspace' OR n.branch IS :branch)"
FTS_SOURCE = "notes_fts JOIN notes n ON n.rowid = notes_fts.rowid"
WINDOW_RARE_MAX = 2000  # past a ranking window, the older notes holding a word at most this many hold are ranked too


class RecallQuery(Record):
    """What was asked, checked: `text` and its MATCH `words`/`broad` (None without a query) and
    `expansion` (the thesaurus words' MATCH, weight and words, or None), `context` (whether neighbours in
    time lend their score: `context.py`), the filters, the cutoff, the states asked
    for and so wanted (`want_states`), the time, and how much to account for: "full" (counts and
    exclusions), "matched" (the hits and how many matched) or "hits" (the hits only)."""

    text: str | None
    words: list[tuple[str, bool]]
    broad: str | None
    kinds: tuple[str, ...]
    tags: list[str]
    paths: list[str]
    near_paths: list[str]
    exclude_ids: tuple[str, ...]
    states: tuple[str, ...]
    want_states: tuple[str, ...]
    include_all: bool
    limit: int
    now: str
    root: str | None
    accounting: str
    ids: bool
    expansion: tuple[str, float, tuple[str, ...]] | None = None
    context: bool = False

    @property
    def selective(self) -> bool:
        """Whether a filter keeps a set of notes SQL finds by index (tags, paths, excluded ids)."""
        return bool(self.tags or self.paths or self.exclude_ids)

    def filters(self) -> dict:
        return {"kinds": list(self.kinds), "tags": self.tags, "paths": self.paths, "states": sorted(self.states),
                "all": bool(self.include_all), "limit": self.limit}


class Plan(Record):
    """The SQL of one recall and the tier it ranks: `base` the filters (on `notes n`), `near` the
    lift for touched paths (or None), `included` the state and scope wanted, `score` and `order`
    the rank; `tiers` the MATCH expressions broadest first (empty without a query), `rank_match`
    the one to rank, with the counts `choose_tier` gave. `meta`: the in-memory note metadata when
    the planner chose to rank from it. `cut`: the candidates' rowids when only they are ranked (the
    candidate cut: `base` then holds them, and `rank_count` is how many there are), else None."""

    ask: RecallQuery
    params: dict[str, str]
    base: str
    near: str | None
    included: str
    score: str
    order: str
    tiers: list[str]
    rank_match: str | None
    broad_count: int
    rank_count: int | None
    broad_exact: bool
    meta: dict | None = None  # `Index.note_meta()`: rowid -> the note's ranking columns
    cut: list[int] | None = None  # the candidates' rowids (the candidate cut), else None
    window: tuple[int, tuple[int, ...]] | None = None  # what is ranked when the question matches over RANKED_NOTES (`_window`)
    unranked: int = 0  # the notes it matches below the window: matched, not ranked

    @property
    def source(self) -> str:
        return FTS_SOURCE if self.tiers else "notes n"

    @property
    def match_cond(self) -> str:
        if self.cut is not None:  # the rowids are the index's own integers; checked before the join to notes
            return f" AND notes_fts MATCH :match AND +notes_fts.rowid IN ({','.join(map(str, self.cut))})"
        if self.window is not None:  # FTS5 seeks its doclists to the window's floor
            return " AND notes_fts MATCH :match" + within(self.window, "notes_fts.rowid")
        return " AND notes_fts MATCH :match" if self.tiers else ""

    def counted_from(self) -> tuple[str, str]:
        """(source, condition) for a query that counts the ranked notes: after a candidate cut, the
        candidates themselves (they all match), looked up by rowid without reading a doclist."""
        if self.cut is not None:
            return "notes n", f" AND n.rowid IN ({','.join(map(str, self.cut))})"
        return self.source, self.match_cond

    def branch(self):
        """The current git branch, read once and only when something asks (a branch-scoped note, SQL)."""
        if "branch" not in self.params:
            root = self.ask.root
            self.params["branch"] = current_branch(root) if root is not None else None
        return self.params["branch"]


def path_filter(paths: list[str], key: str, params: dict) -> str:
    """SQL restricting `n` to notes anchored at `paths`: an indexed prefix lookup (see
    `paths.candidate_prefixes`), then the exact match."""
    ors = []
    for i, path in enumerate(paths):
        ancestors, (lo, hi) = candidate_prefixes(path)
        if not lo:  # the whole project, or a glob such as `*.md`: any anchored note may match
            ors = ["SELECT note FROM note_paths"]
            break
        names = []
        for j, prefix in enumerate(ancestors):
            params[f"{key}a{i}_{j}"] = prefix
            names.append(f":{key}a{i}_{j}")
        params[f"{key}lo{i}"], params[f"{key}hi{i}"] = lo, hi
        ors.append(f"SELECT note FROM note_paths WHERE prefix IN ({','.join(names)})")
        ors.append(f"SELECT note FROM note_paths WHERE prefix >= :{key}lo{i} AND prefix < :{key}hi{i}")
    params[key] = json.dumps(paths)
    return (f"(n.rowid IN ({' UNION '.join(ors)}) AND "
            f"path_match((SELECT paths_text FROM note_text WHERE rowid = n.rowid), :{key}) = 1)")


def _in_list(column: str, key: str, values, params: dict) -> str:
    params.update({f"{key}{i}": v for i, v in enumerate(values)})
    return f"{column} IN (%s)" % ",".join(f":{key}{i}" for i in range(len(values)))


def _filters(ask: RecallQuery, params: dict) -> str:
    where = ["n.state != 'forgotten'"]
    if ask.kinds:
        where.append(_in_list("n.kind", "k", ask.kinds, params))
    if ask.tags:
        where.append(f"n.rowid IN (SELECT note FROM note_tags WHERE {_in_list('tag', 't', ask.tags, params)})")
    if ask.paths:
        where.append(path_filter(ask.paths, "p", params))
    if ask.exclude_ids:
        where.append(_in_list("n.id NOT", "x", ask.exclude_ids, params))
    return " AND ".join(where)


def within(window, column: str = "rowid") -> str:
    """SQL keeping the notes in `window` (`_window`: the newest notes a question matches, and those
    holding its rarest words), or "" without one. Its numbers are the index's own rowids."""
    if window is None:
        return ""
    floor, extra = window
    cond = f"{column} >= {int(floor)}"
    if extra:
        cond += f" OR +{column} IN ({','.join(str(int(r)) for r in extra)})"
    return f" AND ({cond})"


def count(db, match_expr: str, cap: int | None = None, window=None) -> int:
    """How many notes `match_expr` matches (unfiltered), reading at most `cap` + 1 of them; `window`: of
    those in it (`_window`)."""
    above = within(window)
    if cap is None:
        return db.execute(f"SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?{above}", (match_expr,)).fetchone()[0]
    return db.execute(f"SELECT count(*) FROM (SELECT 1 FROM notes_fts WHERE notes_fts MATCH ?{above} LIMIT ?)",
                      (match_expr, cap + 1)).fetchone()[0]


def _small_ledger(db, unfiltered: bool) -> bool:
    """Few enough notes to rank a query's broad tier in full (the narrower tiers are never needed)."""
    cap = ranking.CANDIDATE_LIMIT if unfiltered else ranking.FILTERED_CANDIDATE_LIMIT
    return (db.execute("SELECT max(rowid) FROM notes").fetchone()[0] or 0) < max(cap + 1, ranking.TIER_MIN_NOTES)


def choose_tier(db, tiers: list[str], limit: int, unfiltered: bool = False, cut=None, window=None):
    """The tier to rank: the broadest that holds at most CANDIDATE_LIMIT notes and still fills the
    page. Returns (tier, broad count, tier count, whether the broad count is exact). The tier
    count is None when the narrowest tier is left for the scan to count (only `unfiltered`: then
    the scan sees every note the tier matches, as forgotten notes keep no text to match).

    Counting reads the FTS doclists only, and stops past the caps: a broad query over a big
    ledger is never counted in full (its count is then a lower bound, and said to be one).
    `cut()`: the candidate cut's rowids (or None), tried before a tier too big is ranked in full;
    when it gives some, a fifth item is returned: them."""
    # with filters, a small tier often keeps too few notes and the broad tier must be scanned
    # after all: filtered queries get a wider tier to start from
    cap = ranking.CANDIDATE_LIMIT if unfiltered else ranking.FILTERED_CANDIDATE_LIMIT
    if len(tiers) == 1:
        broad = count(db, tiers[0], window=window)  # nothing narrower: ranked in full, so counted in full
        return tiers[0], broad, broad, True
    broad_cap = max(cap, ranking.BROAD_COUNT_CAP)
    broad = count(db, tiers[0], broad_cap, window=window)
    broad_exact = broad <= broad_cap
    if broad <= cap:
        return tiers[0], broad, broad, broad_exact
    rank_match, rank_count = tiers[0], broad
    for tier in tiers[1:]:
        if unfiltered and tier == tiers[-1]:
            return tier, broad, None, broad_exact  # the last resort: its scan counts it
        n = count(db, tier, cap, window=window)
        if n < max(limit, 1):
            break
        rank_match, rank_count = tier, n
        if n <= cap:
            break
    if rank_count > cap and cut is not None:
        cands = cut()
        if cands is not None:
            broad = count(db, tiers[0], 2 * len(cands), window=window)
            return tiers[0], broad, len(cands), broad <= 2 * len(cands), cands
    if rank_count > cap:
        # no tier is both small and full: the one chosen is scanned in full anyway, so count
        # it (and the broad tier, so that `partial` stays exact) in full as well
        if not broad_exact:
            broad, broad_exact = count(db, tiers[0], window=window), True
        rank_count = broad if rank_match == tiers[0] else count(db, rank_match, window=window)
    return rank_match, broad, rank_count, broad_exact


def _rowids(db, expr: str, cap: int, window) -> list[int]:
    above = within(window)
    return [r for (r,) in db.execute(f"SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?{above} LIMIT ?",
                                     (expr, cap + 1))]


def cut_candidates(db, units: list[str], extra: str, limit: int, window=None) -> list[int] | None:
    """The candidate cut (`ranking.USE_CUT`), MaxScore's split of a query: its rarest units, up to
    CUT_RARE_MAX notes holding them, are essential (every note holding one is a candidate: a rare
    word weighs most under BM25), and of the common ones a note must hold all but `drop`, for drop
    0, 1, 2, ... until there are CUT_MIN candidates. The rowids, or None when no level fits."""
    dfs = [count(db, unit, ranking.CUT_MAX, window) for unit in units]  # counted in SQLite: no rowid reaches Python
    rare, held = [], 0
    for i in sorted(range(len(units)), key=lambda i: (dfs[i], i)):
        if held + dfs[i] > ranking.CUT_RARE_MAX:
            break
        rare.append(i)
        held += dfs[i]
    found: set[int] = set(_rowids(db, " OR ".join(f"({units[i]})" for i in rare) + extra, ranking.CUT_MAX, window)) \
        if rare else set()
    common = [u for i, u in enumerate(units) if i not in rare]
    n, queries, last = len(common), 0, found
    for keep in range(n, 0, -1):
        if len(last) >= ranking.CUT_MIN:
            break
        combos = list(combinations(range(n), keep))
        queries += len(combos)
        if queries > ranking.CUT_QUERIES_MAX:
            break
        level = set(found)
        for combo in combos:
            level.update(_rowids(db, " AND ".join(f"({common[i]})" for i in combo) + extra, ranking.CUT_MAX, window))
            if len(level) > ranking.CUT_MAX:
                break
        if len(level) > ranking.CUT_MAX:
            break
        last = level
    return sorted(last) if len(last) >= max(limit, 1) else None


def _window(db, broad: str, units: list[str]):
    """((the lowest rowid ranked, the older notes holding a rare word of the question), how many older
    notes match and are not ranked) when `broad` matches over `limits.RANKED_NOTES` notes, else
    (None, 0). Asked only when no tier of the question is small enough to rank in full: the recall
    then answers as if the index held only the newest RANKED_NOTES notes its question matches (a
    million-line shard whose every note matched cost a recall 12 s), and every older note that holds
    one of its rare `units` (at most `WINDOW_RARE_MAX` notes hold it: under BM25 a rare word weighs
    most), and counts the rest as `unranked`. A question with a narrow tier, and every ledger
    measured here, is ranked exactly."""
    if (db.execute("SELECT max(rowid) FROM notes").fetchone()[0] or 0) <= RANKED_NOTES:
        return None, 0
    row = db.execute("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                     (broad, RANKED_NOTES - 1)).fetchone()
    if row is None:
        return None, 0
    floor = row[0]
    rare: set[int] = set()
    for unit in units:
        held = _rowids(db, f"({broad}) AND ({unit})", WINDOW_RARE_MAX, None)
        if len(held) <= WINDOW_RARE_MAX:
            rare.update(r for r in held if r < floor)
    older = db.execute("SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ? AND rowid < ?", (broad, floor)).fetchone()[0]
    return (floor, tuple(sorted(rare))), older - len(rare)


def plan_recall(index, ask: RecallQuery, cut: bool = True) -> Plan:
    """The SQL and the tier for `ask` (which has a MATCH when it has a query); `cut=False`: never the
    candidate cut."""
    params: dict = {"now": ask.now}
    base = _filters(ask, params)
    near = path_filter(ask.near_paths, "near", params) if ask.near_paths else None
    included = "1" if ask.include_all else f"({_in_list(EFFECTIVE_STATE, 's', ask.want_states, params)} AND {IN_SCOPE})"
    db = index.db
    if ask.broad is not None:
        score = ranking.score_sql(ranking.bm25_sql(), near)
        order = "score DESC, n.created_at DESC, n.created_event DESC, n.id"
        # "matched" is the broadest tier; ranking may use a narrower one on broad queries
        unfiltered = ask.accounting != "hits" and not (ask.kinds or ask.selective)
        counts: tuple[str | None, int, int | None, bool]
        tiers = [ask.broad]
        if _small_ledger(db, unfiltered):
            counts = ask.broad, 0, 0, True  # rank it all, nothing to count
        else:
            assert ask.text is not None  # a broad match is made from the text
            tiers = match_tiers(ask.text, paths=tuple(ask.paths), broad=ask.broad)
            window: tuple[int, tuple[int, ...]] | None = None
            unranked = 0
            units, extra = tier_units(ask.text)
            cuts = cut and ranking.USE_CUT and ask.accounting in ranking.CUT_ACCOUNTING and len(units) > 1 and not (
                ask.kinds or ask.tags or ask.paths)

            def cutter(window=None):
                return (lambda: cut_candidates(db, units, extra, ask.limit, window)) if cuts else None

            counts = choose_tier(db, tiers, ask.limit, unfiltered, cutter())
            if len(counts) == 4 and (counts[2] is None or counts[2] > RANKED_NOTES):
                # no tier small enough to rank in full: rank the newest notes the question matches
                window, unranked = _window(db, ask.broad, units)
                if window is not None:
                    counts = choose_tier(db, tiers, ask.limit, unfiltered, cutter(window), window)
            if len(counts) == 5:
                cands = counts[4]
                counts = counts[:4]
                return Plan(ask, params, base, near, included, score, order, [ask.broad], *counts, cut=cands,
                            window=window, unranked=unranked)
            return Plan(ask, params, base, near, included, score, order, tiers, *counts, window=window,
                        unranked=unranked)
    else:
        tiers, counts = [], (None, 0, 0, True)
        if near:
            score = f"({near} * 1.0)"
            order = "score DESC, n.prio, n.created_at DESC, n.created_event DESC, n.id"
        else:
            score = "0.0"
            # with a selective filter, drive the query from it rather than from the priority index
            # (created_event is unique, so this order is total and the notes_order index serves it)
            order = ("+n.prio" if (ask.paths or ask.tags) else "n.prio") + ", n.created_at DESC, n.created_event DESC"
    return Plan(ask, params, base, near, included, score, order, tiers, *counts)
