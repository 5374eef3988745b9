"""Ids and clocks of the ledger: random note ids, monotonic ULID event ids, UTC millisecond times.

Note ids are random so two branches never need to agree on a counter; event ids are ULIDs so they
sort by time and stay unique without coordination, and they are monotonic within a process so the
events of one txn keep their written order under the `(at, id)` sort.
"""

from __future__ import annotations

import os
import re
import time
from _thread import allocate_lock  # not `threading`: see fsutil

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
NOTE_ID_LEN = 8

_lock = allocate_lock()
_last_ms = -1
_last_rand = 0


def new_note_id() -> str:
    n = int.from_bytes(os.urandom(5), "big")
    return "".join(CROCKFORD[(n >> shift) & 31] for shift in range(35, -5, -5))


def is_note_id(text: str) -> bool:
    return len(text) == NOTE_ID_LEN and all(c in CROCKFORD for c in text)


def _encode(n: int, length: int) -> str:
    return "".join(CROCKFORD[(n >> (5 * i)) & 31] for i in range(length - 1, -1, -1)).upper()


def new_ulids(count: int, not_before_ms: int = 0) -> tuple[int, list[str]]:
    """`count` monotonic ULIDs sharing one millisecond; returns (that millisecond, ids).

    The millisecond is at least `not_before_ms` so a new event never sorts before one it follows.
    """
    global _last_ms, _last_rand
    with _lock:
        ms = max(int(time.time() * 1000), not_before_ms)
        if ms <= _last_ms:
            ms = _last_ms
            rand = _last_rand + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big") >> 1  # headroom so increments never overflow
        ids = []
        for i in range(count):
            ids.append(_encode(ms, 10) + _encode(rand + i, 16))
        _last_ms, _last_rand = ms, rand + count - 1
    return ms, ids


def ms_to_iso(ms: int) -> str:
    t = time.gmtime(ms // 1000)
    return (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}."
            f"{ms % 1000:03d}Z")


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (no datetime import on the hot path)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def iso_to_ms(iso: str) -> int:
    if is_iso_utc(iso):
        days = _days_from_civil(int(iso[0:4]), int(iso[5:7]), int(iso[8:10]))
        secs = int(iso[11:13]) * 3600 + int(iso[14:16]) * 60 + int(iso[17:19])
        return (days * 86400 + secs) * 1000 + int(iso[20:23])
    return int(parse_iso(iso).timestamp() * 1000 + 0.5)


def parse_iso(iso: str):
    """A datetime in UTC from an ISO 8601 string (`Z` or an offset; naive means UTC)."""
    from datetime import datetime, timezone

    text = iso[:-1] + "+00:00" if iso.endswith("Z") else iso
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def now_iso() -> str:
    return ms_to_iso(int(time.time() * 1000))


def add_days(iso: str, days: float) -> str:
    return ms_to_iso(iso_to_ms(iso) + round(days * 86_400_000))


_ISO_RE = re.compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z")


def is_iso_utc(text) -> bool:
    """The one `at` shape we write: `YYYY-MM-DDTHH:MM:SS.mmmZ`."""
    return isinstance(text, str) and _ISO_RE.fullmatch(text) is not None
