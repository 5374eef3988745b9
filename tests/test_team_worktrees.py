"""Parallel agents in git worktrees: one agent in each, writing at the same time, merged back — nothing lost,
no conflict, and each worktree keeps its own index."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from memory_custodian.memory import Memory

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

AGENT = """
import sys
from memory_custodian.memory import Memory
name = sys.argv[1]
memory = Memory.open(".")
for i in range(8):
    memory.remember(f"Agent {name} finding {i}: the {name} cache warms in {i} seconds", kind="finding", actor="agent")
memory.add(f"Agent {name} keeps its queue in SQLite", type="decision", reasons=[f"measured by {name}"])
memory.add(f"Agent {name} never calls the payment API twice", type="constraint")
"""


def git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x", GIT_CONFIG_NOSYSTEM="1")
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_agents_in_parallel_worktrees_merge_back_with_nothing_lost(tmp_path):
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    memory = Memory.open(main)
    memory.init()  # registers the drivers in .git/config, which every worktree shares
    memory.remember("Base directive: run the tests before pushing", kind="directive")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "base")
    trees = {name: tmp_path / f"wt-{name}" for name in ("a", "b")}
    for name, path in trees.items():
        git(main, "worktree", "add", "-q", "-b", f"agent-{name}", str(path))
    agents = [subprocess.Popen([sys.executable, "-c", AGENT, name], cwd=path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for name, path in trees.items()]
    for proc in agents:  # both write at the same time, each in its own checkout
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    for name, path in trees.items():
        own = Memory.open(path)
        found = {h.note.title for h in own.recall("cache warms", limit=50).hits}
        assert len(found) == 8 and all(f"Agent {name}" in t for t in found)  # its own index: not the other's
        assert (path / "docs/memory/.cache/index.sqlite").is_file()
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"agent {name}")
    for name in trees:
        git(main, "merge", "--no-edit", "-q", f"agent-{name}")  # asserts: no conflict
    assert git(main, "status", "--porcelain") == ""
    merged = Memory.open(main)
    titles = {h.note.title for h in merged.recall("cache warms", limit=50).hits}
    assert len(titles) == 16
    decisions = (main / "docs/memory/decisions.md").read_text()
    constraints = (main / "docs/memory/constraints.md").read_text()
    for name in trees:
        assert f"Agent {name} keeps its queue in SQLite" in decisions
        assert f"Agent {name} never calls the payment API twice" in constraints
    assert "<<<<<<<" not in decisions + constraints
    assert merged.ledger().load().problems == []
