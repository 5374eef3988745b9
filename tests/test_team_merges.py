"""A team's merges under real git: what one branch forgot never comes back through a merge with a branch that
edited it (curated files and ledger alike, both directions), and a one-sided delete is not a conflict."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import run_cli

from memory_custodian.memory import Memory
from memory_custodian.setup.merge_drivers import register

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SECRET = "Card numbers never reach the staging host"
REWORDED = "Card numbers never reach the staging host or its backups"
NOTE = "The staging host is billing-stg-7 behind the office VPN"


def git(cwd, *args, check=True):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x", GIT_CONFIG_NOSYSTEM="1")
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def every_file_text(root) -> str:
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            with open(os.path.join(folder, name), "rb") as fh:
                out.append(fh.read().decode("utf-8", "replace"))
    return "\n".join(out)


@pytest.fixture(scope="module")
def forgotten_on_main_edited_on_a_branch(tmp_path_factory):
    """main forgets a constraint (hard) and a ledger note; the branch rewords the one and supersedes the other."""
    root = tmp_path_factory.mktemp("team") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    memory = Memory.open(root)
    memory.init(extended=True)
    memory.add(SECRET, type="constraint")
    memory.add("Refunds go through the payments service", type="constraint")
    note = memory.remember(NOTE, kind="finding")
    memory.export()  # the committed MEMORY.md mirror, kept up to date by every write
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "branch")
    constraints = root / "docs/memory/constraints.md"
    constraints.write_text(constraints.read_text().replace(SECRET, REWORDED))
    memory.supersede(note.id, NOTE + " (port 8443)", reason="the port moved")
    memory.add("Every refund carries an idempotency key", type="constraint")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "branch: reword, supersede, add")
    git(root, "checkout", "-q", "main")
    memory.forget("staging host", mode="hard", apply=True)
    memory.forget_note(note.id)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "main: forget")
    assert SECRET not in every_file_text(root) and "billing-stg-7" not in every_file_text(root)
    return root


@pytest.mark.parametrize("ours,theirs", [("main", "branch"), ("branch", "main")])
def test_a_forget_wins_over_an_edit_through_a_real_merge_and_leaves_no_copy(forgotten_on_main_edited_on_a_branch,
                                                                             tmp_path, ours, theirs):
    origin = forgotten_on_main_edited_on_a_branch
    clone = tmp_path / f"clone-{ours}"
    git(tmp_path, "clone", "-q", "-b", ours, str(origin), str(clone))
    git(clone, "branch", "-q", theirs, f"origin/{theirs}")
    register(str(clone))  # each teammate's `init` registers the drivers once in a clone
    proc = git(clone, "merge", "--no-edit", theirs, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = every_file_text(clone)
    assert "staging host" not in text and "billing-stg-7" not in text  # no file holds it, the ledger included
    constraints = (clone / "docs/memory/constraints.md").read_text()
    assert "Every refund carries an idempotency key" in constraints and "payments service" in constraints
    memory = Memory.open(clone)
    assert not memory.recall("staging host billing").hits
    pack = run_cli("read", "--task", "implementation", cwd=clone)
    assert "staging" not in pack.stdout and "idempotency key" in pack.stdout
    export = run_cli("export", "--check", cwd=clone)
    assert export.returncode == 0, export.stdout + export.stderr
    doctor = run_cli("doctor", "--repair", "--yes", cwd=clone)
    assert "staging host" not in every_file_text(clone) and "incomplete" not in doctor.stdout + doctor.stderr


def test_check_names_a_forgotten_entry_that_came_back(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init(extended=True)
    memory.add(SECRET, type="constraint")
    before = (memory.memory_dir / "constraints.md").read_text()
    memory.forget("staging host", mode="hard", apply=True)
    assert "forgotten-entry-back" not in run_cli("check", "--project-root", str(tmp_path)).stdout
    (memory.memory_dir / "constraints.md").write_text(before)  # a copy pasted back, a rebase that could not see it
    check = run_cli("check", "--project-root", str(tmp_path))
    assert check.returncode == 1 and "forgotten-entry-back" in check.stdout
    assert "docs/memory/constraints.md:" in check.stdout


def test_one_branch_deleting_and_another_adding_is_no_conflict_and_no_resurrection(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    memory = Memory.open(root)
    memory.init()
    for text in ("Keep the daemon lock across restarts", "Old rule about the legacy queue", "Tag every release"):
        memory.add(text, type="constraint")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "a")
    constraints = root / "docs/memory/constraints.md"
    constraints.write_text("".join(line for line in constraints.read_text().splitlines(keepends=True)
                                   if "legacy queue" not in line))  # a hand edit deletes one entry
    git(root, "commit", "-qam", "a: delete")
    git(root, "checkout", "-q", "main")
    git(root, "checkout", "-q", "-b", "b")
    memory.add("Sign every release tag", type="constraint")
    git(root, "commit", "-qam", "b: add")
    for ours, theirs in (("a", "b"), ("b", "a")):
        git(root, "checkout", "-q", ours)
        proc = git(root, "merge", "--no-edit", theirs, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        merged = constraints.read_text()
        assert "legacy queue" not in merged and "Sign every release tag" in merged and "<<<<<<<" not in merged
        git(root, "reset", "-q", "--hard", "HEAD~1" if ours == "a" else "b")
