"""Which notes a ledger diff must fold: those whose lines differ between the two sides, and every note their
fold depends on, so a diff of a 75,000-note ledger parses a few lines rather than every event twice.

A note's fold depends on its own events, on the other notes of its txns (replay ignores a txn it does not
hold whole), on a forget that stripped one of its txns (it waives that txn) and on the note it supersedes or
is superseded by (a forget wins over a successor written where it was not known). The scope is the closure of
the differing notes over those links, plus every forgotten note (a forget line is short and names its txns)
and every note whose expiry date may fall between the two sides' times. The links are read from the bytes of
each line without parsing it: an event is canonical JSON, so `"note":"` (quote, key, quote, colon, quote) only
ever starts a key, never text, where quotes are escaped.
"""

from __future__ import annotations

import json

from ..ledger.storage.ids import add_days
from ..ledger.storage.model import DEFAULT_LIFETIME_DAYS
from ..ledger.storage.store import is_shard_name, split_shard

_NOTE, _TXN, _AT = b'"note":"', b'"txn":"', b'"at":"'
_REFS = (b'"supersedes":"', b'"by":"')


def _value(line: bytes, key: bytes) -> str | None:
    start = line.find(key)
    if start < 0:
        return None
    start += len(key)
    end = line.find(b'"', start)
    return line[start:end].decode("utf-8", "replace") if end > start else None


def shard_lines(snapshot) -> dict[str, list[bytes]]:
    out = {}
    for name, data in snapshot.files.items():
        folder, _, base = name.rpartition("/")
        if folder == "ledger" and is_shard_name(base):
            out[name] = [line for line in split_shard(data)[0] if line.strip()]
    return out


def _expiry_candidate(line: bytes, since: str, until: str, renewed_after: str | None) -> bool:
    """Whether the note of this line may pass its expiry date between `since` and `until`: an explicit
    `expires` in that span, or (a kind with a default lifetime) a create or reinstate after `renewed_after`."""
    if b'"expires":"' in line:
        expires = _value(line, b'"expires":"')
        if expires is not None and since < expires <= until:
            return True
    if renewed_after is None or not (b'"op":"create"' in line or b'"op":"reinstate"' in line):
        return False
    return (_value(line, _AT) or "") >= renewed_after


def scope(base, head) -> set[str]:
    """The note ids whose fold a comparison of `base` and `head` needs (see the module's account)."""
    sides = [shard_lines(base), shard_lines(head)]
    seeds: set[str] = set()
    for name in set(sides[0]) | set(sides[1]):
        if base.files.get(name) == head.files.get(name):
            continue
        for line in set(sides[0].get(name, ())) ^ set(sides[1].get(name, ())):
            try:
                seeds.add(json.loads(line)["note"])
            except (ValueError, KeyError, TypeError):
                continue  # a line that is no event: the replay reports it, it names no note
    days = max(DEFAULT_LIFETIME_DAYS.values(), default=0)
    renewed_after = add_days(base.at, -days) if days else None
    links: dict[str, set[str]] = {}
    by_txn: dict[str, set[str]] = {}
    for line in (x for side in sides for lines in side.values() for x in lines):
        note = _value(line, _NOTE)
        if note is None:
            continue
        txn = _value(line, _TXN)
        if txn:
            by_txn.setdefault(txn, set()).add(note)
        for key in _REFS:
            other = _value(line, key)
            if other:
                links.setdefault(note, set()).add(other)
                links.setdefault(other, set()).add(note)
        if b'"op":"forget"' in line:
            seeds.add(note)
            try:
                stripped = json.loads(line).get("stripped") or ()
            except ValueError:
                stripped = ()
            for t in stripped if isinstance(stripped, list) else ():
                by_txn.setdefault(str(t), set()).add(note)
        elif _expiry_candidate(line, base.at, head.at, renewed_after):
            seeds.add(note)
    for notes in by_txn.values():
        if len(notes) > 1:
            for note in notes:
                links.setdefault(note, set()).update(notes)
    found, todo = set(seeds), list(seeds)
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in found:
                found.add(other)
                todo.append(other)
    return found


def restricted(data: bytes, notes: set[str]) -> bytes:
    """The lines of a shard that belong to `notes` (a torn tail kept, for the replay to report)."""
    lines, tail = split_shard(data)
    kept = [line for line in lines if _value(line, _NOTE) in notes]
    return b"".join(line + b"\n" for line in kept) + tail
