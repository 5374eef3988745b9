"""The narrower MATCH expressions a broad query is ranked on over a big ledger (`ranking.CANDIDATE_LIMIT`):
the query's units with all but one present, every one of them, every one in the title or tags; and
the units themselves, which the candidate cut (`recall_plan.cut_candidates`) combines."""

from __future__ import annotations

from itertools import combinations

from . import ranking


def _at_least(units: list[str], need: int) -> str:
    """FTS5 for "at least `need` of `units`": an OR of the conjunctions (units are few)."""
    if need >= len(units):
        return " AND ".join(f"({u})" for u in units)
    return " OR ".join("(" + " AND ".join(f"({u})" for u in combo) + ")" for combo in combinations(units, need))


def tier_units(query: str) -> tuple[list[str], str]:
    """The units a narrower tier requires (the query's words, or the parts of the one identifier it
    names, each an FTS5 expression), and what always qualifies besides (`" OR <joined form>"`, or "")."""
    groups: list[list[str]] = []
    for _, ident_parts in ranking._idents(query or ""):
        parts = [p for p in ident_parts if p not in (ranking.STOPWORDS if len(ident_parts) > 1 else ranking.QUERY_STOPWORDS)]
        if parts and parts not in groups:
            groups.append(parts)
    if not groups:
        return [], ""
    if len(groups) == 1 and len(groups[0]) > 1:
        # one identifier: its parts are the units (single letters and digits such as the `V2` of
        # `mailerV2` say little and are in most notes), and its joined form always qualifies
        parts = list(dict.fromkeys(groups[0]))
        units = [ranking.phrase(p) for p in parts if len(p) > 1 and not p.isdigit()] or [ranking.phrase(p) for p in parts]
        return units, f" OR {ranking.phrase(''.join(groups[0]))}"
    units = []
    for parts in groups:
        unit = " AND ".join(ranking.phrase(p) for p in parts)
        if len(parts) > 1:
            unit = f"({unit}) OR {ranking.phrase(''.join(parts))}"
        if unit not in units:
            units.append(unit)
    return units, ""


def match_tiers(query: str, paths=(), broad: str | None = None) -> list[str]:
    """MATCH expressions from broadest to narrowest; the first defines what "matched" means.

    The narrower ones bound the work on big ledgers (see CANDIDATE_LIMIT): the query's words (or
    the parts of the one identifier it names) with all but one present (when that stays a short
    expression: BM25 pays for every phrase in it), then every one of them, then every one in the
    title or tags. A note that shares more of the words scores higher under BM25 anyway, so a
    narrower tier mostly holds the broad top. `broad`: `ranking.build_match(query, paths)`, when the caller
    has it already."""
    broad = ranking.build_match(query, paths) if broad is None else broad
    if broad is None:
        return []
    tiers = [broad]
    units, extra = tier_units(query)
    if not units:
        return tiers
    n = len(units)
    if n > 2 and n * (n - 1) <= ranking.MAX_TIER_PHRASES:
        tiers.append(_at_least(units, n - 1) + extra)
    every = _at_least(units, n) + extra
    tiers.append(every)
    tiers.append("{title tags_text} : (" + every + ")")
    out: list[str] = []
    seen: set[str] = set()
    for t in tiers:
        key = t.replace("(", "").replace(")", "")
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out
