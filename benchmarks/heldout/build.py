"""Build the held-out conversational truth set: hand-written chats and questions, among real public chat text.

No ranking knob is ever tuned on this set. It exists to say whether a change that helps the generated
truth sets (`benchmarks/recall/`, `benchmarks/conversation/`) also helps on text nobody tuned on.

- `dialogues.txt`: chats between pairs of friends over several sessions, written by hand for this
  benchmark, one note a turn (title: who spoke, the session, its date; body: what they said).
- `questions.txt`: 160 questions about them, written by hand with the dialogues and before any ranker
  was run on them, each citing the turns that hold its answer (single-hop, multi-hop, temporal,
  open-domain, and CJK questions over a chat in Chinese and Japanese).
- `chatterbot-english.jsonl`: every English conversation of chatterbot-corpus 1.3.3 (PyPI,
  BSD licence, see LICENSE-chatterbot-corpus), 4,403 turns of user-contributed chat, as further
  sessions between "User" and "Bot": the distractors that share the questions' everyday words.

Splits, fixed by pair, never by result: dev (maya-tom, ines-kofi, ravi-hannah) and test
(lucas-amara, priya-daniel, sofia-jonah); the CJK questions alternate, first to dev. The test split is
frozen: `tests/test_heldout_truth.py` checks the hash of `truth-test.jsonl` and `corpus.jsonl`.

    .venv/bin/python benchmarks/heldout/build.py

Writes, beside this file: project/docs/memory/ledger/*.jsonl, corpus.jsonl, truth.jsonl,
truth-dev.jsonl, truth-test.jsonl. Deterministic: rerunning rewrites byte-identical files.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "recall"))

from make_truth import NOW, Builder, check_replay, write_project  # noqa: E402

DEV_PAIRS = ("maya-tom", "ines-kofi", "ravi-hannah")
TEST_PAIRS = ("lucas-amara", "priya-daniel", "sofia-jonah")
CJK_PAIR = "xiaolin-wangfang"
PAIR_KEYS = {"小林 & 王芳": CJK_PAIR}
MANIFEST = """# Memory Manifest

Loading map for the held-out conversational recall benchmark (the ledger is what is measured).

## MemoryCustodian Protocol
- protocol_version: 0.5

## Always load
- brief.md

## Load by task
"""
BRIEF = """# Brief

Chats between friends and a public chat corpus, one note a dialogue turn. This memory folder is a
held-out benchmark corpus for `memory-custodian eval`: no ranking knob is tuned on it.
"""
_TURN_RE = re.compile(r"^(?P<who>[^:：]+?)[:：] ?(?P<text>.+?)(?: \^(?P<label>[a-z0-9-]+))?$")
CHATTER_START = datetime(2025, 6, 2, 9, 0, tzinfo=timezone.utc)


def parse_dialogues(path: Path) -> list[dict]:
    """Sessions: {"pair", "session", "date", "turns": [(speaker, text, label or None)]}."""
    sessions: list[dict] = []
    pair = None
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or (line.startswith("# ") and not line.startswith("# pair:")):
            continue
        if line.startswith("# pair:"):
            names = line[len("# pair:"):].strip()
            pair = PAIR_KEYS.get(names) or "-".join(p.strip().lower() for p in names.split("&"))
            continue
        if line.startswith("## session"):
            num, date = line[len("## session"):].split("·")
            sessions.append({"pair": pair, "session": int(num), "date": date.strip(), "turns": []})
            continue
        m = _TURN_RE.match(line)
        if not m or not sessions:
            raise SystemExit(f"{path}:{n}: not a turn")
        sessions[-1]["turns"].append((m["who"].strip(), m["text"].strip(), m["label"]))
    return sessions


def parse_questions(path: Path) -> list[dict]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        category, query, evidence = (p.strip() for p in line.split("|"))
        cites = [c.strip() for c in evidence.split(",")]
        if any("/" not in c for c in cites):
            raise SystemExit(f"{path}:{n}: evidence must be pair/label")
        out.append({"category": category, "query": query, "cites": cites, "line": n})
    return out


def _say(b: Builder, key: str, speaker: str, session: str, when: datetime, text: str) -> None:
    title = f"{speaker}, {session}, {when.strftime('%-d %B %Y')}"
    b.create(key, "finding", "medium", title, text, (), (), ms=int(when.timestamp() * 1000), actor="human")


def build():
    b = Builder(seed=32)
    labels: dict[str, str] = {}  # pair/label -> note key
    for s in parse_dialogues(HERE / "dialogues.txt"):
        start = datetime.fromisoformat(s["date"]).replace(hour=19, tzinfo=timezone.utc)
        for i, (speaker, text, label) in enumerate(s["turns"]):
            key = f"{s['pair']}-{s['session']}-{i + 1}"
            _say(b, key, speaker, f"session {s['session']}", start + timedelta(seconds=50 * i), text)
            if label:
                cite = f"{s['pair']}/{label}"
                if cite in labels:
                    raise SystemExit(f"dialogues.txt: label {cite} used twice")
                labels[cite] = key
    chatter = [json.loads(line) for line in (HERE / "chatterbot-english.jsonl").open(encoding="utf-8")]
    for j, conv in enumerate(chatter):
        start = CHATTER_START + timedelta(hours=3 * j)
        for i, text in enumerate(conv["turns"]):
            when = start + timedelta(seconds=40 * i)
            _say(b, f"chatter-{j}-{i + 1}", ("User", "Bot")[i % 2], f"chat {j + 1}", when, text)
    queries = []
    for q in parse_questions(HERE / "questions.txt"):
        missing = [c for c in q["cites"] if c not in labels]
        if missing:
            raise SystemExit(f"questions.txt:{q['line']}: no turn labelled {missing[0]}")
        queries.append({"category": q["category"], "query": q["query"], "pair": q["cites"][0].split("/")[0],
                        "relevant": [b.notes[labels[c]]["id"] for c in q["cites"]]})
    return b, queries


def split(queries: list[dict]) -> tuple[list[dict], list[dict]]:
    dev, test, cjk = [], [], 0
    for q in queries:
        if q["pair"] == CJK_PAIR:
            (dev if cjk % 2 == 0 else test).append(q)
            cjk += 1
        elif q["pair"] in DEV_PAIRS:
            dev.append(q)
        elif q["pair"] in TEST_PAIRS:
            test.append(q)
        else:
            raise SystemExit(f"question {q['id']} cites pair {q['pair']}, in neither split")
    return dev, test


def _dump(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def write(b: Builder, queries: list[dict]) -> None:
    memory = HERE / "project" / "docs" / "memory"
    if memory.exists():
        shutil.rmtree(memory)
    write_project(memory, MANIFEST, BRIEF, b.events)
    _dump(HERE / "corpus.jsonl", sorted(b.notes.values(), key=lambda r: r["id"]))
    for i, q in enumerate(queries):
        q["id"] = f"h{i + 1:03d}"
    dev, test = split(queries)
    _dump(HERE / "truth.jsonl", queries)
    _dump(HERE / "truth-dev.jsonl", dev)
    _dump(HERE / "truth-test.jsonl", test)


def main() -> None:
    b, queries = build()
    write(b, queries)
    check_replay(HERE / "project" / "docs" / "memory", len(b.notes))
    cats = Counter(q["category"] for q in queries)
    print(f"{len(b.notes)} notes, {len(queries)} questions ({', '.join(f'{k} {v}' for k, v in sorted(cats.items()))}), "
          f"evaluate as of {NOW}")


if __name__ == "__main__":
    main()
