"""The merge matrix (`merge_model`): every curated file kind × every pair of operations × both directions,
each against the model; a sample of whole kinds through real `git merge` runs with the registered driver
(the full matrix under git: `benchmarks/bench_merge.py --matrix`); property tests over random histories."""

from __future__ import annotations

import os
import shutil
import subprocess

import merge_model as mm
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_custodian.curated.write.fingerprints import HEADER, fingerprint
from memory_custodian.curated.write.merge_entries import PAIRING_LIMIT, Forgotten, merge_entries
from memory_custodian.memory import Memory

GIT_SAMPLE = ("constraints.md", "changelog.md")  # a bullet kind and a dated-bullet kind (all seven: bench_merge)


def test_the_matrix_has_every_kind_and_pair():
    assert len(mm.KINDS) == 7 and mm.case_count() == 930
    assert set(mm.OPS) >= {"add", "edit", "delete", "move", "archive", "forget"} and ("count", "count") in mm.cells(
        "changelog.md")


@pytest.mark.parametrize("kind", sorted(mm.KINDS))
def test_every_cell_in_process_equals_the_model_in_both_directions(kind):
    wrong = []
    for pair in mm.cells(kind):
        base, one, two, fp_one, fp_two = mm.sides(kind, [pair])
        for ours, theirs, fps, ops, labels in ((one, two, (fp_one, fp_two), pair, ("one", "two")),
                                               (two, one, (fp_two, fp_one), pair[::-1], ("two", "one"))):
            got = merge_entries(base, ours, theirs, Forgotten(*fps))
            text, conflicts = mm.expected_text(kind, [ops], labels)
            if (got.text, got.conflicts) != (text, conflicts):
                wrong.append((ops, got.conflicts, conflicts))
    assert wrong == []
    # and all of them at once, one group each in one file: the cells do not disturb each other
    pairs = mm.cells(kind)
    base, one, two, fp_one, fp_two = mm.sides(kind, pairs)
    got = merge_entries(base, one, two, Forgotten(fp_one, fp_two))
    assert (got.text, got.conflicts) == mm.expected_text(kind, pairs)


def _git(cwd, *args, check=True):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x", GIT_CONFIG_NOSYSTEM="1")
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def build_matrix_repo(root, kinds) -> dict[str, list[tuple[str, str]]]:
    """A repository whose branches `one` and `two` apply every cell of `kinds` (one file each, one commit)."""
    from memory_custodian.setup.merge_drivers import register

    _git(root, "init", "-q", "-b", "main")
    memory = Memory.open(root)
    memory.init()
    register(str(root))
    folder = root / "docs/memory"
    (folder / "areas").mkdir(exist_ok=True)
    built = {kind: mm.cells(kind) for kind in kinds}
    versions = {kind: mm.sides(kind, pairs) for kind, pairs in built.items()}
    for i, branch in enumerate(("main", "one", "two")):
        if branch != "main":
            _git(root, "checkout", "-q", "-b", branch, "main")
        prints: set[str] = set()
        for kind, (base, one, two, fp_one, fp_two) in versions.items():
            (folder / kind).write_text((base, one, two)[i], encoding="utf-8")
            prints |= (set(), fp_one, fp_two)[i]
        if prints:
            (folder / "forgotten.txt").write_text(HEADER + "".join(p + "\n" for p in sorted(prints)), encoding="utf-8")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", branch)
    return built


def merged_by_git(root, ours: str, theirs: str, kinds) -> dict[str, str]:
    _git(root, "checkout", "-q", ours)
    _git(root, "merge", "--no-edit", theirs, check=False)
    out = {kind: (root / "docs/memory" / kind).read_text(encoding="utf-8") for kind in kinds}
    _git(root, "merge", "--abort", check=False)
    _git(root, "reset", "-q", "--hard", ours)
    return out


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_sample_of_whole_kinds_through_real_git_merge_in_both_directions(tmp_path):
    built = build_matrix_repo(tmp_path, GIT_SAMPLE)
    for ours, theirs, flip, labels in (("one", "two", False, ("one", "two")), ("two", "one", True, ("two", "one"))):
        got = merged_by_git(tmp_path, ours, theirs, GIT_SAMPLE)
        for kind, pairs in built.items():
            text, conflicts = mm.expected_text(kind, [p[::-1] for p in pairs] if flip else pairs, labels)
            assert got[kind] == text, (kind, ours)
            assert got[kind].count("<<<<<<< ours") == conflicts > 0


# ---- properties over random histories --------------------------------------------------------------

WORDS = ("refund", "ledger", "retry", "queue", "token", "cache", "daemon", "lock", "shard", "index", "budget")


@st.composite
def history(draw):
    """A bullet file and two sides, each a random series of edits, deletes, forgets, moves and adds."""
    n = draw(st.integers(2, 12))
    base = [f"Rule {i}: the {' '.join(draw(st.lists(st.sampled_from(WORDS), min_size=4, max_size=8)))} stays put"
            for i in range(n)]
    sides = []
    for side in ("one", "two"):
        items, forgot = list(base), set()
        for step in range(draw(st.integers(0, 6))):
            op = draw(st.sampled_from(("add", "edit", "delete", "forget", "move")))
            if op == "add" or not items:
                items.insert(draw(st.integers(0, len(items))), f"New {side} {step}: no {draw(st.sampled_from(WORDS))}")
                continue
            at = draw(st.integers(0, len(items) - 1))
            if op == "edit":
                items[at] += f" unless {side} says so"
            elif op == "move":
                items.insert(draw(st.integers(0, len(items) - 1)), items.pop(at))
            else:
                gone = items.pop(at)
                if op == "forget" and gone in base:
                    forgot.add(fingerprint(f"- {gone}.\n"))
        sides.append((items, forgot))
    return base, sides


def bullets(items) -> str:
    return "# Constraints\n\n" + "".join(f"- {t}.\n" for t in items)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history())
def test_a_change_made_on_one_side_only_is_taken_as_made(h):
    base, ((one, forgot), _) = h
    for ours, theirs, fps in ((one, base, Forgotten(ours=forgot)), (base, one, Forgotten(theirs=forgot))):
        merged = merge_entries(bullets(base), bullets(ours), bullets(theirs), fps)
        assert (merged.text, merged.conflicts) == (bullets(one), 0)
    assert merge_entries(bullets(base), bullets(one), bullets(one)).text == bullets(one)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history())
def test_both_directions_keep_the_same_entries_and_a_forget_always_wins(h):
    base, ((one, f_one), (two, f_two)) = h
    ab = merge_entries(bullets(base), bullets(one), bullets(two), Forgotten(f_one, f_two))
    ba = merge_entries(bullets(base), bullets(two), bullets(one), Forgotten(f_two, f_one))
    assert ab.conflicts == ba.conflicts
    if not ab.conflicts:
        assert sorted(ab.text.splitlines()) == sorted(ba.text.splitlines())
    forgotten = {t for t in base if fingerprint(f"- {t}.\n") in f_one | f_two}
    for merged in (ab, ba):
        kept = merged.text.splitlines()
        # neither the forgotten entry nor any edit of it (its words and a side's "unless") survives
        assert not [line for line in kept for t in forgotten if line.startswith(f"- {t}")]
    # every entry both sides left alone is there, once
    untouched = [t for t in base if t in one and t in two]
    for merged in (ab, ba):
        assert all(merged.text.splitlines().count(f"- {t}.") == 1 for t in untouched)


def test_an_entry_moved_and_reworded_is_not_taken_for_a_weaker_match_in_its_old_place():
    """Found by the property above: one side rewords and moves Rule 1 and Rule 4 (which share most
    words), the other forgets Rule 1. Pairing Rule 4's edit with Rule 1 (it sat in Rule 1's old
    place) let the forget drop Rule 4's edit and keep the forgotten rule's."""
    base = [f"Rule {i}: the refund refund {'ledger daemon' if i in (1, 4) else 'refund refund'} stays put"
            for i in range(6)]
    one = [base[4] + " unless one says so", base[2], base[1] + " unless one says so", base[3], base[5]]
    two = [base[0], base[2], base[3], base[4], base[5]]
    forgot = {fingerprint(f"- {base[1]}.\n")}
    for merged in (merge_entries(bullets(base), bullets(one), bullets(two), Forgotten(theirs=forgot)),
                   merge_entries(bullets(base), bullets(two), bullets(one), Forgotten(ours=forgot))):
        kept = merged.text.splitlines()
        assert not [line for line in kept if line.startswith("- Rule 1:")], merged.text
        assert f"- {base[4]} unless one says so." in kept


def test_past_the_pairing_limit_a_moved_and_reworded_entry_is_still_paired_across_the_file():
    """A file too big to weigh every pair at once is paired gap by gap; what is left then (an entry
    moved and reworded) is paired across the file, so a forget on the other side still takes its edit."""
    base = [f"Entry {i}: the w{i}a w{i}b w{i}c w{i}d stays put" for i in range(100)]
    one = [t if i % 10 == 5 else t + " unless one says so" for i, t in enumerate(base) if i] + [base[0] + " unless asked"]
    reworded = sum(t not in base for t in one)
    assert reworded * reworded > PAIRING_LIMIT  # past the limit: the gap-by-gap path
    forgot = {fingerprint(f"- {base[0]}.\n")}
    merged = merge_entries(bullets(base), bullets(one), bullets(base[1:]), Forgotten(theirs=forgot))
    kept = merged.text.splitlines()
    assert not [line for line in kept if line.startswith("- Entry 0:")], merged.text[-300:]
    assert f"- {base[1]} unless one says so." in kept and f"- {base[5]}." in kept
