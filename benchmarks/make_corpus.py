"""Generate a realistic ledger of N notes for benchmarks (deterministic for a given seed).

Notes span twelve monthly shards, with varied kinds, priorities, lengths, tags and path anchors,
and a realistic share of lifecycle events: superseded, revoked, stale, expired, promoted and
reinstated notes. Events are written in the exact v1 format, in txns, as the writer would.

    python benchmarks/make_corpus.py OUT_DIR --notes 74900 [--seed 7]

creates OUT_DIR/docs/memory/{manifest.md,ledger/*.jsonl}.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memory_custodian.ledger.storage.fold import apply, transition_error
from memory_custodian.ledger.storage.ids import CROCKFORD, ms_to_iso
from memory_custodian.ledger.storage.store import encode_event

START_MS = 1_764_547_200_000  # 2025-12-01T00:00:00Z
SPAN_MS = 364 * 86_400_000

KINDS = [("finding", 34), ("gotcha", 16), ("task", 15), ("decision", 10), ("reference", 10), ("operational", 13),
         ("directive", 2)]
PRIORITIES = [("high", 15), ("medium", 60), ("low", 25)]

# A realistic vocabulary: a few hundred common technical words, a few thousand project-specific
# identifiers, modules and file paths, drawn with a Zipf-like skew (a few terms are everywhere,
# most are rare), as in a real project's notes.
ROOTS = ["account", "action", "adapter", "agent", "alert", "api", "archive", "audit", "auth", "backend", "backoff",
         "backup", "batch", "billing", "blob", "bucket", "budget", "buffer", "build", "bundle", "cache", "callback",
         "cart", "certificate", "channel", "checkout", "checksum", "chunk", "cli", "client", "cluster", "codec", "column",
         "commit", "config", "connection", "consumer", "container", "context", "cookie", "coverage", "cron", "cursor",
         "daemon", "dashboard", "database", "deadline", "deadlock", "debounce", "decoder", "deploy", "digest", "dispatch",
         "dns", "docker", "domain", "driver", "email", "encoder", "endpoint", "engine", "entry", "event", "export",
         "fallback", "feature", "feed", "fetch", "field", "filter", "fixture", "flag", "flush", "form", "gateway", "graph",
         "handler", "hash", "header", "health", "heap", "hook", "host", "image", "import", "index", "ingest", "inventory",
         "invoice", "job", "journal", "kernel", "key", "label", "lambda", "latency", "layer", "lease", "ledger", "limit",
         "lint", "listener", "loader", "lock", "log", "mailer", "manifest", "mapper", "marker", "memory", "merge",
         "message", "metric", "middleware", "migration", "mirror", "model", "monitor", "mutex", "namespace", "network",
         "node", "notifier", "offset", "order", "owner", "packet", "page", "parser", "partition", "patch", "payload",
         "payment", "permission", "pipeline", "plugin", "policy", "pool", "port", "portal", "preview", "printer", "probe",
         "process", "profile", "prompt", "proxy", "publisher", "query", "queue", "quota", "rate", "reader", "receipt",
         "record", "redis", "registry", "release", "render", "replica", "report", "request", "resolver", "resource",
         "response", "retry", "role", "router", "runner", "runtime", "sandbox", "scanner", "schema", "scheduler", "scope",
         "script", "search", "secret", "segment", "sender", "sensor", "serializer", "server", "service", "session",
         "shard", "signal", "sitemap", "snapshot", "socket", "source", "span", "spool", "sqlite", "stack", "stage",
         "state", "storage", "store", "stream", "subscriber", "summary", "sync", "table", "task", "template", "tenant",
         "test", "thread", "throttle", "ticket", "timeout", "timer", "token", "topic", "trace", "tracker", "transaction",
         "transport", "trigger", "upload", "user", "validator", "vault", "version", "view", "volume", "webhook", "widget",
         "worker", "workspace"]
VERBS = ["breaks", "must be released before", "is ignored by", "silently truncates", "doubles", "needs a restart of",
         "is not thread-safe with", "conflicts with", "is cached by", "must run after", "drops", "retries",
         "overrides", "leaks into", "is rebuilt by", "blocks", "invalidates", "times out when calling",
         "deadlocks with", "is duplicated by", "corrupts", "skips", "reorders", "starves"]
QUALIFIERS = ["in production only", "on macOS", "under load", "after the upgrade to v2", "when the queue is empty",
              "during deploys", "with the legacy client", "if the flag is off", "on the first run", "in CI",
              "for tenants with SSO", "at month end", "with UTF-8 file names", "behind the proxy", "on ARM runners",
              "after a failover", "with more than 10k rows", "when the clock skews", "in the nightly job"]
SUFFIXES = ["", "", "", "V2", "Impl", "Factory", "Manager", "_legacy", "_async", "Helper", "Spec"]


def zipf_pick(rnd, items, s=2.0):
    """Half the picks skewed toward the head of `items` (power law), half uniform."""
    if rnd.random() < 0.5:
        return items[int(len(items) * rnd.random() ** s)]
    return rnd.choice(items)


def build_vocab(seed: int):
    rnd = random.Random(seed * 31 + 1)
    roots = list(ROOTS)
    rnd.shuffle(roots)
    modules = sorted({f"{a}_{b}" if rnd.random() < 0.3 else a for a, b in
                      (rnd.sample(roots, 2) for _ in range(140))})
    rnd.shuffle(modules)
    idents = set()
    while len(idents) < 4000:
        words = rnd.sample(roots, rnd.choice([2, 2, 3]))
        verb = rnd.choice(["get", "set", "load", "save", "parse", "build", "make", "run", "check", "sync", "flush",
                           "open", "close", "to", "from", "on", "apply", "resolve", "handle", ""])
        if rnd.random() < 0.5:
            ident = "_".join(([verb] if verb else []) + words)
        else:
            parts = ([verb] if verb else []) + words
            ident = parts[0] + "".join(w.capitalize() for w in parts[1:])
            if rnd.random() < 0.3:
                ident = ident[0].upper() + ident[1:]
        idents.add(ident + rnd.choice(SUFFIXES))
    idents = sorted(idents)
    rnd.shuffle(idents)
    files = []
    for mod in modules:
        for _ in range(rnd.randint(5, 40)):
            files.append(f"src/{mod}/{rnd.choice(roots)}{rnd.choice(['', '_' + rnd.choice(roots)])}.py")
    files = sorted(set(files))
    rnd.shuffle(files)
    return roots, modules, idents, files


VOCAB = {}


def sentence(rnd) -> str:
    roots, modules, idents, _files = VOCAB["v"]
    mod = zipf_pick(rnd, modules)
    words = [f"The {zipf_pick(rnd, roots)} {zipf_pick(rnd, roots)} in {mod}", rnd.choice(VERBS),
             f"the {zipf_pick(rnd, roots)} {zipf_pick(rnd, roots)}"]
    if rnd.random() < 0.4:
        words.append(rnd.choice(QUALIFIERS))
    if rnd.random() < 0.55:
        words.append(f"(see `{zipf_pick(rnd, idents)}`)")
    if rnd.random() < 0.1:
        words.append(f"error E{rnd.randint(1000, 9999)}")
    return " ".join(words) + "."


def path(rnd) -> str:
    _roots, _modules, _idents, files = VOCAB["v"]
    f = zipf_pick(rnd, files)
    r = rnd.random()
    if r < 0.15:
        return f.rsplit("/", 1)[0] + "/"
    if r < 0.22:
        return f.rsplit("/", 1)[0] + "/**/*.py"
    return f


TAGS = ["flaky", "perf", "security", "ux", "infra", "db", "ci", "docs", "deps", "api-v2", "migration", "oncall",
        "tech-debt", "regression", "windows", "macos", "release", "incident", "customer", "billing", "auth",
        "search", "ingest", "storage", "queue", "cache", "frontend", "mobile", "data", "ml", "observability"]


def weighted(rnd, table):
    return rnd.choices([k for k, _ in table], weights=[w for _, w in table])[0]


class Writer:
    def __init__(self, out: Path, seed: int):
        self.rnd = random.Random(seed)
        self.counter = 0
        self.shards: dict[str, list[str]] = {}
        self.out = out

    def ulid(self, ms: int) -> str:
        self.counter += 1
        n = (self.counter << 24) | self.rnd.getrandbits(24)

        def enc(v, length):
            return "".join(CROCKFORD[(v >> (5 * i)) & 31] for i in range(length - 1, -1, -1)).upper()

        return enc(ms, 10) + enc(n, 16)

    def note_id(self) -> str:
        return "".join(self.rnd.choice(CROCKFORD) for _ in range(8))

    def txn(self, ms: int, events: list[dict]) -> bool:
        """Write the txn if every event is legal (as the real writer checks); returns whether it was."""
        self.clock = max(getattr(self, "clock", 0), ms)
        at = ms_to_iso(self.clock)
        txn = self.ulid(self.clock)
        for ev in events:
            ev.update(v=1, at=at, id=self.ulid(self.clock), txn=txn, txn_n=len(events))
        states = getattr(self, "states", None)
        if states is None:
            states = self.states = {}
        trial = {}
        for ev in events:
            cur = trial.get(ev["note"], states.get(ev["note"]))
            if transition_error(cur, ev) is not None:
                return False
            trial[ev["note"]] = apply(cur.replace(extra=dict(cur.extra)) if cur else None, ev)
        states.update(trial)
        for ev in events:
            self.shards.setdefault(at[:7], []).append(encode_event(ev))
        return True

    def create(self, note: str, actor: str, supersedes: str | None = None) -> dict:
        rnd = self.rnd
        kind = weighted(rnd, KINDS)
        body = " ".join(sentence(rnd) for _ in range(rnd.choice([1, 1, 2, 2, 3, 4, 6, 8])))
        title = body.split(".")[0][:80]
        ev = {"op": "create", "note": note, "actor": actor, "kind": kind, "priority": weighted(rnd, PRIORITIES),
              "title": title, "body": body, "tags": sorted(set(rnd.sample(TAGS, rnd.choice([0, 1, 1, 2, 2, 3, 4])))),
              "paths": sorted({path(rnd) for _ in range(rnd.choice([0, 0, 1, 1, 1, 2, 3]))}),
              "provenance": "human" if actor == "human" else "agent", "scope": "workspace"}
        if supersedes:
            ev["supersedes"] = supersedes
        return ev


def generate(out: Path, notes: int, seed: int = 7) -> dict:
    VOCAB["v"] = build_vocab(seed)
    w = Writer(out, seed)
    rnd = w.rnd
    times = sorted(rnd.randrange(SPAN_MS) for _ in range(notes))
    live: list[str] = []
    created = 0
    stats = {"notes": 0, "superseded": 0, "revoked": 0, "stale": 0, "expired": 0, "promoted": 0, "reinstated": 0}
    for t in times:
        ms = START_MS + t
        actor = "agent" if rnd.random() < 0.6 else "human"
        r = rnd.random()
        if live and r < 0.09:
            old = live.pop(rnd.randrange(len(live)))
            new = w.note_id()
            if w.txn(ms, [w.create(new, actor, supersedes=old),
                          {"op": "supersede", "note": old, "actor": actor, "by": new,
                           "reason": "newer finding replaces it"}]):
                stats["superseded"] += 1
            else:
                w.txn(ms, [w.create(new, actor)])
            live.append(new)
        else:
            new = w.note_id()
            w.txn(ms, [w.create(new, actor)])
            live.append(new)
        created += 1
        if live and rnd.random() < 0.08:
            target = live.pop(rnd.randrange(len(live)))
            op = rnd.choices(["revoke", "flag_stale", "expire", "promote"], weights=[4, 3, 1, 2])[0]
            ms += 1000
            if op == "promote":
                if w.txn(ms, [{"op": "promote", "note": target, "actor": "human", "to": "human"}]):
                    stats["promoted"] += 1
                live.append(target)
                continue
            if w.txn(ms, [{"op": op, "note": target, "actor": "human", "reason": "checked during review"}]):
                stats[{"revoke": "revoked", "flag_stale": "stale", "expire": "expired"}[op]] += 1
            if rnd.random() < 0.1:
                if w.txn(ms + 5000, [{"op": "reinstate", "note": target, "actor": "human", "reason": "still true"}]):
                    stats["reinstated"] += 1
                live.append(target)
    stats["notes"] = created
    memory = out / "docs" / "memory"
    (memory / "ledger").mkdir(parents=True, exist_ok=True)
    (memory / "manifest.md").write_text("# Memory manifest\n", encoding="utf-8")
    for month, lines in sorted(w.shards.items()):
        (memory / "ledger" / f"{month}.jsonl").write_text("".join(lines), encoding="utf-8")
    stats["shards"] = len(w.shards)
    stats["events"] = sum(len(v) for v in w.shards.values())
    stats["bytes"] = sum(p.stat().st_size for p in (memory / "ledger").glob("*.jsonl"))
    return stats


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--notes", type=int, default=749)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    stats = generate(args.out, args.notes, args.seed)
    print(" ".join(f"{k}={v}" for k, v in stats.items()))


if __name__ == "__main__":
    main()
