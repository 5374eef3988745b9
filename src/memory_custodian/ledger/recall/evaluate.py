"""Recall quality: run labelled queries through `recall` and say where each expected note went.

A silent miss — the right note exists but ranks below the cutoff, or a filter dropped it before
ranking — shows up in no metric people usually watch, and each kind of miss needs a different
fix (a state to revisit, a ranker to tune, a vocabulary gap to close). So besides the usual
figures (recall@k, MRR, nDCG@10) every miss is classified by the stage that lost it, and truth
that points at notes which do not exist or were forgotten is flagged as wrong truth, not as a
miss of the ranker.

Truth file (JSONL, one query a line):
    {"query": "design a fast session store", "relevant": ["k7m2x9qa"],
     "paths": [...], "kind": [...], "tags": [...],      # optional filters, as a caller passes them
     "forbidden": ["oldnote1"],                         # optional: notes that must not be shown
     "category": "negation", "id": "q001", "note": "..."}   # optional labels
"""

from __future__ import annotations

import json
import math
import os
import time

from ...base.errors import InvalidInput, NotFound
from ...base.fsutil import check_name_lengths
from ..storage.ids import is_iso_utc, now_iso
from ..storage.inputs import current_branch
from ..storage.model import KINDS
from ..storage.paths import any_match
from . import ranking

DEFAULT_KS = (1, 5, 10, 20)
DEFAULT_LIMIT = 10  # recall's default cutoff: what an agent sees when it asks without --limit


# ---- metrics (pure) -----------------------------------------------------------------------------

def recall_at(ranked, relevant, k: int) -> float:
    """Share of `relevant` found in the first `k` of `ranked` (1.0 when nothing is relevant)."""
    rel = set(relevant)
    if not rel:
        return 1.0
    return len(rel.intersection(ranked[:k])) / len(rel)


def reciprocal_rank(ranked, relevant) -> float:
    """1 / rank of the first relevant id in `ranked`, 0.0 if none is there."""
    rel = set(relevant)
    for i, note_id in enumerate(ranked):
        if note_id in rel:
            return 1.0 / (i + 1)
    return 0.0


def ndcg_at(ranked, relevant, k: int) -> float:
    """Binary-gain nDCG@k: DCG of `ranked[:k]` over the DCG of a perfect ranking."""
    rel = set(relevant)
    if not rel:
        return 1.0
    dcg = sum(1.0 / math.log2(i + 2) for i, note_id in enumerate(ranked[:k]) if note_id in rel)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
    return dcg / ideal


# ---- truth --------------------------------------------------------------------------------------

def _str_list(value, where: str, field: str, path: str, line: int) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidInput(f"{where}: `{field}` must be a string or a list of strings", path=path, line=line)
    return tuple(v.strip() for v in value)


def load_truth(truth_path) -> list[dict]:
    """Parse a truth JSONL file; a malformed line is an InvalidInput naming file and line."""
    path = os.fspath(truth_path)
    check_name_lengths(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError as exc:
        raise NotFound("truth file not found — pass a JSONL file of {\"query\", \"relevant\"} lines",
                       path=path) from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput("truth file is not UTF-8 text", path=path) from exc
    out = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("//"):
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"not a JSON object ({exc.msg}) — one query object per line",
                               path=path, line=lineno) from exc
        except RecursionError as exc:  # json recurses per nesting level: a hostile line must not be a traceback
            raise InvalidInput("not a JSON object (nested too deeply) — one query object per line",
                               path=path, line=lineno) from exc
        if not isinstance(obj, dict):
            raise InvalidInput("not a JSON object — one query object per line", path=path, line=lineno)
        query = obj.get("query")
        if query is not None and not isinstance(query, str):
            raise InvalidInput("`query` must be a string (or null for a filter-only recall)", path=path, line=lineno)
        where = "truth line"
        relevant = [r.lstrip("#") for r in _str_list(obj.get("relevant"), where, "relevant", str(path), lineno)]
        if not relevant:
            raise InvalidInput("`relevant` must list at least one note id", path=path, line=lineno)
        kinds = _str_list(obj.get("kind", obj.get("kinds")), where, "kind", str(path), lineno)
        bad = [k for k in kinds if k not in KINDS]
        if bad:
            raise InvalidInput(f"unknown kind {bad[0]!r} (one of {', '.join(KINDS)})", path=path, line=lineno)
        out.append({
            "line": lineno,
            "id": str(obj.get("id") or f"line {lineno}"),
            "query": query,
            "relevant": list(dict.fromkeys(relevant)),
            "forbidden": [r.lstrip("#") for r in _str_list(obj.get("forbidden"), where, "forbidden", str(path), lineno)],
            "kinds": kinds,
            "tags": _str_list(obj.get("tags"), where, "tags", str(path), lineno),
            "paths": _str_list(obj.get("paths"), where, "paths", str(path), lineno),
            "category": obj.get("category") if isinstance(obj.get("category"), str) else None,
            "note": obj.get("note") if isinstance(obj.get("note"), str) else None,
        })
    if not out:
        raise InvalidInput("truth file holds no queries", path=path)
    return out


# ---- the harness --------------------------------------------------------------------------------

def _classify(note, note_id, ranked, matched, result, q, now, branch) -> dict:
    """Why `note_id` is not in the first `limit`: the stage that lost it."""
    if note_id in ranked:
        return {"class": "below_cutoff", "rank": ranked.index(note_id) + 1}
    for reason, ids in sorted(result.excluded_ids.items()):
        if note_id in ids:
            return {"class": "excluded", "reason": "scope" if reason == "other scope" else reason}
    # recall lists a capped number of excluded ids; the note's own state says the same thing
    state = note.state_at(now)
    if state != "active":
        return {"class": "excluded", "reason": state}
    if note.scope == "branch" and note.branch != branch:
        return {"class": "excluded", "reason": "scope"}
    if q["kinds"] and note.kind not in q["kinds"]:
        return {"class": "excluded", "reason": "kind"}
    if q["tags"] and not set(q["tags"]) & set(note.tags):
        return {"class": "excluded", "reason": "tag"}
    if q["paths"] and not any_match(note.paths, q["paths"]):
        return {"class": "excluded", "reason": "path"}
    shared = shared_terms(q["query"] or "", note)
    if matched > len(ranked) and shared:
        # matched, but deeper than the ids recall lists (it counts them all, lists a capped few)
        return {"class": "below_cutoff", "rank": None, "deeper_than": len(ranked)}
    return {"class": "unmatched", "shared_terms": shared}


def _stem(word: str) -> str:
    # A crude suffix strip, only to explain misses; the index itself uses FTS5's porter stemmer.
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def shared_terms(query: str, note) -> list[str]:
    """Query terms (after stop words) that also occur in the note, compared loosely by stem."""
    q_terms = ranking.query_terms(query)
    text = " ".join([note.title, note.body, *note.tags, *note.paths])
    note_stems = {_stem(t) for t in ranking.query_terms(text)}
    note_stems.update(_stem(t) for t in ranking.subtokens(note.title, note.body, note.tags, note.paths).split())
    return sorted({t for t in q_terms if _stem(t) in note_stems})


def _mean(values) -> float:
    values = list(values)
    return round(sum(values) / len(values), 4) if values else 0.0


def _group(pairs, key: str, ks) -> dict:
    out: dict[str, dict] = {}
    for name in sorted({p[key] for p in pairs}):
        rows = [p for p in pairs if p[key] == name]
        entry = {"pairs": len(rows), "miss_rate": _mean(0.0 if p["shown"] else 1.0 for p in rows)}
        for k in ks:
            entry[f"recall@{k}"] = _mean(1.0 if p["rank"] is not None and p["rank"] <= k else 0.0 for p in rows)
        out[name] = entry
    return out


def evaluate(memory, truth_path, *, k: int = 10, limit: int = DEFAULT_LIMIT, now: str | None = None,
             ks=DEFAULT_KS) -> dict:
    """Run every truth query through `memory.recall` and report metrics, misses and wrong truth.

    `k` is the headline cut (`recall@k`, what `--min-recall` gates); `limit` is the cutoff an agent
    sees, at which the miss rate is measured. Truth ids that do not exist or were forgotten are
    reported as truth errors and left out of the figures: they are a fault of the truth, not of
    recall. MRR is over the first max(20, k, limit) results (one recall call at that depth serves
    every cut; recall's below-cutoff ids give the deeper ranks), and `ms_per_query` times that call.
    Returns one JSON-ready dict (stable key and list order).
    """
    if not isinstance(k, int) or k < 1:
        raise InvalidInput("{field} must be 1 or more", field="k")
    if not isinstance(limit, int) or limit < 1:
        raise InvalidInput("{field} must be 1 or more", field="limit")
    if now is not None and not is_iso_utc(now):
        raise InvalidInput(f"{{field}} {now!r} must be a UTC time like 2026-12-01T00:00:00.000Z", field="now")
    now = now or now_iso()
    queries = load_truth(truth_path)
    ks = tuple(sorted(set(ks) | {k}))
    depth = max(max(ks), limit)
    all_notes = {n.id: n for n in memory.notes(include_forgotten=True)}  # also catches the index up
    branch = current_branch(memory.root_str)

    per_query, pairs, misses, truth_errors, forbidden_shown = [], [], [], [], []
    elapsed = 0.0
    for q in queries:
        good = []
        for note_id in q["relevant"]:
            note = all_notes.get(note_id)
            if note is None or note.state == "forgotten":
                truth_errors.append({"query_id": q["id"], "line": q["line"], "note": note_id,
                                     "problem": "unknown" if note is None else "forgotten"})
            else:
                good.append(note_id)
        started = time.perf_counter()
        result = memory.recall(q["query"], kinds=q["kinds"], tags=q["tags"], paths=q["paths"], limit=depth, now=now)
        elapsed += time.perf_counter() - started
        ranked = [h.note.id for h in result.hits] + list(result.below_ids)
        shown = set(ranked[:limit])
        bad_shown = sorted(set(q["forbidden"]) & shown)
        if bad_shown:
            forbidden_shown.append({"query_id": q["id"], "query": q["query"], "notes": bad_shown,
                                    "ranks": [ranked.index(i) + 1 for i in bad_shown]})
        if not good:
            continue
        row = {"id": q["id"], "rr": reciprocal_rank(ranked[:depth], good), "ndcg@10": ndcg_at(ranked, good, 10)}
        for kk in ks:
            row[f"recall@{kk}"] = recall_at(ranked, good, kk)
        row["miss_rate"] = 1.0 - recall_at(ranked, good, limit)
        per_query.append(row)
        for note_id in good:
            note = all_notes[note_id]
            rank = ranked.index(note_id) + 1 if note_id in ranked else None
            pairs.append({"kind": note.kind, "priority": note.priority, "category": q["category"] or "-",
                          "rank": rank, "shown": note_id in shown})
            if note_id not in shown:
                miss = {"query_id": q["id"], "line": q["line"], "query": q["query"], "note": note_id,
                        "kind": note.kind, "title": note.title}
                miss.update(_classify(note, note_id, ranked, result.matched, result, q, now, branch))
                misses.append(miss)

    return _report(truth_path, now, k, limit, ks, per_query, pairs, misses, truth_errors, forbidden_shown,
                   round(1000.0 * elapsed / len(queries), 3))


def _report(truth_path, now, k, limit, ks, per_query, pairs, misses, truth_errors, forbidden_shown,
            ms_per_query) -> dict:
    """The figures over every query, and the breakdowns, as `evaluate` returns them."""
    overall = {"queries": len(per_query), "pairs": len(pairs),
               "mrr": _mean(r["rr"] for r in per_query), "ndcg@10": _mean(r["ndcg@10"] for r in per_query),
               "miss_rate": _mean(0.0 if p["shown"] else 1.0 for p in pairs)}
    for kk in ks:
        overall[f"recall@{kk}"] = _mean(r[f"recall@{kk}"] for r in per_query)
    classes: dict[str, int] = {}
    for m in misses:
        name = m["class"] if m["class"] != "excluded" else f"excluded:{m['reason']}"
        classes[name] = classes.get(name, 0) + 1
    report = {
        "truth": str(truth_path), "now": now, "k": k, "limit": limit, "ks": list(ks),
        "recall": overall[f"recall@{k}"],
        "overall": overall,
        "by_kind": _group(pairs, "kind", ks),
        "by_priority": _group(pairs, "priority", ks),
        "miss_classes": dict(sorted(classes.items())),
        "misses": sorted(misses, key=lambda m: (m["line"], m["note"])),
        "truth_errors": truth_errors,
        "forbidden_shown": forbidden_shown,
        "ms_per_query": ms_per_query,
    }
    if any(p["category"] != "-" for p in pairs):
        report["by_category"] = _group(pairs, "category", ks)
    return report


def render_text(report: dict, *, max_misses: int = 30) -> str:
    """The human report: headline figures, breakdowns, miss classes, the misses themselves."""
    o = report["overall"]
    ks = report["ks"]
    lines = [f"{o['queries']} queries, {o['pairs']} expected notes · limit {report['limit']} · as of {report['now']}",
             "  ".join(f"recall@{kk} {o[f'recall@{kk}']:.3f}" for kk in ks)
             + f"  MRR {o['mrr']:.3f}  nDCG@10 {o['ndcg@10']:.3f}",
             f"miss rate at limit {report['limit']}: {o['miss_rate']:.3f} "
             f"({sum(report['miss_classes'].values())} of {o['pairs']} expected notes not shown) · "
             f"{report['ms_per_query']:.2f} ms/query"]
    for title, key in (("by kind", "by_kind"), ("by priority", "by_priority"), ("by category", "by_category")):
        if key not in report:
            continue
        lines.append(f"{title}:")
        for name, g in report[key].items():
            head = g[f"recall@{report['k']}"]
            lines.append(f"  {name:<20} {g['pairs']:>4} notes  recall@{report['k']} {head:.3f}"
                         f"  miss rate {g['miss_rate']:.3f}")
    if report["miss_classes"]:
        lines.append("misses by stage: " + ", ".join(f"{n} {c}" for c, n in report["miss_classes"].items()))
    for m in report["misses"][:max_misses]:
        if m["class"] == "below_cutoff":
            why = f"ranked {m['rank']}" if m.get("rank") else f"ranked below {m.get('deeper_than')}"
        elif m["class"] == "excluded":
            why = f"excluded ({m['reason']})"
        else:
            why = "never matched (" + ("shares: " + ", ".join(m["shared_terms"]) if m["shared_terms"] else "no shared term") + ")"
        lines.append(f"  miss {m['query_id']}: #{m['note']} {why} · {m['query']!r} → {m['title']}")
    if len(report["misses"]) > max_misses:
        lines.append(f"  … {len(report['misses']) - max_misses} more misses (the report as JSON lists them all)")
    for e in report["truth_errors"]:
        where = e["query_id"] if e["query_id"] == f"line {e['line']}" else f"{e['query_id']} (line {e['line']})"
        lines.append(f"  truth error {where}: #{e['note']} is {e['problem']} — fix the truth file")
    for f in report["forbidden_shown"]:
        lines.append(f"  shown but should not be, {f['query_id']}: " + ", ".join(f"#{n}" for n in f["notes"]))
    return "\n".join(lines) + "\n"
