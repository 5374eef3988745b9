"""Generate the recall truth set: a real v1 ledger of ~1,100 notes and ~340 labelled queries.

Deterministic (seeded): rerunning rewrites byte-identical files, so the committed corpus and the
truth that points into it can be regenerated and diffed. The ledger is written as v1 events
(DESIGN.md) with fixed ids and times between June and November 2026, then replayed through the
project's own reader to prove it is well formed.

    .venv/bin/python benchmarks/recall/make_truth.py

Writes, beside this file:
  project/docs/memory/ledger/2026-MM.jsonl   the corpus as a ledger (a project to open with Memory)
  corpus.jsonl                               one line a note (id, key, kind, text, state) for other rankers
  truth.jsonl, truth-train.jsonl, truth-test.jsonl   the labelled queries; test is a held-out third
Evaluate as of NOW (tasks expire after 30 days): `eval --now 2026-12-01T00:00:00.000Z`.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import seeds  # noqa: E402
import templates as T  # noqa: E402

NOW = "2026-12-01T00:00:00.000Z"
MANIFEST = """# Memory Manifest

Loading map for the tidewater recall benchmark (the ledger is what is measured).

## MemoryCustodian Protocol
- protocol_version: 0.5

## Always load
- brief.md

## Load by task
"""
BRIEF = """# Brief

tidewater: a logistics SaaS (Python API and workers, a TypeScript web app, Terraform and
Kubernetes). This memory folder is a generated benchmark corpus for `memory-custodian eval`.
"""
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
DAY_MS = 86_400_000


def _ms(date: str) -> int:
    return int(datetime.fromisoformat(date).replace(tzinfo=timezone.utc).timestamp() * 1000)


START, END = _ms("2026-06-01T08:00:00"), _ms("2026-11-28T18:00:00")


def iso(ms: int) -> str:
    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _enc(n: int, length: int) -> str:
    return "".join(CROCKFORD[(n >> (5 * i)) & 31] for i in range(length - 1, -1, -1)).upper()


class Builder:
    def __init__(self, seed: int = 7):
        self.rng = random.Random(seed)
        self.events: list[dict] = []
        self.notes: dict[str, dict] = {}  # key -> note record
        self.ids: set[str] = set()

    def _note_id(self) -> str:
        while True:
            nid = "".join(self.rng.choice(CROCKFORD) for _ in range(8))
            if nid not in self.ids:
                self.ids.add(nid)
                return nid

    def _ulids(self, ms: int, count: int) -> list[str]:
        base = self.rng.getrandbits(70)
        return [_enc(ms, 10) + _enc(base + i, 16) for i in range(count)]

    def when(self, lo: int = START, hi: int = END) -> int:
        return self.rng.randrange(lo, hi)

    def _txn(self, ms: int, bodies: list[dict]) -> None:
        ids = self._ulids(ms, len(bodies) + 1)
        for body, eid in zip(bodies, ids[1:]):
            ev = {"v": 1, "id": eid, "at": iso(ms), "txn": ids[0], "txn_n": len(bodies)}
            ev.update({k: v for k, v in body.items() if v is not None})
            self.events.append(ev)

    def _create_body(self, key, kind, priority, title, body, tags, paths, ms, actor, supersedes=None):
        nid = self._note_id()
        expires = iso(ms + 30 * DAY_MS) if kind == "task" else None
        rec = {"key": key, "id": nid, "kind": kind, "priority": priority, "title": title, "body": body,
               "tags": list(tags), "paths": list(paths), "created": iso(ms), "state": "active",
               "expires": expires}
        if expires and expires <= NOW:
            rec["state"] = "expired"
        self.notes[key] = rec
        return nid, {"op": "create", "note": nid, "actor": actor, "kind": kind, "priority": priority,
                     "title": title, "body": body, "tags": list(tags), "paths": list(paths),
                     "provenance": "agent" if actor == "agent" else "human", "scope": "workspace",
                     "expires": expires, "supersedes": supersedes}

    def create(self, key, kind, priority, title, body, tags=(), paths=(), ms=None, actor=None) -> str:
        ms = self.when() if ms is None else ms
        actor = actor or ("agent" if self.rng.random() < 0.45 else "human")
        nid, ev = self._create_body(key, kind, priority, title, body, tags, paths, ms, actor)
        self._txn(ms, [ev])
        return nid

    def supersede(self, old_key, new_key, kind, priority, title, body, tags, paths, ms, reason) -> str:
        old = self.notes[old_key]
        nid, ev = self._create_body(new_key, kind, priority, title, body, tags, paths, ms, "human",
                                    supersedes=old["id"])
        self._txn(ms, [ev, {"op": "supersede", "note": old["id"], "actor": "human", "by": nid, "reason": reason}])
        old["state"] = "superseded"
        return nid

    def lifecycle(self, key, op, ms, reason) -> None:
        rec = self.notes[key]
        self._txn(ms, [{"op": op, "note": rec["id"], "actor": "human", "reason": reason}])
        rec["state"] = {"revoke": "revoked", "flag_stale": "stale", "expire": "expired"}[op]


def _fill(text: str, comp: tuple, problem_key: str = "") -> str:
    key, path, syms, aliases, _tag, res, lib, env = comp
    return text.format(sym=syms[0], sym2=syms[1], file=path, base=path.rsplit("/", 1)[-1],
                       alias=aliases[0], res=res, lib=lib, env=env, key=key)


def build():
    b = Builder()
    queries: list[dict] = []

    def add_query(category, text, relevant_keys, filters=None, forbidden_keys=()):
        q = {"category": category, "query": text, "relevant": [b.notes[k]["id"] for k in relevant_keys]}
        if forbidden_keys:
            q["forbidden"] = [b.notes[k]["id"] for k in forbidden_keys]
        q.update(filters or {})
        queries.append(q)

    # ---- hand-written seed facts ----
    late = _ms("2026-11-02T08:00:00")
    for key, kind, prio, title, body, tags, paths, qs in seeds.ALL_SINGLE:
        ms = b.when(late, END) if kind == "task" else b.when()
        b.create(key, kind, prio, title, body, tags, paths, ms=ms)
        category = {"directive": "negation", "decision": "decision-why", "task": "checkpoint"}.get(kind, "paraphrase")
        for q in qs:
            text, filters = (q, None) if isinstance(q, str) else q
            add_query(category, text, [key], filters)
    mid = _ms("2026-09-01T00:00:00")
    for old, new, qs in seeds.SUPERSEDED:
        b.create(*old[:7], ms=b.when(START, mid))
        b.supersede(old[0], *new, ms=b.when(mid, END), reason="replaced: " + new[3])
        for q in qs:
            add_query("superseded", q, [new[0]], forbidden_keys=[old[0]])

    # ---- generated component x problem facts ----
    gotchas_by_file: dict[str, list[str]] = {}
    unlabelled: list[str] = []
    for ci, comp in enumerate(T.COMPONENTS):
        ckey, path, syms, aliases, tag = comp[:5]
        problems = b.rng.sample(T.PROBLEMS, 10)
        for j, (pkey, kind, prio, title, bodies, pqueries, symkw, filekw) in enumerate(problems):
            key = f"gen-{ckey}-{pkey}"
            body = _fill(b.rng.choice(bodies), comp)
            b.create(key, kind, prio, _fill(title, comp), body, (tag, filekw), (path,))
            if kind == "gotcha":
                gotchas_by_file.setdefault(path, []).append(key)
            if j >= 5:
                unlabelled.append(key)
                continue
            alias = aliases[(ci + j) % 2]
            style = ("paraphrase", "paraphrase", "symbol", "file", "paraphrase-filtered")[j]
            if style == "paraphrase":
                text = b.rng.choice(pqueries).format(alias=alias, lib=comp[6])
                add_query("paraphrase", text, [key])
            elif style == "symbol":
                sym = syms[1] if pkey == "call-order" else syms[0]
                add_query("symbol", f"{sym} {symkw}", [key])
            elif style == "file":
                add_query("file", f"{filekw} problem in {path.rsplit('/', 1)[-1]}", [key])
            else:
                text = pqueries[1].format(alias=alias, lib=comp[6])
                add_query("paraphrase-filtered", text, [key], {"kind": [kind]})
        # A look-alike that was wrong and got revoked: it must not crowd out the real one.
        pkey, kind, prio, title, bodies, *_ = problems[0]
        wrong = f"gen-{ckey}-{pkey}-wrong"
        b.create(wrong, kind, prio, _fill(title, comp) + " (first diagnosis)",
                 _fill(bodies[0], comp) + " Suspect: the connection pool size.", (tag,), (path,),
                 ms=b.when(START, mid))
        b.lifecycle(wrong, "revoke", b.when(mid, END), "wrong diagnosis; see the newer note")

    # ---- filler: task checkpoints, operations notes, lifecycle noise ----
    for n in range(380):
        comp = T.COMPONENTS[n % len(T.COMPONENTS)]
        verb, _ = b.rng.choice(T.TASK_VERBS)
        b.create(f"task-fill-{n}", "task", b.rng.choice(("medium", "low", "low")),
                 f"Checkpoint: {verb} {comp[3][n % 2]}", b.rng.choice(T.TASK_STATES),
                 (comp[4],), (comp[1],))
    for comp in T.COMPONENTS:
        for oi, (title, body, tag) in enumerate(T.OPS_TEMPLATES):
            kind = "operational" if oi in (0, 3) else "reference"
            b.create(f"ops-fill-{comp[0]}-{oi}", kind, "low", _fill(title, comp), _fill(body, comp),
                     (comp[4], tag), ())
    b.rng.shuffle(unlabelled)
    for key in unlabelled[:25]:
        rec = b.notes[key]
        b.supersede(key, key + "-v2", rec["kind"], rec["priority"], rec["title"] + " (revised)",
                    rec["body"] + " Revised after the follow-up investigation.", rec["tags"], rec["paths"],
                    ms=b.when(_ms(rec["created"][:19]) + DAY_MS, END + DAY_MS), reason="more precise cause")
        gotchas_by_file.setdefault(rec["paths"][0], []).append(key + "-v2") if rec["kind"] == "gotcha" else None
    for key in unlabelled[25:45]:
        b.lifecycle(key, "flag_stale", b.when(_ms(b.notes[key]["created"][:19]) + DAY_MS, END + DAY_MS),
                    "code moved; needs re-checking")
    for key in unlabelled[45:60]:
        b.lifecycle(key, "revoke", b.when(_ms(b.notes[key]["created"][:19]) + DAY_MS, END + DAY_MS),
                    "no longer true after the rewrite")

    # ---- path-anchored queries: what an agent asks before editing a file ----
    for ci, comp in enumerate(T.COMPONENTS):
        ckey, path, syms, aliases = comp[:4]
        live = [k for k in gotchas_by_file.get(path, []) if b.notes[k]["state"] == "active"]
        if not live:
            continue
        task = ("refactor {alias}", "add a feature to {alias}", "fix a bug in {sym}", "change how {sym} works")[ci % 4]
        add_query("path-anchored", task.format(alias=aliases[0], sym=syms[0]), sorted(live), {"paths": [path]})
    return b, queries


def split(queries: list[dict], seed: int = 11) -> tuple[list[dict], list[dict]]:
    """A held-out third per category, so the test split has every hard case in proportion."""
    rng = random.Random(seed)
    train, test = [], []
    by_cat: dict[str, list[dict]] = {}
    for q in queries:
        by_cat.setdefault(q["category"], []).append(q)
    for cat in sorted(by_cat):
        items = list(by_cat[cat])
        rng.shuffle(items)
        for i, q in enumerate(items):
            (test if i % 3 == 0 else train).append(q)
    return train, test


def _dump(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_project(memory: Path, manifest: str, brief: str, events: list[dict]) -> None:
    """A memory folder holding `events` as monthly ledger shards (its old ledger replaced)."""
    ledger = memory / "ledger"
    if ledger.exists():
        shutil.rmtree(ledger)
    ledger.mkdir(parents=True)
    (memory / ".gitignore").write_text(".cache/\n", encoding="utf-8")
    (memory / "manifest.md").write_text(manifest, encoding="utf-8")
    (memory / "brief.md").write_text(brief, encoding="utf-8")
    shards: dict[str, list[str]] = {}
    for ev in sorted(events, key=lambda e: (e["at"], e["id"])):
        shards.setdefault(ev["at"][:7], []).append(json.dumps(ev, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    for month, lines in shards.items():
        (ledger / f"{month}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_truth(folder: Path, notes: dict, queries: list[dict], prefix: str, split_queries) -> None:
    """The corpus, the queries numbered `prefix001`…, and their train and test splits, beside the project."""
    _dump(folder / "corpus.jsonl", sorted(notes.values(), key=lambda r: r["id"]))
    for i, q in enumerate(queries):
        q["id"] = f"{prefix}{i + 1:03d}"
    train, test = split_queries(queries)
    _dump(folder / "truth.jsonl", queries)
    _dump(folder / "truth-train.jsonl", sorted(train, key=lambda q: q["id"]))
    _dump(folder / "truth-test.jsonl", sorted(test, key=lambda q: q["id"]))


def write(b: Builder, queries: list[dict]) -> None:
    write_project(HERE / "project" / "docs" / "memory", MANIFEST, BRIEF, b.events)
    write_truth(HERE, b.notes, queries, "q", split)


def check_replay(memory: Path, built: int) -> None:
    """The written ledger replays with the project's own reader, without problems, to the `built` notes."""
    from memory_custodian.ledger.storage.store import Ledger

    replay = Ledger(memory).load()
    if replay.problems or len(replay.notes) != built:
        raise SystemExit(f"ledger problems: {[p.to_dict() for p in replay.problems[:3]]}")


def verify(b: Builder) -> None:
    """Replay the written ledger with the project's own reader: it must fold to what we built."""
    try:
        from memory_custodian.ledger.storage.store import Ledger
    except ImportError:
        print("memory_custodian not importable; skipped the replay check", file=sys.stderr)
        return
    replay = Ledger(HERE / "project" / "docs" / "memory").load()
    if replay.problems:
        raise SystemExit(f"ledger problems: {[p.to_dict() for p in replay.problems[:3]]}")
    for rec in b.notes.values():
        note = replay.notes[rec["id"]]
        if note.state_at(NOW) != rec["state"]:
            raise SystemExit(f"{rec['key']}: built {rec['state']}, replayed {note.state_at(NOW)}")


def main() -> None:
    b, queries = build()
    write(b, queries)
    verify(b)
    states = Counter(rec["state"] for rec in b.notes.values())
    cats = Counter(q["category"] for q in queries)
    print(f"{len(b.notes)} notes ({', '.join(f'{k} {v}' for k, v in sorted(states.items()))}), "
          f"{len(b.events)} events; {len(queries)} queries ({', '.join(f'{k} {v}' for k, v in sorted(cats.items()))})")


if __name__ == "__main__":
    main()
