"""Whether a note anchored to path globs concerns the paths a task touches."""

from __future__ import annotations

from fnmatch import fnmatchcase

_GLOB_CHARS = set("*?[")


def _norm(path: str) -> str:
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path


def path_matches(glob: str, path: str) -> bool:
    """`glob` (a note's anchor) concerns `path` (a touched file or folder)."""
    g, p = _norm(glob), _norm(path)
    if not g or not p:
        return False
    if g.rstrip("/") == p.rstrip("/"):
        return True
    if _GLOB_CHARS & set(g):
        if fnmatchcase(p, g) or fnmatchcase(p, g.replace("**/", "")):
            return True
        # a touched folder that holds files the glob names
        fixed = g.split("*")[0].split("?")[0].split("[")[0]
        return fixed.startswith(p.rstrip("/") + "/")
    g_dir, p_dir = g.rstrip("/") + "/", p.rstrip("/") + "/"
    return p.startswith(g_dir) or g.startswith(p_dir)


def any_match(globs, paths) -> bool:
    return any(path_matches(g, p) for g in globs for p in paths)


def path_prefix(glob: str) -> str:
    """The literal folder (or file) a glob is anchored under: `src/a/*.py` -> `src/a`, `*.md` -> ``."""
    g = _norm(glob)
    cut = min((g.index(c) for c in _GLOB_CHARS if c in g), default=None)
    if cut is not None:
        g = g[:cut]
        g = g[: g.rfind("/") + 1] if "/" in g else ""
    return g.rstrip("/")


def candidate_prefixes(path: str) -> tuple[list[str], tuple[str, str]]:
    """For a touched path: the prefixes that may concern it (its ancestors and itself), and the
    half-open range of prefixes below it (anchors inside a touched folder)."""
    p = _norm(path).rstrip("/")
    parts = p.split("/") if p else []
    ancestors = [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return ancestors, (p + "/", p + "0")  # "0" sorts right after "/"
