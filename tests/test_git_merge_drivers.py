"""Curated files and the export mirror under real git: branches that each add entries merge with no
conflict through the drivers `init` registers; an entry both branches changed is one marked entry
that `check` reports and no hook passes on."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import describe_brief, run_cli

from memory_custodian.memory import Memory

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def commit(git, repo, message):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def repo(git, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    memory = Memory.open(root)
    assert memory.init(extended=True).merge_drivers == "registered"
    describe_brief(root)
    memory.enable("areas/store", ["src/store/**"])
    memory.export_enable()
    memory.remember("Base directive on main.", kind="directive")
    commit(git, root, "base")
    return root


def work_on(git, root, branch: str, n: int):
    """On a new branch from main: one entry of every kind and two ledger notes, committed."""
    git(root, "checkout", "-q", "main")
    git(root, "checkout", "-q", "-b", branch)
    memory = Memory.open(root)
    memory.add(f"Use engine {branch}{n} for the store.", "decision", reasons=[f"measured on branch {branch}"])
    memory.add(f"Never write the store from thread {branch}{n}.", "constraint")
    memory.add(f"library-{branch}{n}", "tombstone", reasons=[f"it leaked on branch {branch}"])
    memory.add(f"Candidate rule from branch {branch}.", "inbox")
    memory.add(f"The store on branch {branch} flushes every {n} seconds.", "area", area="store")
    ids = [memory.remember(f"Finding {i} recorded on branch {branch}.", kind="finding").id for i in range(2)]
    commit(git, root, f"work on {branch}")
    return ids


def merge(git, root, branch: str):
    proc = git(root, "merge", "--no-edit", branch, check=False)
    unmerged = git(root, "diff", "--name-only", "--diff-filter=U").stdout
    return proc, unmerged


def green(root):
    for args in (("check",), ("doctor",), ("export", "--check")):
        proc = run_cli(*args, "--project-root", str(root))
        assert proc.returncode == 0, (args, [line for line in proc.stdout.splitlines() if "FAIL" in line], proc.stderr)


def entries_in(root, branches, n=1):
    mem = root / "docs/memory"
    text = {name: (mem / name).read_text() for name in ("decisions.md", "constraints.md", "do-not-use.md",
                                                         "inbox.md", "areas/store.md")}
    for b in branches:
        assert f"Use engine {b}{n} for the store." in text["decisions.md"]
        assert f"Never write the store from thread {b}{n}." in text["constraints.md"]
        assert f"library-{b}{n}" in text["do-not-use.md"]
        assert f"Candidate rule from branch {b}." in text["inbox.md"]
        assert f"The store on branch {b} flushes every {n} seconds." in text["areas/store.md"]
    # newest first: every new decision above the one init wrote, which stays last
    decisions = text["decisions.md"]
    assert all(decisions.index(f"Use engine {b}{n}") < decisions.index("Keep project memory in the repository")
               for b in branches)
    return text


@pytest.mark.parametrize("branches", [("a", "b"), ("a", "b", "c")])
def test_branches_adding_entries_merge_without_conflict(git, repo, branches):
    notes = {b: work_on(git, repo, b, 1) for b in branches}
    git(repo, "checkout", "-q", "main")
    for b in branches:
        proc, unmerged = merge(git, repo, b)
        assert proc.returncode == 0 and not unmerged, proc.stdout + proc.stderr
    entries_in(repo, branches)
    green(repo)
    mirror = (repo / "docs/memory/MEMORY.md").read_text()
    assert all(f"[#{i}]" in mirror for ids in notes.values() for i in ids)
    assert "<<<<<<<" not in "".join(p.read_text() for p in (repo / "docs/memory").rglob("*.md"))


def test_a_clone_without_the_drivers_still_gets_gits_own_merge(git, repo, tmp_path):
    work_on(git, repo, "a", 1)
    work_on(git, repo, "b", 1)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), "clone")
    git(clone, "checkout", "-q", "a")
    proc = git(clone, "merge", "--no-edit", "origin/b", check=False)
    assert proc.returncode != 0 and "CONFLICT" in proc.stdout  # git's line merge, as before
    doctor = run_cli("doctor", "--project-root", str(clone))
    assert "merge driver" in doctor.stdout + doctor.stderr


def test_the_same_entry_changed_on_both_branches_is_one_marked_entry(git, repo):
    decisions = repo / "docs/memory/decisions.md"
    for branch, words in (("a", "Postgres"), ("b", "SQLite")):
        git(repo, "checkout", "-q", "main")
        git(repo, "checkout", "-q", "-b", branch)
        decisions.write_text(decisions.read_text().replace("as Markdown under", f"as Markdown ({words}) under"))
        commit(git, repo, branch)
    git(repo, "checkout", "-q", "a")
    proc, unmerged = merge(git, repo, "b")
    assert proc.returncode != 0 and unmerged.split() == ["docs/memory/decisions.md"]
    text = decisions.read_text()
    assert text.count("<<<<<<< ours") == 1 and "(Postgres)" in text and "(SQLite)" in text
    check = run_cli("check", "--project-root", str(repo))
    assert check.returncode == 1 and "docs/memory/decisions.md:" in check.stdout and "conflict-markers" in check.stdout
    hook = subprocess.run([sys.executable, "-m", "memory_custodian", "hook", "SessionStart"], cwd=repo,
                          input=json.dumps({"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart"}),
                          capture_output=True, text=True, timeout=60)
    context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "<<<<<<<" not in context and "=======" not in context and "conflict markers" in context.splitlines()[0]
    assert "Base directive on main." in context


def test_the_driver_is_registered_with_the_absolute_command(git, repo):
    from memory_custodian.base.launcher import current_launcher

    driver = git(repo, "config", "--get", "merge.memory-custodian-curated.driver").stdout.strip()
    assert driver == current_launcher().command(["merge-driver", "curated"]) + " %O %A %B %P"
    attributes = (repo / ".gitattributes").read_text().splitlines()
    assert attributes == ["docs/memory/ledger/*.jsonl merge=memory-custodian-ledger",
                          "docs/memory/**/*.md merge=memory-custodian-curated",
                          "docs/memory/MEMORY.md merge=memory-custodian-mirror", "docs/memory/forgotten.txt merge=union"]
