"""Memory's history as git holds it, read-only: which commits to compare, and the memory folder in each.

Every call is plumbing (`rev-parse`, `merge-base`, `ls-tree`, `cat-file --batch`, `log`): nothing here
changes the repository, the index or the working tree. A shallow clone is read as far as it goes, and
where the history a comparison needs is not in it, the error says what to fetch.
"""

from __future__ import annotations

import os
import subprocess

from ..base.errors import InvalidInput, NotFound, Refused
from ..ledger.storage.ids import ms_to_iso

WORKING_TREE = "working tree"
# git's own commands (not this tool's): what a shallow clone must fetch before a merge base can be found
FETCH_MORE = ("this clone is shallow and the merge base of {head} and {base} is not in it: fetch more history "
              "(git fetch --deepen=200 {remote}, or git fetch --unshallow {remote}), or name BASE as a commit")
DEFAULT_BRANCHES = ("refs/remotes/origin/HEAD", "refs/heads/main", "refs/heads/master", "refs/remotes/origin/main",
                    "refs/remotes/origin/master")


class Repo:
    """The git repository holding a memory folder: its top level and the folder's path inside it."""

    def __init__(self, root: str, memory_dir: str):
        self.top = self._toplevel(root)
        self.memory_rel = os.path.relpath(os.path.realpath(memory_dir), self.top).replace(os.sep, "/")

    @staticmethod
    def _toplevel(root: str) -> str:
        try:
            proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True)
        except FileNotFoundError as exc:
            raise Refused("git is not installed: memory's history is read from git") from exc
        if proc.returncode != 0 or not proc.stdout.strip():
            raise Refused(f"{root} is not inside a git repository: memory's history is read from git")
        return os.path.realpath(proc.stdout.strip())

    def git(self, *args: str, check: bool = True, text: bool = True, stdin=None) -> subprocess.CompletedProcess:
        proc = subprocess.run(["git", *args], cwd=self.top, capture_output=True, text=text, input=stdin)
        if check and proc.returncode != 0:
            err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode("utf-8", "replace")
            raise Refused(f"git {args[0]} failed: {' '.join(err.split())[:240]}")
        return proc

    @property
    def shallow(self) -> bool:
        return self.git("rev-parse", "--is-shallow-repository", check=False).stdout.strip() == "true"

    def commit(self, ref: str) -> str:
        """The commit `ref` names, or a loud error saying what this clone lacks."""
        if ref.startswith("-"):
            raise InvalidInput(f"{ref!r} is not a commit: a revision cannot start with '-'", field="base")
        proc = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
        if proc.returncode != 0:
            more = " (this clone is shallow: fetch it, e.g. git fetch origin BRANCH)" if self.shallow else ""
            raise NotFound(f"{ref!r} names no commit in this repository{more}")
        return proc.stdout.strip()

    def default_branch(self) -> str:
        """The branch a pull request is compared with: origin's HEAD, else main or master, local or origin's;
        never the branch being compared (a clone of one branch points origin's HEAD at it)."""
        current = self.git("symbolic-ref", "--quiet", "--short", "HEAD", check=False).stdout.strip()
        for ref in DEFAULT_BRANCHES:
            proc = self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
            if proc.returncode != 0:
                continue
            target = self.git("symbolic-ref", "--quiet", ref, check=False).stdout.strip() or ref
            name = self.git("rev-parse", "--abbrev-ref", target, check=False).stdout.strip() or target
            if ref.endswith("/HEAD") and current and name == f"origin/{current}":
                continue  # a one-branch clone's origin/HEAD names the branch itself
            return name
        raise NotFound("no default branch here (no origin/HEAD, main or master) to compare with: name {field} "
                       "(a branch or commit)", field="base")

    def merge_base(self, head: str, base: str) -> str:
        proc = self.git("merge-base", head, base, check=False)
        found = proc.stdout.split()
        if proc.returncode == 0 and found:
            return found[0]
        if self.shallow:
            remote = self.git("remote", check=False).stdout.split()
            raise Refused(FETCH_MORE.format(head=head, base=base, remote=remote[0] if remote else "origin"))
        raise Refused(f"{head} and {base} share no history: name {{field}} as a commit to compare with", field="base")

    def time_of(self, commit: str) -> str:
        """The commit's committer time, UTC ISO with milliseconds (what expiry dates are compared with)."""
        seconds = int(self.git("show", "-s", "--format=%ct", commit).stdout.strip())
        return ms_to_iso(seconds * 1000)

    def files_at(self, commit: str) -> dict[str, bytes]:
        """Every file under the memory folder in `commit`'s tree, by path relative to the folder."""
        prefix = self.memory_rel.rstrip("/") + "/"
        listing = self.git("ls-tree", "-r", "-z", "--full-tree", commit, "--", prefix, text=False).stdout
        names = [raw.decode("utf-8", "surrogateescape").split("\t", 1) for raw in listing.split(b"\0") if raw]
        blobs = [(path, meta.split()[2]) for meta, path in names if meta.split()[1] == "blob"]
        return dict(zip((p[len(prefix):] for p, _ in blobs), self.blobs([sha for _, sha in blobs]), strict=True))

    def blobs(self, shas: list[str]) -> list[bytes]:
        """The contents of many blobs in one `cat-file --batch` process."""
        if not shas:
            return []
        out = self.git("cat-file", "--batch", text=False, stdin="".join(s + "\n" for s in shas).encode()).stdout
        found, at = [], 0
        for _ in shas:
            end = out.index(b"\n", at)
            head = out[at:end].split()
            size = int(head[2]) if len(head) == 3 else 0
            found.append(out[end + 1:end + 1 + size])
            at = end + 1 + size + (1 if len(head) == 3 else 0)
        return found

    def head(self) -> str:
        """HEAD's commit, or "" in a repository without one."""
        return self.git("rev-parse", "--verify", "--quiet", "HEAD", check=False).stdout.strip()

    def log_text(self, path: str, *, raw: bool, limit: int | None = None, skip: int = 0) -> str:
        """`git log` of `path` (from the top level), one record a commit: `\x1e` then sha, time, author and
        subject split by `\x1f`, then the changed names (`raw`: their old and new blob ids instead)."""
        args = ["log", "--no-color", "--no-renames", "--format=%x1e%H%x1f%ct%x1f%an%x1f%s"]
        args += ["--raw", "--no-abbrev"] if raw else ["--name-only"]
        args += [f"-n{limit}"] if limit else []
        args += [f"--skip={skip}"] if skip else []
        return self.git(*args, "--", path, check=False).stdout


def working_files(memory_dir: str) -> dict[str, bytes]:
    """The memory folder on disk as `Repo.files_at` gives a commit's: every file but the private cache."""
    found: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(memory_dir):
        rel = os.path.relpath(folder, memory_dir).replace(os.sep, "/")
        dirs[:] = sorted(d for d in dirs if not (rel == "." and d == ".cache") and not d.startswith(".git"))
        for name in sorted(files):
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as fh:
                    found[name if rel == "." else f"{rel}/{name}"] = fh.read()
    return found
