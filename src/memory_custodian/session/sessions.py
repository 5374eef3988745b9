"""Per-session hook state under `.cache/sessions/`: what was injected, the turn's budget, and the
user's last message.

Each host session gets one small JSON file (owner-only; the user's words are private), named by
a hash of the session id so no id can reach outside the folder. Hooks for one session can run
concurrently (parallel tool calls), so a read-modify-write holds a lock on that session only:
the project lock would make every prompt wait behind a ledger rebuild.
"""

from __future__ import annotations

import contextlib
import json
import os
import time

from ..base import locking
from ..base.fsutil import atomic_write, cache_dir

SESSIONS_DIR = "sessions"
LAST_MESSAGE_TTL_S = 600  # the user's last message is kept 10 minutes for quote binding
MAX_MESSAGE_CHARS = 20_000  # quote search is quadratic in the worst case
SESSION_TTL_S = 7 * 24 * 3600  # idle session files are pruned after a week
PRUNE_EVERY_S = 3600  # session start prunes at most this often: a scan stats every session's files
PRUNED_STAMP = "pruned.stamp"
STATE_VERSION = 1


def sessions_dir(memory_dir) -> str:
    """`.cache/sessions/`, made owner-only if missing (a string path: no pathlib on every prompt)."""
    directory = os.path.join(cache_dir(memory_dir), SESSIONS_DIR)
    if not os.path.isdir(directory):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:  # made meanwhile by another hook: fine if it is a folder
            if not os.path.isdir(directory):
                raise
    return directory


_SAFE_ID = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def session_key(session_id: str) -> str:
    """A file name for the session: the id itself when it is a plain token (hosts send UUIDs),
    else a hash of it, so no id can name a path outside the folder."""
    if 0 < len(session_id) <= 64 and set(session_id) <= _SAFE_ID:
        return "s-" + session_id
    import hashlib

    return "h-" + hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]


def _empty() -> dict:
    return {"v": STATE_VERSION, "injected": {}, "turn": 0, "turn_tokens": 0, "repack": False,
            "last_message": None, "updated": 0.0}


class SessionState:
    """The state of one host session; mutate `data`, it is saved when the block exits."""

    def __init__(self, path: str | None, data: dict):
        self.path = path
        self.data = data

    @classmethod
    def blank(cls) -> SessionState:
        """A state that is never saved: for a hook whose session file cannot be opened (fail open)."""
        return cls(None, _empty())

    # -- dedup: each note at most once per session unless it changed -------------------------
    # A title line does not stand in for the full text: a note first seen as a line in a prompt
    # hook is still shown in full when its file is touched.
    def seen(self, note, *, full: bool = False) -> bool:
        """Was `note` (id, last_event, updated_at) shown already, as it is now?"""
        entry = self.data["injected"].get(note.id)
        if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str):
            return False
        version, level = entry
        # `@<time>`: shown in a pack at that time, so unchanged if not updated since; else the last event shown
        same = (bool(note.updated_at) and note.updated_at <= version[1:] if version.startswith("@")
                else version == note.last_event)
        return same and (level == "full" or not full)

    def mark(self, note, *, full: bool = False) -> None:
        self._put(note.id, note.last_event, full)

    def mark_shown_at(self, note_id: str, at_iso: str, *, full: bool = False) -> None:
        """For notes known only by id (the pack's): shown at `at_iso`, as they were then."""
        self._put(note_id, "@" + at_iso, full)

    def _put(self, note_id: str, version: str, full: bool) -> None:
        entry = self.data["injected"].get(note_id)
        if not full and isinstance(entry, list) and entry == [version, "full"]:
            return
        self.data["injected"][note_id] = [version, "full" if full else "line"]

    def forget_injected(self) -> None:
        """After a compaction or a fresh start the host's context no longer holds what we sent."""
        self.data["injected"] = {}
        self.data["quiet_paths"] = {}

    # -- per-turn budget ---------------------------------------------------------------------
    def new_turn(self) -> None:
        self.data["turn"] += 1
        self.data["turn_tokens"] = 0

    def budget_left(self, turn_budget: int) -> int:
        return max(0, turn_budget - int(self.data.get("turn_tokens", 0)))

    def spend(self, tokens: int) -> None:
        self.data["turn_tokens"] = int(self.data.get("turn_tokens", 0)) + tokens

    # -- the user's last message -------------------------------------------------------------
    def keep_message(self, text: str, now: float | None = None) -> None:
        if not text.strip():
            return
        from ..base.secrets import redact

        # Never a credential on disk: a line holding one is kept as `[redacted: KIND]`, so it can
        # never be quoted, while the rest of the message still can.
        kept = redact(text, keep=MAX_MESSAGE_CHARS)
        self.data["last_message"] = {"text": kept, "at": time.time() if now is None else now}


def _load(path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return _empty()
    except UnicodeDecodeError:
        return _empty()  # a cache file: a broken one is rebuilt, never trusted
    try:
        data = json.loads(raw)
    except ValueError:
        return _empty()  # likewise
    if not isinstance(data, dict) or data.get("v") != STATE_VERSION:
        return _empty()
    base = _empty()
    base.update(data)
    if not _well_typed(base):
        return _empty()  # written by another version, a disk error or a person: rebuild it
    return base


def _well_typed(data: dict) -> bool:
    def number(value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    message = data["last_message"]
    return (
        isinstance(data["injected"], dict)
        and all(isinstance(k, str) and isinstance(v, list) and len(v) == 2 for k, v in data["injected"].items())
        and isinstance(data["turn"], int) and not isinstance(data["turn"], bool)
        and isinstance(data["turn_tokens"], int) and not isinstance(data["turn_tokens"], bool)
        and isinstance(data["repack"], bool)
        and number(data["updated"])
        and (message is None or (isinstance(message, dict) and isinstance(message.get("text"), str)
                                 and number(message.get("at"))))
    )


@contextlib.contextmanager
def open_session(memory_dir, session_id: str):
    """Load, lock and (on a clean exit) save the state of `session_id`."""
    directory = sessions_dir(memory_dir)
    key = session_key(session_id or "no-session")
    path = os.path.join(directory, f"{key}.json")
    fd = os.open(os.path.join(directory, f"{key}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        locking.acquire(fd)
        state = SessionState(path, _load(path))
        before = json.dumps(state.data, sort_keys=True)
        message = state.data.get("last_message")
        if isinstance(message, dict) and time.time() - float(message.get("at") or 0) > LAST_MESSAGE_TTL_S:
            state.data["last_message"] = None  # the user's words are kept no longer than needed
        yield state
        if json.dumps(state.data, sort_keys=True) != before:
            state.data["updated"] = time.time()
            # a cache (`_load` rebuilds a damaged one): no fsync on every prompt's critical path
            atomic_write(path, json.dumps(state.data, sort_keys=True, ensure_ascii=False), mode=0o600, durable=False)
    finally:
        locking.release(fd)
        os.close(fd)


def recent_user_messages(memory_dir, *, now: float | None = None,
                         ttl: float = LAST_MESSAGE_TTL_S) -> list[str]:
    """The last user message of every session from the last `ttl` seconds, newest first.

    The MCP server cannot tell which host session called it, so any recent message counts:
    each one is still something a user of this project said verbatim.
    """
    directory = os.path.join(os.fspath(memory_dir), ".cache", SESSIONS_DIR)
    if not os.path.isdir(directory):
        return []
    now = time.time() if now is None else now
    found: list[tuple[float, str]] = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        message = _load(os.path.join(directory, name)).get("last_message")
        if not isinstance(message, dict):
            continue
        at = message.get("at")
        text = message.get("text")
        if isinstance(at, (int, float)) and isinstance(text, str) and 0 <= now - at <= ttl:
            found.append((float(at), text))
    found.sort(key=lambda item: (-item[0], item[1]))
    return [text for _, text in found]


def prune_sessions(memory_dir, *, now: float | None = None, ttl: float = SESSION_TTL_S) -> int:
    """Delete session files idle for longer than `ttl`; returns how many were removed."""
    directory = os.path.join(os.fspath(memory_dir), ".cache", SESSIONS_DIR)
    if not os.path.isdir(directory):
        return 0
    now = time.time() if now is None else now
    removed = 0
    # os.scandir, not Path objects: this stats every file of every session.
    with os.scandir(directory) as entries:
        for entry in entries:
            if not entry.name.endswith((".json", ".lock")) or entry.name in (".json", ".lock"):
                continue
            try:
                if now - entry.stat(follow_symlinks=True).st_mtime > ttl:
                    os.unlink(entry.path)
                    removed += 1
            except FileNotFoundError:
                continue
    return removed


def prune_sessions_now_and_then(memory_dir, *, now: float | None = None, every: float = PRUNE_EVERY_S) -> int:
    """`prune_sessions`, unless it ran less than `every` seconds ago (a stamp file's mtime says when)."""
    directory = os.path.join(os.fspath(memory_dir), ".cache", SESSIONS_DIR)
    stamp = os.path.join(directory, PRUNED_STAMP)
    now = time.time() if now is None else now
    try:
        if 0 <= now - os.stat(stamp).st_mtime < every:
            return 0
    except FileNotFoundError:
        pass
    removed = prune_sessions(memory_dir, now=now)
    if os.path.isdir(directory):
        atomic_write(stamp, "", mode=0o600, durable=False)
    return removed
