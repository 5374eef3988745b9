"""Path globs for area routing, and the normalisation of touched paths they are matched against.

Globs are deliberately small and predictable: `*` and `?` match inside one path segment, `**`
is a whole segment matching any depth (including none; a trailing `src/**` matches everything
inside `src/`, not `src` itself, as in .gitignore), everything else is literal. Matching is
on normalised, project-relative POSIX paths, so `./src\\store.py` and `src/store.py` are one path.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from ...base import fsutil
from ...base.errors import InvalidInput


def validate_glob(pattern: str) -> str:
    """Return `pattern` if it is a valid glob, else raise InvalidInput saying what is wrong."""
    if not pattern:
        raise InvalidInput("empty path glob")
    if "\\" in pattern or pattern.startswith("/") or re.match(r"^[A-Za-z]:", pattern):
        raise InvalidInput(f"path glob {pattern!r} must be relative to the project root with '/' separators")
    if any(ch in pattern for ch in "[]{}"):
        raise InvalidInput(f"path glob {pattern!r}: only '*', '?' and '**' are supported")
    for part in pattern.split("/"):
        if part in ("", ".", ".."):
            raise InvalidInput(f"path glob {pattern!r} has an empty, '.' or '..' segment")
        if "**" in part and part != "**":
            raise InvalidInput(f"path glob {pattern!r}: '**' must be a whole segment, such as src/**/x.py")
    return pattern


@lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern:
    validate_glob(pattern)
    parts = pattern.split("/")
    out = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        piece = "".join("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in part)
        out.append(piece if last else piece + "/")
    return re.compile("".join(out))


def glob_match(pattern: str, path: str) -> bool:
    return compile_glob(pattern).fullmatch(path) is not None


def first_match(patterns, path: str) -> str | None:
    """The first of `patterns` (in order) that matches `path`, or None."""
    for pattern in patterns:
        if glob_match(pattern, path):
            return pattern
    return None


def normalize_path(value: str, project_root=None) -> str:
    """A touched path as a project-relative POSIX path; the file need not exist.

    `./` and `\\` are normalised; an absolute path is accepted only inside `project_root`.
    `..` segments and paths that leave the project (also through a symlink) are refused.
    """
    raw = str(value).strip().replace("\\", "/")
    root = os.path.realpath(os.fspath(project_root)) if project_root is not None else None
    if root is not None and (raw.startswith("/") or re.match(r"^[A-Za-z]:/", raw)):
        resolved = os.path.realpath(raw)
        if not _inside(resolved, root):
            raise InvalidInput(f"{{field}} {value!r} is outside the project root {root}; pass a path relative to it",
                               field="paths")
        raw = os.path.relpath(resolved, root).replace(os.sep, "/")
    while raw.startswith("./"):
        raw = raw[2:]
    if not raw or raw == "." or raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
        raise InvalidInput(f"{{field}} {value!r} must be a path relative to the project root, such as src/store.py",
                           field="paths")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        raise InvalidInput(f"{{field}} {value!r} must not contain '..'; pass a path inside the project", field="paths")
    if root is not None:
        nearest = os.path.join(root, *parts)
        while not fsutil.exists(nearest) and nearest != root:
            nearest = os.path.dirname(nearest)
        if not _inside(os.path.realpath(nearest), root):
            raise InvalidInput(f"{{field}} {value!r} leaves the project through a symlink", field="paths")
    return "/".join(parts)


def _inside(resolved: str, root: str) -> bool:
    """Whether a resolved path is `root` or below it."""
    return resolved == root or fsutil.inside(resolved, root)
