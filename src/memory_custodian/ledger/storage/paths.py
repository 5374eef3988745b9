"""Whether a note anchored to path globs concerns the paths a task touches.

Both sides may be a file, a folder or a glob, and `.` is the whole project. An anchor concerns a
touched path when some path could be named by both: a glob stands for the paths it matches, and a
folder (or a path whose last part has no extension, so may be one) for everything under it too.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import lru_cache

_GLOB_CHARS = set("*?[")


def _norm(path: str) -> str:
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path


def _is_root(path: str) -> bool:
    """`.` or `./`: the whole project."""
    return path.rstrip("/") in ("", ".")


@lru_cache(maxsize=65536)
def path_matches(glob: str, path: str) -> bool:
    """`glob` (a note's anchor) concerns `path` (a touched file, folder or glob)."""
    if not glob.strip() or not path.strip():
        return False
    g, p = _norm(glob), _norm(path)
    if _is_root(g) or _is_root(p):
        return True
    if g.rstrip("/") == p.rstrip("/"):
        return True
    g_glob, p_glob = bool(_GLOB_CHARS & set(g)), bool(_GLOB_CHARS & set(p))
    if g_glob:
        if fnmatchcase(p, g) or fnmatchcase(p, g.replace("**/", "")):
            return True
        # a touched folder that holds files the glob names
        fixed = g.split("*")[0].split("?")[0].split("[")[0]
        if fixed.startswith(p.rstrip("/") + "/"):
            return True
    else:
        g_dir, p_dir = g.rstrip("/") + "/", p.rstrip("/") + "/"
        if p.startswith(g_dir) or g.startswith(p_dir):
            return True
        if not p_glob:
            return False
    return _overlap(_nfa(g), _nfa(p))


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


ROOT_PREFIXES = ("", ".")  # what path_prefix gives an anchor at the whole project (`./`, `.`)
TOP = "\U0010ffff"  # sorts after every prefix: the upper end of "anything"


def candidate_prefixes(path: str) -> tuple[list[str], tuple[str, str]]:
    """For a touched path (or glob): the anchor prefixes that may concern it (the whole project,
    its ancestors and itself), and the half-open range of prefixes below it (anchors inside a
    touched folder). A glob counts from its literal folder; the whole project reaches every prefix."""
    p = path_prefix(path) if not _is_root(_norm(path)) else ""
    parts = p.split("/") if p else []
    ancestors = list(ROOT_PREFIXES) + ["/".join(parts[: i + 1]) for i in range(len(parts))]
    if not p:
        return ancestors, ("", TOP)
    return ancestors, (p + "/", p + "0")  # "0" sorts right after "/"


# A glob as a small NFA, so that two globs can be intersected: fnmatch's language (`*` and `?`
# match any character, `/` included; `[...]`, `[!...]`), `**/` also matching nothing.
_ANY = ("any",)


def _parse(glob: str) -> list:
    """Tokens: ("lit", c), _ANY, ("cls", negated, ((lo, hi), ...)), "*" and "**/"."""
    out: list = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("**/")
            i += 3
        elif c == "*":
            if not out or out[-1] != "*":
                out.append("*")
            i += 1
        elif c == "?":
            out.append(_ANY)
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and glob[j] == "!":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:
                out.append(("lit", "["))
                i += 1
                continue
            body = glob[i + 1:j]
            neg = body.startswith("!")
            body = body[1:] if neg else body
            ranges, k = [], 0
            while k < len(body):
                if k + 2 < len(body) and body[k + 1] == "-":
                    if body[k] <= body[k + 2]:
                        ranges.append((body[k], body[k + 2]))
                    k += 3
                else:
                    ranges.append((body[k], body[k]))
                    k += 1
            out.append(("cls", neg, tuple(ranges)))
            i = j + 1
        else:
            out.append(("lit", c))
            i += 1
    return out


def _may_be_folder(path: str) -> bool:
    """A path ending in `/`, or whose last part has no extension (`src/store`, `lib/**`, `.github`)."""
    if path.endswith("/"):
        return True
    last = path.rsplit("/", 1)[-1]
    return "." not in last[1:]


@lru_cache(maxsize=4096)
def _nfa(path: str) -> tuple:
    """(edges, closures): edges[s] = ((predicate, target), ...); closures[s] = the states reachable
    from s without reading; the accepting state is len(edges). Accepts what `path` names."""
    edges: list[list] = []
    eps: list[list[int]] = []

    def state() -> int:
        edges.append([])
        eps.append([])
        return len(edges) - 1

    for tok in _parse(path.rstrip("/")):
        s = state()
        if tok == "*":
            edges[s].append((_ANY, s))
            eps[s].append(s + 1)
        elif tok == "**/":
            loop = state()  # s: skip, or any characters then `/`
            eps[s] += [loop, s + 2]
            edges[loop] += [(_ANY, loop), (("lit", "/"), s + 2)]
        else:
            edges[s].append((tok, s + 1))
    if _may_be_folder(path):
        s = state()  # optionally `/` and anything below
        loop = state()
        eps[s].append(s + 2)
        edges[s].append((("lit", "/"), loop))
        edges[loop].append((_ANY, loop))
        eps[loop].append(s + 2)
    end = len(edges)
    eps.append([])
    closures = []
    for s in range(end + 1):
        seen, todo = {s}, [s]
        while todo:
            for t in eps[todo.pop()]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        closures.append(tuple(seen))
    return tuple(tuple(e) for e in edges), tuple(closures)


def _holds(pred, c: str) -> bool:
    if pred[0] == "any":
        return True
    if pred[0] == "lit":
        return pred[1] == c
    return pred[1] != any(lo <= c <= hi for lo, hi in pred[2])


def _meet(a, b) -> bool:
    """Whether some character satisfies both predicates."""
    if a[0] == "any":
        return b[0] != "cls" or b[1] or bool(b[2])
    if b[0] == "any":
        return _meet(b, a)
    if a[0] == "lit":
        return _holds(b, a[1])
    if b[0] == "lit":
        return _holds(a, b[1])
    if a[1] and b[1]:
        return True  # two negated classes exclude finitely many characters
    if a[1]:
        a, b = b, a
    # a is positive: the least character of a range of a that is in (or out of) b is one of these
    cands = [lo for lo, _ in a[2]] + [lo for lo, _ in b[2]] + [chr(ord(hi) + 1) for _, hi in b[2] if hi < TOP]
    return any(_holds(a, c) and _holds(b, c) for c in cands)


def _overlap(one: tuple, two: tuple) -> bool:
    """Whether two NFAs accept a common string: a search over pairs of states."""
    (e1, c1), (e2, c2) = one, two
    end1, end2 = len(e1), len(e2)
    todo = [(a, b) for a in c1[0] for b in c2[0]]
    seen = set(todo)
    while todo:
        a, b = todo.pop()
        if a == end1 and b == end2:
            return True
        if a == end1 or b == end2:
            continue
        for pa, ta in e1[a]:
            for pb, tb in e2[b]:
                if _meet(pa, pb):
                    for x in c1[ta]:
                        for y in c2[tb]:
                            if (x, y) not in seen:
                                seen.add((x, y))
                                todo.append((x, y))
    return False
