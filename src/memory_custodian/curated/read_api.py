"""Memory methods for: read, check, status (curated read path).

Each method imports its module on first call, so opening a Memory (hooks do it on every prompt)
costs nothing for the commands that are not run.
"""

from __future__ import annotations


class CuratedReadAPI:
    root: "object"
    memory_dir: "object"

    def read(self, task: str, *, areas=(), profiles=(), rules=(), paths=(), query: str | None = None,
             names_only: bool = False, strict: bool = False, ledger: bool = True):
        """Build the context pack for `task`; returns a `ReadResult` (see `curated.reading`).

        A missing required file makes `exit_code` 1 (the pack is still built); with `strict=True`
        it raises InvalidInput instead.
        """
        from .reading import read_pack

        return read_pack(self, task=task, areas=areas, profiles=profiles, rules=rules, paths=paths, query=query,
                         names_only=names_only, strict=strict, ledger=ledger)

    def check(self):
        """Validate the curated folder; returns a `CheckResult` (`ok` is False if any problem)."""
        from .checking import check_memory

        return check_memory(self)

    def status(self):
        """Each file's tokens against its budget, entry counts, inbox size; returns a `StatusResult`."""
        from .checking import status_memory

        return status_memory(self)

    def manifest(self):
        """The parsed manifest (`curated.manifest.Manifest`)."""
        from ..project import require_memory_dir
        from .reading import load_manifest

        return load_manifest(require_memory_dir(self.memory_dir))
