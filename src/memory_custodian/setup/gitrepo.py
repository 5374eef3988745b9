"""Running git for the setup: its config, its folder, the top level of a working tree."""

from __future__ import annotations

import os
import subprocess

from ..base.errors import Corrupt


def git(root: str, *args: str, check: bool = True, text: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=text)
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace") if isinstance(proc.stderr, bytes) else proc.stderr
        raise Corrupt(f"`git {' '.join(args)}` failed: {' '.join(err.split())[:200]}")
    return proc


def git_dir(root: str) -> str | None:
    """The repository's git folder, or None outside a repository (or without git installed)."""
    try:
        proc = git(root, "rev-parse", "--absolute-git-dir", check=False)
    except FileNotFoundError:
        return None
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def shards_at(commit: str, memory_rel: str):
    """(name, bytes) of each ledger shard in `commit`'s tree (run at the repository's top level)."""
    listing = git(".", "ls-tree", "-r", "-z", "--name-only", commit, "--", f"{memory_rel}/ledger/", text=False)
    for raw in listing.stdout.split(b"\0"):
        name = raw.decode("utf-8", "surrogateescape")
        if name.endswith(".jsonl"):
            yield os.path.basename(name), git(".", "cat-file", "blob", f"{commit}:{name}", text=False).stdout
