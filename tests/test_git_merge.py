"""Ledger shards under real git: branches that each record notes merge cleanly (both sides' events) either way."""

from __future__ import annotations

import shutil

import pytest

from memory_custodian.memory import Memory

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def commit_all(git, repo, message):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def make_repo(git, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    memory = Memory.open(repo)
    memory.init()
    assert "ledger/*.jsonl merge=memory-custodian-ledger" in (repo / ".gitattributes").read_text()
    return repo, memory


def merged_clone(git, tmp_path, repo, name, ours, theirs):
    clone = tmp_path / name
    git(tmp_path, "clone", "-q", str(repo), name)
    git(clone, "checkout", "-q", ours)
    from memory_custodian.setup.merge_drivers import register

    register(str(clone))  # what each teammate's `init` does once in a clone
    proc = git(clone, "merge", "--no-edit", f"origin/{theirs}", check=False)
    unmerged = git(clone, "diff", "--name-only", "--diff-filter=U").stdout
    assert proc.returncode == 0 and not unmerged, f"merge conflict: {proc.stdout}{proc.stderr}"
    return Memory.open(clone)


def test_two_branches_recording_notes_merge_to_the_union_either_way(git, tmp_path):
    repo, memory = make_repo(git, tmp_path)
    base = memory.remember("Base note on main", kind="directive")
    commit_all(git, repo, "base")
    git(repo, "checkout", "-q", "-b", "a")
    a_notes = [memory.remember(f"Note {i} from branch a", kind="gotcha").id for i in range(3)]
    memory.flag_stale(base.id, reason="checked on branch a")
    commit_all(git, repo, "a")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "b")
    b_notes = [memory.remember(f"Note {i} from branch b", kind="finding").id for i in range(3)]
    commit_all(git, repo, "b")

    ab = merged_clone(git, tmp_path, repo, "ab", "a", "b")
    ba = merged_clone(git, tmp_path, repo, "ba", "b", "a")
    for merged in (ab, ba):
        rep = merged.ledger().load()
        assert rep.problems == []
        assert set(rep.notes) == {base.id, *a_notes, *b_notes}
        assert rep.notes[base.id].state == "stale"
    shard_ab = sorted((ab.memory_dir / "ledger").glob("*.jsonl"))[0].read_text()
    shard_ba = sorted((ba.memory_dir / "ledger").glob("*.jsonl"))[0].read_text()
    assert shard_ab != shard_ba  # git kept each side's line order...
    ab.export()
    ba.export()
    # ...and the mirror does not care
    assert (ab.memory_dir / "MEMORY.md").read_bytes() == (ba.memory_dir / "MEMORY.md").read_bytes()
    assert ab.export(check=True).up_to_date


def test_a_forgotten_note_stays_forgotten_after_merging_a_branch_that_still_has_it(git, tmp_path):
    repo, memory = make_repo(git, tmp_path)
    keep = memory.remember("An ordinary note", kind="finding")
    secret = memory.remember("Text that must go: the staging host name", kind="finding")
    commit_all(git, repo, "base")
    git(repo, "checkout", "-q", "-b", "a")
    memory.forget_note(secret.id)
    a_note = memory.remember("Recorded on a after the forget").id
    commit_all(git, repo, "a: forget")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "b")
    # b still has the note and keeps working with it
    b_note = memory.remember("Recorded on b").id
    commit_all(git, repo, "b")

    mirrors = []
    for name, ours, theirs in (("ab", "a", "b"), ("ba", "b", "a")):
        merged = merged_clone(git, tmp_path, repo, name, ours, theirs)
        shards = "".join(p.read_text() for p in (merged.memory_dir / "ledger").glob("*.jsonl"))
        assert "staging host" not in shards  # a removed the line, b did not touch it: it stays removed
        rep = merged.ledger().load()
        assert rep.notes[secret.id].state == "forgotten"  # and the content-free forget is there
        assert {keep.id, a_note, b_note} <= {i for i, n in rep.notes.items() if n.state == "active"}
        assert all(n.id != secret.id for n in merged.notes())
        merged.export()
        text = (merged.memory_dir / "MEMORY.md").read_text()
        assert "staging host" not in text and f"#{secret.id}" not in text
        mirrors.append(text)
    assert mirrors[0] == mirrors[1]


def test_both_branches_starting_the_same_new_shard_merge_cleanly(git, tmp_path):
    """A new month's shard created on both sides is an add/add: the ledger driver takes both."""
    repo, memory = make_repo(git, tmp_path)
    (repo / "README").write_text("x\n")
    commit_all(git, repo, "base without any shard")
    git(repo, "checkout", "-q", "-b", "a")
    a = memory.remember("first shard line on a").id
    commit_all(git, repo, "a")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "b")
    b = memory.remember("first shard line on b").id
    commit_all(git, repo, "b")
    merged = merged_clone(git, tmp_path, repo, "ab", "a", "b")
    assert {a, b} <= set(merged.ledger().load().notes)
