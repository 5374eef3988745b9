"""Build the held-out software truth set: this repository's own commits as notes, questions written by hand.

Real engineering text nobody tuned on: every non-merge commit of memory-custodian up to REV becomes a
note (title: the subject, cut at a word; body: the subject and the message; created: the commit time),
and `questions.txt` holds 40 questions a developer would ask, written from the subjects before any
ranker was run on this set, each citing the commit that answers it. Questions alternate between dev
and test, first to dev; the test split is frozen (`tests/test_heldout_truth.py` checks its hash).
The text is the project's own (MIT).

    .venv/bin/python benchmarks/history/build.py      # needs the repository's git history

Writes, beside this file: project/docs/memory/ledger/*.jsonl, corpus.jsonl, truth-dev.jsonl,
truth-test.jsonl. Deterministic: rerunning rewrites byte-identical files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "recall"))

from make_truth import Builder, write_project  # noqa: E402

REV = "8968998"  # the history is frozen at this commit
MANIFEST = """# Memory Manifest

Loading map for the held-out software recall benchmark (the ledger is what is measured).

## MemoryCustodian Protocol
- protocol_version: 0.5

## Always load
- brief.md

## Load by task
"""
BRIEF = """# Brief

This repository's own commits, one note a commit: a held-out benchmark corpus for
`memory-custodian eval`; no ranking knob is tuned on it.
"""


def commits(rev: str) -> list[dict]:
    out = subprocess.run(["git", "log", "--no-merges", "--reverse", "--format=%h%x00%ct%x00%B%x1e", rev],
                         cwd=HERE, check=True, capture_output=True, text=True).stdout
    rows = []
    for chunk in out.split("\x1e"):
        if not chunk.strip():
            continue
        short, when, message = chunk.strip("\n").split("\x00", 2)
        rows.append({"hash": short[:7], "ms": int(when) * 1000, "message": message.strip()})
    return rows


def title_of(subject: str, cap: int = 90) -> str:
    if len(subject) <= cap:
        return subject
    return subject[:cap].rsplit(" ", 1)[0] + " …"


def build():
    b = Builder(seed=26)
    keys = {}
    for i, c in enumerate(commits(REV)):
        subject = c["message"].split("\n", 1)[0]
        key = f"commit-{c['hash']}"
        b.create(key, "finding", "medium", title_of(subject), c["message"], (), (), ms=c["ms"] + i, actor="human")
        keys[c["hash"]] = key
    queries = []
    for n, line in enumerate((HERE / "questions.txt").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        query, cites = (p.strip() for p in line.split("|"))
        rel = []
        for cite in (c.strip() for c in cites.split(",")):
            if cite not in keys:
                raise SystemExit(f"questions.txt:{n}: no commit {cite} in the history up to {REV}")
            rel.append(b.notes[keys[cite]]["id"])
        queries.append({"category": "history", "id": f"g{len(queries) + 1:03d}", "query": query, "relevant": rel})
    return b, queries


def _dump(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    b, queries = build()
    memory = HERE / "project" / "docs" / "memory"
    if memory.exists():
        shutil.rmtree(memory)
    write_project(memory, MANIFEST, BRIEF, b.events)
    _dump(HERE / "corpus.jsonl", sorted(b.notes.values(), key=lambda r: r["id"]))
    _dump(HERE / "truth-dev.jsonl", queries[0::2])
    _dump(HERE / "truth-test.jsonl", queries[1::2])
    print(f"{len(b.notes)} notes (commits up to {REV}), {len(queries)} questions")


if __name__ == "__main__":
    main()
