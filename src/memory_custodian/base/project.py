"""Where a project's memory lives: the project root and its memory folder under `docs/`.

Plain string paths (`os.path`): `Memory.open` runs in every hook process, and importing `pathlib`
costs a fresh process 3-4 ms (measured). `Path.resolve()` is `os.path.realpath` underneath.
"""

from __future__ import annotations

import os

from .errors import InvalidInput, NotFound
from .fsutil import check_name_lengths

DEFAULT_MEMORY_DIR = "docs/memory"


def find_project_root(start=None, memory_dir: str = DEFAULT_MEMORY_DIR, within_repository: bool = True) -> str:
    """The nearest ancestor of `start` (default: cwd) holding `<memory_dir>/manifest.md`, within the git
    repository `start` is in (its top level is the last folder looked at), else `start`.

    Memory is carried by its repository's history, so a command run inside a nested repository (a
    submodule, a clone inside another project's checkout) never reads or writes the outer one's:
    without a memory folder of its own it says so, where it used to write notes into the outer ledger.
    `within_repository=False`: past repository boundaries too (a hook, whose session is the outer
    project's, as its last resort)."""
    here = os.path.realpath(os.path.expanduser(os.fspath(start or ".")))
    candidate = here
    while True:
        if os.path.isfile(os.path.join(candidate, memory_dir, "manifest.md")):
            return candidate
        if within_repository and os.path.exists(os.path.join(candidate, ".git")):  # the top level: memory stops here
            return here
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return here
        candidate = parent


def git_top_level(start: str) -> str | None:
    """The nearest ancestor of `start` holding `.git` (a folder, or a worktree's file), or None."""
    candidate = start
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return None
        candidate = parent


def init_root(start=None, memory_dir: str = DEFAULT_MEMORY_DIR) -> tuple[str, str | None]:
    """Where `init` without a project root writes, and a note when that is not `start` (default: cwd).

    The folder an agent starts in is the repository's top level, so from a subdirectory that is where
    memory and the host files go; a folder that already holds the memory is kept. Outside a repository,
    and where the top level would be the filesystem root or the home folder, nothing is guessed.
    """
    here = os.path.realpath(os.path.expanduser(os.fspath(start or ".")))
    existing = find_project_root(here, memory_dir)
    if os.path.isfile(os.path.join(existing, memory_dir, "manifest.md")):
        return existing, None if existing == here else f"the memory folder is at {existing}; using it"
    top = git_top_level(here)
    if top is None:
        raise InvalidInput(f"{here} is not inside a git repository, so init does not guess where the agent "
                           "starts: pass {field} DIR (the folder your agent is started in), or run `git init` "
                           "there first", field="project_root")
    home = os.path.realpath(os.path.expanduser("~"))
    if top in (os.path.dirname(top), home):
        where = "the filesystem root" if top == os.path.dirname(top) else "your home folder"
        raise InvalidInput(f"the git repository here is {where} ({top}); init writes there only when asked: "
                           "pass {field} DIR", field="project_root")
    if top == here:
        return top, None
    inside = os.path.relpath(here, top)
    return top, f"using the repository's top level {top} (you are in {inside}), where the agent starts"


def memory_dir_parts(raw: str) -> list[str]:
    """The parts of a `--memory-dir` value, checked: relative, POSIX, under `docs/`, no `..`."""
    if "\\" in raw or (len(raw) > 1 and raw[1] == ":"):
        raise InvalidInput(f"{{field}} {raw!r} must be a relative POSIX path under docs/, such as docs/memory",
                           field="memory_dir")
    parts = [p for p in raw.split("/") if p not in ("", ".")]  # as PurePosixPath(raw).parts
    if raw.startswith("/") or ".." in parts:
        raise InvalidInput(f"{{field}} {raw!r} must be a relative path under docs/ without '..', such as docs/memory",
                           field="memory_dir")
    if len(parts) < 2 or parts[0] != "docs":
        raise InvalidInput(f"{{field}} {raw!r} must stay under docs/, such as docs/memory", field="memory_dir")
    return parts


def resolve_memory_dir(project_root, memory_dir: str | None = None) -> str:
    """The memory folder, which must be a sub-folder of `docs/` inside the project."""
    raw = memory_dir or DEFAULT_MEMORY_DIR
    check_name_lengths(raw)
    parts = memory_dir_parts(raw)
    root = os.path.realpath(os.fspath(project_root))
    path = os.path.join(root, *parts)
    docs = os.path.realpath(os.path.join(root, "docs"))
    resolved = os.path.realpath(path)
    if not resolved.startswith(docs.rstrip(os.sep) + os.sep):
        raise InvalidInput(f"{{field}} {raw!r} resolves outside docs/ (a symlink?); use a real folder under docs/",
                           field="memory_dir")
    return path


def require_memory_dir(memory_dir):
    if not os.path.isfile(os.path.join(os.fspath(memory_dir), "manifest.md")):
        raise NotFound(
            "no memory folder here (manifest.md is missing) — run {verb:init} first, or pass {field}",
            path=str(memory_dir),
            field="project_root",
        )
    return memory_dir
