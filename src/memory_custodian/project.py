"""Where a project's memory lives: the project root and its memory folder under `docs/`."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from .errors import InvalidInput, NotFound

DEFAULT_MEMORY_DIR = "docs/memory"


def find_project_root(start: Path | str | None = None, memory_dir: str = DEFAULT_MEMORY_DIR) -> Path:
    """The nearest ancestor of `start` (default: cwd) holding `<memory_dir>/manifest.md`, else `start`."""
    here = Path(start or ".").expanduser().resolve()
    for candidate in (here, *here.parents):
        if (candidate / memory_dir / "manifest.md").is_file():
            return candidate
    return here


def resolve_memory_dir(project_root: Path, memory_dir: str | None = None) -> Path:
    """The memory folder, which must be a sub-folder of `docs/` inside the project."""
    raw = memory_dir or DEFAULT_MEMORY_DIR
    if "\\" in raw or (len(raw) > 1 and raw[1] == ":"):
        raise InvalidInput(f"--memory-dir {raw!r} must be a relative POSIX path under docs/, such as docs/memory")
    rel = PurePosixPath(raw)
    if rel.is_absolute() or ".." in rel.parts:
        raise InvalidInput(f"--memory-dir {raw!r} must be a relative path under docs/ without '..', such as docs/memory")
    if len(rel.parts) < 2 or rel.parts[0] != "docs":
        raise InvalidInput(f"--memory-dir {raw!r} must stay under docs/, such as docs/memory")
    root = Path(project_root).resolve()
    path = root.joinpath(*rel.parts)
    docs = (root / "docs").resolve()
    resolved = path.resolve()
    if docs not in resolved.parents:
        raise InvalidInput(f"--memory-dir {raw!r} resolves outside docs/ (a symlink?); use a real folder under docs/")
    return path


def require_memory_dir(memory_dir: Path) -> Path:
    if not (memory_dir / "manifest.md").is_file():
        raise NotFound(
            "no memory folder here (manifest.md is missing) — run `memory-custodian init` first, "
            "or pass --project-root",
            path=str(memory_dir),
        )
    return memory_dir
