"""Which files under the memory folder are curated memory, and a helper to list them stably."""

from __future__ import annotations

import os

from ...base import fsutil

# Not curated text: the derived cache, the ledger and its export mirror belong to the ledger tier.
EXCLUDED_TOP = {".cache", "ledger"}
EXCLUDED_FILES = {"MEMORY.md"}


def curated_files(memory_dir, *, include_archive: bool, include_manifest: bool = False) -> list[str]:
    """Relative POSIX paths of every curated `.md` file, sorted."""
    top = os.fspath(memory_dir)
    out = []
    for folder, _dirs, names in os.walk(top):
        rel_folder = os.path.relpath(folder, top)
        parts = [] if rel_folder == "." else rel_folder.split(os.sep)
        for name in names:
            if not name.endswith(".md"):
                continue
            rel_parts = parts + [name]
            rel = "/".join(rel_parts)
            if rel_parts[0] in EXCLUDED_TOP or any(p.startswith(".") for p in rel_parts) or rel in EXCLUDED_FILES:
                continue
            if not fsutil.is_file(os.path.join(folder, name)):
                continue
            if rel_parts[0] == "archive" and not include_archive:
                continue
            if rel == "manifest.md" and not include_manifest:
                continue
            out.append(rel)
    return sorted(out)
