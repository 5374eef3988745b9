"""`Memory.diff`: what one revision changes in memory, for the people who review it.

The base defaults to the merge base of HEAD with the default branch (what a pull request is compared
with) and the head to the working tree, so a branch sees what it proposes before it is pushed, and CI
sees the same on the commit it checks out (a merge commit included: the comparison is of two trees).
Directives and tombstones come first, then each curated file, then the ledger's notes, then the flags.
"""

from __future__ import annotations

import time

from ..base.records import Record, field
from ..ledger.storage.ids import ms_to_iso
from .curated_diff import TOMBSTONES, curated_changes, curated_flags
from .diff_render import as_markdown, as_text
from .gitsource import WORKING_TREE, Repo, working_files
from .ledger_diff import ledger_changes, ledger_flags
from .ledger_scope import scope
from .snapshot import Snapshot


class Side(Record):
    """One end of the comparison: what was asked (`ref`), the commit (None: the working tree)."""

    ref: str
    commit: str | None
    at: str

    def to_dict(self) -> dict:
        return {"ref": self.ref, "commit": self.commit, "at": self.at}

    @property
    def label(self) -> str:
        return self.ref if self.commit is None else f"{self.ref} ({self.commit[:10]})"


class MemoryDiff(Record):
    """`directives` (ledger changes to directives) and `tombstones` (do-not-use.md entries) first; then
    `curated` (the other entries, by file) and `ledger` (the other notes); `flags` for the reviewer."""

    base: Side
    head: Side
    memory_dir: str
    directives: list = field(default_factory=list)
    tombstones: list = field(default_factory=list)
    curated: list = field(default_factory=list)
    ledger: list = field(default_factory=list)
    flags: list = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.directives or self.tombstones or self.curated or self.ledger)

    def counts(self) -> dict:
        out: dict[str, int] = {}
        for change in (*self.directives, *self.ledger):
            out[f"notes {change.change}"] = out.get(f"notes {change.change}", 0) + 1
        for change in (*self.tombstones, *self.curated):
            out[f"entries {change.change}"] = out.get(f"entries {change.change}", 0) + 1
        return dict(sorted(out.items()))

    def to_dict(self) -> dict:
        return {"base": self.base.to_dict(), "head": self.head.to_dict(), "memory_dir": self.memory_dir,
                "empty": self.empty, "counts": self.counts(),
                **{name: [c.to_dict() for c in getattr(self, name)]
                   for name in ("directives", "tombstones", "curated", "ledger", "flags")}}

    def text(self) -> str:
        return as_text(self)

    def markdown(self) -> str:
        return as_markdown(self)


def _now_iso() -> str:
    return ms_to_iso(int(time.time() * 1000))


def resolve(repo: Repo, base: str | None, head: str | None) -> tuple[Side, Side]:
    """The two ends: `head` a commit or (None) the working tree; `base` a commit or (None) the merge base
    of HEAD, or of `head`, with the default branch."""
    if head is None:
        head_side = Side(WORKING_TREE, None, _now_iso())
    else:
        commit = repo.commit(head)
        head_side = Side(head, commit, repo.time_of(commit))
    if base is None:
        branch = repo.default_branch()
        commit = repo.merge_base(head or "HEAD", branch)
        base_side = Side(f"merge base with {branch}", commit, repo.time_of(commit))
    else:
        commit = repo.commit(base)
        base_side = Side(base, commit, repo.time_of(commit))
    return base_side, head_side


def diff_memory(memory, base: str | None = None, head: str | None = None) -> MemoryDiff:
    repo = Repo(memory.root_str, memory.memory_dir_str)
    base_side, head_side = resolve(repo, base, head)
    before = Snapshot(base_side.ref, base_side.commit, base_side.at, repo.files_at(str(base_side.commit)))
    files = working_files(memory.memory_dir_str) if head_side.commit is None else repo.files_at(head_side.commit)
    after = Snapshot(head_side.ref, head_side.commit, head_side.at, files)
    return compare(before, after, base_side, head_side, repo.memory_rel)


def compare(before: Snapshot, after: Snapshot, base_side: Side, head_side: Side, memory_rel: str, *,
            scoped: bool = True) -> MemoryDiff:
    """The diff of two snapshots; `scoped` folds only the notes it depends on (False: every note, the
    reference the scoped fold is tested against)."""
    entries = curated_changes(before, after)
    if scoped:
        before.scope = after.scope = scope(before, after)  # fold only the notes the comparison depends on
    notes = ledger_changes(before, after)
    head_notes = after.ledger()[0]

    def is_directive(change) -> bool:
        others = [head_notes.get(i) for i in (change.note, change.by) if i]
        return change.kind == "directive" or any(n is not None and n.kind == "directive" for n in others)

    result = MemoryDiff(base_side, head_side, memory_rel)
    result.directives = [c for c in notes if c.change != "forgotten" and is_directive(c)]
    result.ledger = [c for c in notes if c not in result.directives]
    result.tombstones = [c for c in entries if c.file == TOMBSTONES]
    result.curated = [c for c in entries if c.file != TOMBSTONES]
    result.flags = ledger_flags(notes, after) + curated_flags(before, after, entries)
    return result
