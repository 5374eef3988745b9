"""The usage log behind `stats`: one JSON line per hook call, recall and expand, in `.cache/adoption.jsonl`.

Owner-only, never committed, trimmed to its newest half past `MAX_BYTES`. Written on every hook and
recall, so it is kept apart from the report (`adoption.py`), which only `stats`, `status` and
`doctor` load.
"""

from __future__ import annotations

import json
import os
import time

from ..base.errors import InvalidInput
from ..base.fsutil import BINARY, atomic_write, cache_dir

STORE = "adoption.jsonl"
MAX_BYTES = 512 * 1024
DOORS = ("cli", "mcp", "viewer")  # who may ask `Memory.recall`/`expand` to log a read (a hook logs its own entries)


def store_path(memory_dir, *, create: bool = True) -> str:
    """The log's path; `create` makes the private `.cache/` if missing (readers never do)."""
    if not create:
        return os.path.join(os.fspath(memory_dir), ".cache", STORE)

    return os.path.join(cache_dir(memory_dir), STORE)


def record(memory_dir, entry: dict, now: float | None = None) -> None:
    """Append one entry (one `write` on an O_APPEND descriptor: lines of concurrent hooks never mix)."""
    entry = {**entry, "at": iso_at(time.time() if now is None else now)}
    path = store_path(memory_dir)
    line = (json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | BINARY, 0o600)
    try:
        os.write(fd, line)
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if size > MAX_BYTES:
        trim(path)


def note_use(memory_dir, kind: str, door: str, ids) -> str | None:
    """Log a recall or an expand (`kind`) through `door` (one of DOORS); a warning when the log could not
    be written (the read itself still stands: its caller says the warning on stderr)."""
    check_door(door)
    try:
        record(memory_dir, {"kind": kind, "door": door, "ids": sorted(set(ids))})
    except OSError as exc:
        return f"memory-custodian: the usage log could not be written ({exc}); `stats` will undercount"
    return None


def check_door(door: str) -> None:
    if door not in DOORS:
        raise InvalidInput(f"unknown caller {door!r}: the usage log knows {', '.join(DOORS)}")


def trim(path: str) -> None:
    """Keep the newest half, under a lock so two hooks never trim at once."""
    from ..base.locking import acquire, release

    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | BINARY, 0o600)
    try:
        acquire(fd)
        with open(path, "rb") as fh:
            data = fh.read()
        if len(data) <= MAX_BYTES:
            return  # trimmed meanwhile
        keep = data[len(data) - MAX_BYTES // 2:]
        keep = keep[keep.find(b"\n") + 1:]
        atomic_write(path, keep.decode("utf-8", "replace"), mode=0o600, durable=False)
    finally:
        release(fd)
        os.close(fd)


def iso_at(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}Z"


def hook_entry(hook, injected: list[str], tokens: int, outcome: str | None, wrote: bool = False) -> dict:
    """The log entry of one hook call."""
    from .sessions import session_key

    entry = {"kind": "hook", "session": session_key(hook.session_id or "no-session"), "host": hook.host,
             "event": hook.event, "action": hook.action}
    if injected:
        entry["injected"] = sorted(injected)
        entry["tokens"] = tokens
    if wrote:
        entry["wrote"] = True
    if outcome:
        entry["checkpoint"] = outcome
    if getattr(hook, "agent_id", None):
        entry["subagent"] = hook.agent_id
    return entry


def read_store(memory_dir) -> tuple[list[dict], int]:
    """The logged entries, oldest first, and how many lines could not be read (a torn write)."""
    try:
        with open(store_path(memory_dir, create=False), "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return [], 0
    entries, bad = [], 0
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(entry, dict) and isinstance(entry.get("at"), str):
            entries.append(entry)
        else:
            bad += 1
    entries.sort(key=lambda e: (e["at"], json.dumps(e, sort_keys=True)))
    return entries, bad
