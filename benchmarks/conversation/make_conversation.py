"""Generate the conversational truth set: dialogue turns as notes, questions a person would ask.

Long chats between pairs of friends over months, one note a dialogue turn (title: who spoke and
the session's date; body: what they said), and questions about people, events, dates and what
was said, worded the way someone who remembers the gist asks ("When did Priya move to the night
shift?" for "I switched to working nights at the hospital"). Most turns are chit-chat that shares
the questions' common words, as real conversation does. Deterministic (seeded): rerunning rewrites
byte-identical files.

The recipe: 16 people in 8 pairs, 9 sessions a pair two to three weeks apart between February and
November 2026; each session opens with small talk, then each speaker tells one or two life events
(drawn per person, without repeats, from `EVENTS`, with their own slot values: a pet's name, a
city, a hobby) in one of several wordings, the friend reacts, and some events get a follow-up turn
with a detail. Every event yields questions from its question templates, naming the person; the
relevant notes are the turns that say it (the statement, and the detail turn where the question
asks for the detail). A held-out third of the event kinds is the test split (`split_by_event`).

    .venv/bin/python benchmarks/conversation/make_conversation.py

Writes, beside this file, like `benchmarks/recall/make_truth.py`: project/docs/memory/ledger/*.jsonl,
corpus.jsonl, truth.jsonl, truth-train.jsonl, truth-test.jsonl.
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "recall"))

from events import EVENTS, FILLER, PEOPLE, REACTIONS  # noqa: E402
from make_truth import NOW, Builder, check_replay, write_project, write_truth  # noqa: E402

MANIFEST = """# Memory Manifest

Loading map for the conversational recall benchmark (the ledger is what is measured).

## MemoryCustodian Protocol
- protocol_version: 0.5

## Always load
- brief.md

## Load by task
"""
BRIEF = """# Brief

Chats between friends, one note a dialogue turn. This memory folder is a generated benchmark
corpus for `memory-custodian eval`.
"""
SESSIONS = 9
FIRST_DAY = datetime(2026, 2, 2, 18, 0, tzinfo=timezone.utc)


def _ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


class Chat:
    """Turns of one pair, in order, written as notes with consecutive times."""

    def __init__(self, b: Builder, pair: tuple[str, str]):
        self.b, self.pair, self.n = b, pair, 0

    def say(self, speaker: str, text: str, when: datetime, session: int) -> str:
        self.n += 1
        key = f"{self.pair[0]}-{self.pair[1]}-{self.n}".lower()
        title = f"{speaker}, session {session}, {when.strftime('%-d %B %Y')}"
        ms = _ms(when) + self.n * 47_000
        self.b.create(key, "finding", "medium", title, text, (), (), ms=ms, actor="human")
        return key


def _fill(template: str, person: str, friend: str, slots: dict) -> str:
    return template.format(p=person, f=friend, **slots)


def _events_of(b: Builder, person: str) -> list[tuple[dict, dict]]:
    """The person's life events: (event, its slot values), drawn without repeats."""
    out = []
    for ev in b.rng.sample(EVENTS, 2 * SESSIONS - 2):
        slots = {name: b.rng.choice(values) for name, values in sorted(ev["slots"].items())}
        out.append((ev, slots))
    return out


def _session(chat: Chat, session: int, when: datetime, events: dict, add_query) -> None:
    b = chat.b
    first, second = chat.pair if session % 2 else chat.pair[::-1]
    for _ in range(b.rng.randint(3, 5)):
        speaker = first if chat.n % 2 == 0 else second
        friend = second if speaker == first else first
        chat.say(speaker, _fill(b.rng.choice(FILLER), speaker, friend, {}), when, session)
    for speaker, friend in ((first, second), (second, first)):
        for _ in range(b.rng.choice((1, 1, 2))):
            if not events[speaker]:
                continue
            ev, slots = events[speaker].pop()
            said = chat.say(speaker, _fill(b.rng.choice(ev["say"]), speaker, friend, slots), when, session)
            chat.say(friend, _fill(b.rng.choice(REACTIONS), friend, speaker, {}), when, session)
            detail = None
            if ev.get("detail"):
                detail = chat.say(speaker, _fill(b.rng.choice(ev["detail"]), speaker, friend, slots), when, session)
                chat.say(friend, _fill(b.rng.choice(REACTIONS), friend, speaker, {}), when, session)
            for category, template, which in ev["ask"]:
                keys = [said] if which == "say" else [detail] if which == "detail" else [said, detail]
                if None in keys:
                    continue
                add_query(category, ev["key"], _fill(template, speaker, friend, slots), keys)
    for _ in range(b.rng.randint(2, 4)):
        speaker = first if chat.n % 2 == 0 else second
        friend = second if speaker == first else first
        chat.say(speaker, _fill(b.rng.choice(FILLER), speaker, friend, {}), when, session)


def build():
    b = Builder(seed=19)
    queries: list[dict] = []

    def add_query(category, event, text, keys):
        queries.append({"category": category, "event": event, "query": text,
                        "relevant": [b.notes[k]["id"] for k in keys]})

    for i in range(0, len(PEOPLE), 2):
        pair = (PEOPLE[i], PEOPLE[i + 1])
        chat = Chat(b, pair)
        events = {p: _events_of(b, p) for p in pair}
        when = FIRST_DAY + timedelta(days=b.rng.randint(0, 10))
        for session in range(1, SESSIONS + 1):
            _session(chat, session, when, events, add_query)
            when += timedelta(days=b.rng.randint(14, 24), hours=b.rng.randint(-3, 3))
    return b, queries


def split_by_event(queries: list[dict], seed: int = 23) -> tuple[list[dict], list[dict]]:
    """A held-out third of the event kinds: no wording of a test question or of its evidence was
    seen in train, so whatever is tuned on train (stop words, word forms) must generalise."""
    import random

    keys = sorted({q["event"] for q in queries})
    random.Random(seed).shuffle(keys)
    held = set(keys[::3])
    return [q for q in queries if q["event"] not in held], [q for q in queries if q["event"] in held]


def write(b: Builder, queries: list[dict]) -> None:
    memory = HERE / "project" / "docs" / "memory"
    if memory.exists():
        shutil.rmtree(memory)  # nothing of an older recipe's folder may stay
    write_project(memory, MANIFEST, BRIEF, b.events)
    write_truth(HERE, b.notes, queries, "c", split_by_event)


def main() -> None:
    b, queries = build()
    write(b, queries)
    check_replay(HERE / "project" / "docs" / "memory", len(b.notes))
    cats = Counter(q["category"] for q in queries)
    print(f"{len(b.notes)} notes, {len(queries)} queries ({', '.join(f'{k} {v}' for k, v in sorted(cats.items()))}), "
          f"last turn {max(e['at'] for e in b.events)}, evaluate as of {NOW}")


if __name__ == "__main__":
    main()
