"""A fixed ledger (hand-written v1 events) covering every state the export renders, for golden tests."""

from __future__ import annotations

import random
from pathlib import Path

from memory_custodian.ledger.storage.store import encode_event
from memory_custodian.memory import Memory


def eid(n: int) -> str:
    return f"01JD{n:022d}"


def ev(n, op, note, at, actor="human", txn=None, txn_n=1, **fields):
    e = {"v": 1, "id": eid(n), "at": at, "op": op, "note": note, "actor": actor,
         "txn": txn or eid(1000 + n), "txn_n": txn_n}
    e.update(fields)
    return e


BODY_TRICKY = """Always run the migration check first.

### Steps
- kind: not a field, a body line
## Findings
```
### inside a fence
```
\\### already escaped"""


def events() -> list[dict]:
    c = lambda n, note, at, kind, title, body, **kw: ev(  # noqa: E731
        n, "create", note, at, kind=kind, priority=kw.pop("priority", "medium"), title=title, body=body,
        tags=kw.pop("tags", []), paths=kw.pop("paths", []), provenance=kw.pop("provenance", "human"), **kw)
    return [
        c(1, "d1rect1v", "2026-10-05T09:00:00.000Z", "directive", "Run the migration check before deploys",
          BODY_TRICKY, priority="high", tags=["zeta", "alpha", "mid", "beta", "omega"],
          paths=["src/**", "a/{b,c}.py"]),
        c(2, "g0tcha01", "2026-11-01T10:00:00.000Z", "gotcha", "Workspace lock released before daemon restart",
          "The lock file is dropped before the daemon restarts; a second writer can slip in.",
          actor="agent", provenance="agent", priority="high", tags=["lock", "daemon"], paths=["src/daemon/*.py"]),
        ev(3, "flag_stale", "g0tcha01", "2026-11-02T08:30:00.000Z", reason="daemon was rewritten"),
        # same creation time: the note id decides, not the event id (which sorts the other way)
        c(31, "zzzz0000", "2026-11-03T12:00:00.000Z", "finding", "Second by id", "zzzz body"),
        c(32, "aaaa0000", "2026-11-03T12:00:00.000Z", "finding", "First by id", "aaaa body"),
        c(4, "s0000001", "2026-10-10T10:00:00.000Z", "finding", "Cache is keyed by path", "Keyed by path."),
        c(5, "s0000002", "2026-11-05T10:00:00.000Z", "finding", "Cache is keyed by content hash",
          "Keyed by content hash since the rewrite.", supersedes="s0000001", txn=eid(2005), txn_n=2),
        ev(6, "supersede", "s0000001", "2026-11-05T10:00:00.000Z", by="s0000002", reason="cache rewrite",
           txn=eid(2005), txn_n=2),
        c(7, "r0000001", "2026-10-20T15:00:00.000Z", "decision", "Use tabs", "We use tabs."),
        ev(8, "revoke", "r0000001", "2026-10-21T15:00:00.000Z", reason="the formatter decides"),
        c(9, "t0000001", "2026-10-01T00:00:00.000Z", "task", "Checkpoint: half the parser done",
          "Parser: lexer done, grammar next."),
        c(10, "x0000001", "2026-09-01T00:00:00.000Z", "reference", "Old API docs", "https://example.invalid/v1"),
        ev(11, "expire", "x0000001", "2026-10-01T00:00:00.000Z", reason="v1 API retired"),
        c(12, "q0000001", "2026-11-10T10:00:00.000Z", "operational", "Deploy only on Tuesdays",
          "Deploys happen on Tuesdays.", actor="agent", provenance="user-stated",
          quote="we only deploy on tuesdays", scope="branch", branch="feat/x"),
        # a merge brought back the create of a forgotten note: the forget still wins
        c(13, "f0000001", "2026-10-02T00:00:00.000Z", "finding", "FORGOTTEN TITLE", "FORGOTTEN BODY TEXT"),
        ev(14, "forget", "f0000001", "2026-10-03T00:00:00.000Z", stripped=[eid(1013)]),
    ]


def write_ledger(root: Path, evs: list[dict] | None = None, *, seed: int | None = None) -> Memory:
    """A memory folder at `root` holding `evs` in monthly shards (lines shuffled when `seed` is given)."""
    Path(root).mkdir(parents=True, exist_ok=True)
    memory = Memory.open(root)
    if not (memory.memory_dir / "manifest.md").exists():
        memory.init()
    evs = list(events() if evs is None else evs)
    if seed is not None:
        random.Random(seed).shuffle(evs)
    shards: dict[str, list[str]] = {}
    for e in evs:
        shards.setdefault(e["at"][:7], []).append(encode_event(e))
    ledger = memory.memory_dir / "ledger"
    ledger.mkdir(parents=True, exist_ok=True)
    for month, lines in shards.items():
        (ledger / f"{month}.jsonl").write_text("".join(lines), encoding="utf-8")
    return memory
