"""Which files under the memory folder are curated memory, and a helper to list them stably."""

from __future__ import annotations

from pathlib import Path

# Not curated text: the derived cache, the ledger and its export mirror belong to the ledger tier.
EXCLUDED_TOP = {".cache", "ledger"}
EXCLUDED_FILES = {"MEMORY.md"}


def curated_files(memory_dir: Path, *, include_archive: bool, include_manifest: bool = False) -> list[str]:
    """Relative POSIX paths of every curated `.md` file, sorted."""
    memory_dir = Path(memory_dir)
    out = []
    for path in memory_dir.rglob("*.md"):
        rel = path.relative_to(memory_dir)
        parts = rel.parts
        if parts[0] in EXCLUDED_TOP or any(p.startswith(".") for p in parts) or rel.as_posix() in EXCLUDED_FILES:
            continue
        if not path.is_file():
            continue
        if parts[0] == "archive" and not include_archive:
            continue
        if rel.as_posix() == "manifest.md" and not include_manifest:
            continue
        out.append(rel.as_posix())
    return sorted(out)
