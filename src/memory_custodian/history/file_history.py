"""One curated file through its commits: each commit's entry changes (with their diffs), each entry's history,
and what the working tree changes on top of HEAD. Read from git with two processes (`log --raw` for the
commits and their blob ids, one `cat-file --batch` for every blob), whatever the number of commits.

What is forgotten now is never shown, in any commit: an entry whose fingerprint is in today's `forgotten.txt`
is "an entry forgotten since", without its heading or its diff, wherever it appears in the file's past.
"""

from __future__ import annotations

import os

from ..base.errors import InvalidInput
from ..base.records import Record, field
from ..curated.parse.units import split_units
from ..curated.write.fingerprints import FILE as FORGOTTEN_FILE
from ..ledger.storage.ids import ms_to_iso
from .curated_diff import EntryChange, file_changes, has_forgotten
from .gitsource import Repo
from .snapshot import Snapshot, is_curated

LOG_LIMIT = 50  # commits a page shows; older ones are the next page's (`skip`)
UNITS_KEPT = 2048  # blobs whose entries are kept split: a blob's text never changes, so neither do they
_UNITS: dict[str, list] = {}
_KEPT: dict[tuple, FileHistory] = {}
NULL_SHA = "0" * 40


class FileCommit(Record):
    """One commit that changed the file (`commit` None: the working tree's uncommitted change)."""

    commit: str | None
    at: str
    author: str
    subject: str
    changes: list[EntryChange] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"commit": self.commit, "at": self.at, "author": self.author, "subject": self.subject,
                "changes": [c.to_dict() for c in self.changes]}


class FileHistory(Record):
    """`commits` newest first; `entries`: (heading, [(commit, at, change)]) for each entry the file has now."""

    name: str
    commits: list[FileCommit] = field(default_factory=list)
    entries: list[tuple] = field(default_factory=list)
    more: bool = False
    skip: int = 0


def _read(memory_dir: str, names) -> dict[str, bytes]:
    """Just the files a page needs (never the ledger's shards, which can be tens of megabytes)."""
    found = {}
    for name in names:
        try:
            with open(os.path.join(memory_dir, *name.split("/")), "rb") as fh:
                found[name] = fh.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            continue
    return found


def _units(text: str | None) -> list:
    if text is None:
        return []
    doc = split_units(text)
    return list(doc.units) if doc.mode in ("section", "bullet") else []


def _log_raw(repo: Repo, path: str, limit: int, skip: int = 0) -> list[tuple[dict, str, str]]:
    """(commit info, old blob, new blob) for each commit that changed `path`, newest first."""
    out = repo.log_text(path, raw=True, limit=limit + 1, skip=skip)
    found = []
    for record in out.split("\x1e")[1:]:
        head, _, raw = record.partition("\n")
        sha, seconds, author, subject = [*head.split("\x1f"), "", "", "", ""][:4]
        blobs = [line.split() for line in raw.splitlines() if line.startswith(":")]
        if not blobs:
            continue  # a merge commit: its change is its parents'
        found.append(({"commit": sha, "at": ms_to_iso(int(seconds) * 1000), "author": author, "subject": subject},
                      blobs[0][2], blobs[0][3]))
    return found


def _blob_units(sha: str, texts: dict) -> list:
    if sha == NULL_SHA:
        return []
    if sha not in _UNITS:
        if len(_UNITS) >= UNITS_KEPT:
            _UNITS.clear()
        _UNITS[sha] = _units(texts.get(sha))
    return _UNITS[sha]


def file_history(memory, name: str, limit: int = LOG_LIMIT, skip: int = 0) -> FileHistory:
    """The history of curated file `name` (relative to the memory folder), as git and the working tree hold it:
    `limit` commits, newest first, after the newest `skip` (the working tree's change comes with the first page)."""
    if not is_curated(name) or ".." in name.split("/"):
        raise InvalidInput(f"{name!r} is not a curated memory file (a .md file of the memory folder)", field="file")
    if not 1 <= limit <= 500 or not 0 <= skip <= 1_000_000:
        raise InvalidInput("{field} must be 1..500 commits, after 0 or more", field="limit")
    repo = Repo(memory.root_str, memory.memory_dir_str)
    files = _read(memory.memory_dir_str, (name, FORGOTTEN_FILE))
    key = (repo.top, name, limit, skip, repo.head(), hash(files.get(name)), hash(files.get(FORGOTTEN_FILE)))
    if key not in _KEPT:  # a commit never changes: the same HEAD and working file give the same page
        if len(_KEPT) >= 64:
            _KEPT.clear()
        _KEPT[key] = _file_history(repo, name, files, limit, skip)
    return _KEPT[key]


def _file_history(repo: Repo, name: str, files: dict, limit: int, skip: int) -> FileHistory:
    now = Snapshot("working tree", None, "", files)
    hidden = now.forgotten
    log = _log_raw(repo, f"{repo.memory_rel}/{name}", limit, skip)
    shas = sorted({s for _, old, new in log for s in (old, new) if s != NULL_SHA and s not in _UNITS})
    texts = dict(zip(shas, (b.decode("utf-8", "replace") for b in repo.blobs(shas)), strict=True))
    result = FileHistory(name, more=len(log) > limit, skip=skip)
    if skip == 0:
        committed = _blob_units(log[0][2], texts) if log else []
        work = now.units(name)
        if [u.text for u in work] != [u.text for u in committed]:
            result.commits.append(FileCommit(None, "", "", "uncommitted change in the working tree",
                                             file_changes(name, committed, work, hidden, hidden)))
    for info, old, new in log[:limit]:
        before, after = _blob_units(old, texts), _blob_units(new, texts)
        result.commits.append(FileCommit(info["commit"], info["at"], info["author"], info["subject"],
                                         _redacted(file_changes(name, before, after, hidden, hidden), after, hidden)))
    result.entries = _entry_histories(result.commits, now.units(name), hidden)
    return result


def _redacted(changes: list[EntryChange], after: list, hidden: frozenset) -> list[EntryChange]:
    """An entry a commit added or changed that is forgotten now: told without its heading or diff."""
    if not hidden:
        return changes

    secret = {u.start_line for u in after if has_forgotten(u, hidden)}
    return [c.replace(change="forgotten", heading="", diff=[], line=None, tokens=0)
            if c.change in ("added", "changed") and c.line in secret else c for c in changes]


def _entry_histories(commits: list[FileCommit], units: list, hidden: frozenset) -> list[tuple]:
    seen: dict[str, list] = {}
    for c in commits:
        for ch in c.changes:
            if ch.change in ("added", "changed"):
                seen.setdefault(ch.heading, []).append((c.commit, c.at, ch.change))
    return [(u.heading, seen.get(u.heading, [])) for u in units if not has_forgotten(u, hidden)]
