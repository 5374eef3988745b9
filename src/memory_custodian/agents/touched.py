"""The files a tool call touches, as paths relative to the project root (the ledger's anchors)."""

from __future__ import annotations

import os


def _inside(path: str, root: str) -> str | None:
    """`path` relative to `root` if it lies under it (by name, not following links), else None."""
    if path == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def project_relative(paths: list[str], root, cwd: str | None) -> list[str]:
    """POSIX paths relative to the project root, for files inside it; others are dropped."""
    root = os.path.realpath(os.fspath(root))
    base = cwd or os.getcwd()
    out: list[str] = []
    for raw in paths:
        candidate = os.path.join(base, raw)  # an absolute `raw` stays as it is
        rel = _inside(os.path.normpath(candidate), root)
        if rel is None:
            try:  # through a link into the project
                rel = _inside(os.path.realpath(candidate), root)
            except (ValueError, OSError):  # a NUL byte in the name
                continue
        if rel and rel != "." and not rel.startswith("../") and rel not in out:
            out.append(rel)
    return out


def existing_files(paths: list[str], root: str) -> list[str]:
    """The project-relative `paths` that are files on disk."""
    return [p for p in paths if os.path.isfile(os.path.join(root, p))]
