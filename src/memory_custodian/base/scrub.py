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


def holds(path: str, marks: list[bytes]) -> bool:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except (FileNotFoundError, IsADirectoryError):
        return False
    return any(m in data for m in marks)


def scrub_cache(cache: str, marks: list[bytes], index_files: tuple[str, ...]) -> list[str]:
    """Drop the index files and every other cache file holding one of `marks`; the removed paths."""
    removed = []
    for folder, dirs, files in os.walk(cache):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            if folder == cache and name in _KEEP_IN_CACHE:
                continue
            if (folder == cache and name.startswith(index_files)) or holds(path, marks):
                os.unlink(path)
                removed.append(path)
    return removed


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
