"""Copies a write can leave behind: temp files of writers that died, and, after a hard delete,
every derived copy of the deleted text.

A writer killed between creating its temp file and renaming it leaves `.NAME.tmp-PID-TID` with
the new bytes, which may hold text a later hard delete removes; the next writer removes such
files under the lock once their process is gone. A hard delete then scrubs `.cache/` (the
index, whose free pages keep deleted rows, is dropped and rebuilt; any other cache file holding
the text is removed) and every mirror this tool exported (`.cache/exports.json` remembers where).
"""

from __future__ import annotations

import json
import os
import re

from . import fsutil

EXPORTS_FILE = "exports.json"
PENDING_FORGET = "forget-pending.json"
_KEEP_IN_CACHE = (".gitignore", "lock", EXPORTS_FILE, PENDING_FORGET)


def needles(*texts: str) -> list[bytes]:
    """The byte forms a stored text takes on disk: UTF-8, and inside JSON (escaped, and ASCII-escaped)."""
    out = set()
    for text in texts:
        for line in (text or "").splitlines():
            line = line.strip()
            if len(line) < 8:
                continue  # a short line ("- x") is in every file; longer lines identify the note
            out.add(line.encode("utf-8"))
            out.add(json.dumps(line, ensure_ascii=False)[1:-1].encode("utf-8"))
            out.add(json.dumps(line)[1:-1].encode("ascii"))
    return sorted(out)


OVERLAP = 8  # bytes of a forgotten text that mark a cache file as holding it
TORN_PREFIX = 4  # bytes of a torn write's unfinished last value that mark it, when they begin a forgotten text


class Overlap:
    """Any part of the forgotten texts, in every byte form they take on disk: a cache file sharing
    OVERLAP bytes with one of them holds the text (a torn fragment holds a piece of a line, never the
    whole line), and so does a torn write whose unfinished last value begins one."""

    def __init__(self, texts):
        self.forms = sorted({form for text in texts if (text or "").strip() for form in (
            text.encode("utf-8"), json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8"),
            json.dumps(text)[1:-1].encode("ascii"))})
        self.grams = {form[i:i + OVERLAP] for form in self.forms for i in range(len(form) - OVERLAP + 1)}

    def found_in(self, data: bytes) -> bool:
        grams, k = self.grams, OVERLAP
        if grams and any(data[i:i + k] in grams for i in range(len(data) - k + 1)):
            return True
        if b'":"' not in data:
            return False
        tail = data.rsplit(b'":"', 1)[1]
        return len(tail) >= TORN_PREFIX and b'"' not in tail and any(f.startswith(tail) for f in self.forms)


def holds(path: str, marks: list[bytes]) -> bool:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except (FileNotFoundError, IsADirectoryError):
        return False
    return any(m in data for m in marks)


def scrub_cache(cache: str, marks: list[bytes], index_files: tuple[str, ...], texts=()) -> list[str]:
    """Drop the index files and every other cache file holding one of `marks` or any part of `texts`
    (`Overlap`); the removed paths."""
    removed = []
    overlap = Overlap(texts) if texts else None
    for folder, dirs, files in os.walk(cache):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            if folder == cache and name in _KEEP_IN_CACHE:
                continue
            if (folder == cache and name.startswith(index_files)) or holds(path, marks) or (
                    overlap is not None and overlap.found_in(_read(path) or b"")):
                os.unlink(path)
                removed.append(path)
    return removed


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except (FileNotFoundError, IsADirectoryError):
        return None


def scrub_cache_matching(cache: str, pattern, skip: tuple[str, ...] = ()) -> list[str]:
    """Remove every cache file (but the lock, the export list and the files named `skip*`) whose text
    `pattern` finds: a curated hard forget's topic kept in a session's last prompt or checkpoint."""
    removed: list[str] = []
    if not os.path.isdir(cache):
        return removed
    for folder, dirs, files in os.walk(cache):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            if folder == cache and (name in _KEEP_IN_CACHE or (skip and name.startswith(skip))):
                continue
            data = _read(path)
            if data is not None and pattern.search(_as_text(data)):
                os.unlink(path)
                removed.append(path)
    return removed


def _as_text(data: bytes) -> str:
    """A file's text as the topic is matched against it: JSON string escapes undone."""
    text = data.decode("utf-8", "replace")
    if "\\u" in text:
        text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    return text


def remember_export(cache: str, target: str) -> None:
    """Record where a mirror was written, so a hard delete can re-render it."""
    known = exported_paths(cache)
    if target not in known:
        fsutil.atomic_write(os.path.join(cache, EXPORTS_FILE), json.dumps(sorted({*known, target}), indent=1) + "\n")


def exported_paths(cache: str) -> list[str]:
    path = os.path.join(cache, EXPORTS_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return []
    except ValueError:
        return []  # a cache file: a damaged one forgets the exports it knew, which forget then says
    return sorted(p for p in data if isinstance(p, str)) if isinstance(data, list) else []
