"""Merge timings and the full merge matrix under real git.

Run: .venv/bin/python benchmarks/bench_merge.py [--repeat 3] [--git] [--matrix]

Default: the curated driver's merge (`merge_entries`) of a `decisions.md` of 2,500, 10,000 and
100,000 dated entries, each side adding 20 entries and editing and deleting one in 1,000 (different
ones): the median wall time of the in-process merge (garbage collection off, as in the driver
process), and its time per entry relative to 2,500 (1.0 is linear). `--git` also times one real
`git merge` of the 100,000-entry file with the
registered driver (the whole driver process: start-up, three reads, the merge, the write). The
issue's figures for the quadratic driver this replaced: 2,500 entries 0.13 s, 10,000 1.26 s,
20,000 5.3 s, 110,000 223 s under `git merge`.

`--matrix`: every kind of `tests/merge_model.py` with all its cells in one file, merged by real
`git merge` in both directions, each file compared with the model; prints the number of cells.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))

from memory_custodian.curated.write.merge_entries import merge_entries  # noqa: E402

SIZES = (2500, 10000, 100000)
HEAD = "# Decisions\n\nEntries are newest first.\n\n"


def entry(i: int, words: str = "") -> str:
    day = f"{2000 + i // 336:04d}-{1 + (i // 28) % 12:02d}-{1 + i % 28:02d}"
    return f"## {day} - Decide about component {i}\nUse the simple option for component {i}{words}.\n"


def versions(n: int) -> tuple[str, str, str]:
    """(base, ours, theirs): each side adds 20 entries and edits and deletes one in 1,000 (different ones)."""
    base = list(range(n))
    ours = [i for i in base if i % 1000 != 2]  # deletions spread through the file
    theirs = [i for i in base if i % 1000 != 5]
    ours_edit = {i for i in base if i % 1000 == 4}
    theirs_edit = {i for i in base if i % 1000 == 7}

    def render(ids, edited, tag, extra=()):
        parts = [entry(i, f" ({tag})" if i in edited else "") for i in ids] + list(extra)
        parts.sort(key=lambda p: p[3:13], reverse=True)
        return HEAD + "\n".join(parts)

    new_o = [entry(n + k, " (added on ours)") for k in range(20)]
    new_t = [entry(n + 20 + k, " (added on theirs)") for k in range(20)]
    return (render(base, set(), ""), render(ours, ours_edit, "ours", new_o),
            render(theirs, theirs_edit, "theirs", new_t))


def timed(n: int, repeat: int) -> float:
    base, ours, theirs = versions(n)
    import gc

    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()  # as the driver process runs it
        start = time.perf_counter()
        merged = merge_entries(base, ours, theirs)
        times.append(time.perf_counter() - start)
        gc.enable()
    assert merged.conflicts == 0 and "(added on theirs)" in merged.text and "(added on ours)" in merged.text
    return statistics.median(times)


def git(cwd, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@x", GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)


def git_merge_seconds(n: int) -> float:
    from memory_custodian.memory import Memory

    with tempfile.TemporaryDirectory(prefix="mc-bench-merge-") as tmp:
        root = Path(tmp)
        git(root, "init", "-q", "-b", "main")
        Memory.open(root).init()
        target = root / "docs/memory/decisions.md"
        base, ours, theirs = versions(n)
        for branch, text in (("main", base), ("ours", ours), ("theirs", theirs)):
            if branch != "main":
                git(root, "checkout", "-q", "-b", branch, "main")
            target.write_text(text, encoding="utf-8")
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", branch)
        git(root, "checkout", "-q", "ours")
        start = time.perf_counter()
        proc = git(root, "merge", "--no-edit", "-q", "theirs")
        seconds = time.perf_counter() - start
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return seconds


def run_matrix() -> None:
    import merge_model as mm
    from test_merge_matrix import build_matrix_repo, merged_by_git

    with tempfile.TemporaryDirectory(prefix="mc-bench-matrix-") as tmp:
        root = Path(tmp)
        kinds = tuple(mm.KINDS)
        start = time.perf_counter()
        built = build_matrix_repo(root, kinds)
        wrong = []
        for ours, theirs, flip, labels in (("one", "two", False, ("one", "two")), ("two", "one", True, ("two", "one"))):
            got = merged_by_git(root, ours, theirs, kinds)
            for kind, pairs in built.items():
                text, _ = mm.expected_text(kind, [p[::-1] for p in pairs] if flip else pairs, labels)
                if got[kind] != text:
                    wrong.append((kind, ours))
        seconds = time.perf_counter() - start
    cells = mm.case_count()
    print(f"merge matrix under real git: {cells} cells ({len(mm.KINDS)} kinds, both directions), "
          f"{cells - sum(len(mm.cells(k)) for k, _ in wrong)} equal to the model, in {seconds:.1f} s")
    if wrong:
        raise SystemExit(f"differs from the model: {wrong}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--git", action="store_true", help="also time a real git merge of 100,000 entries")
    parser.add_argument("--matrix", action="store_true", help="run the full merge matrix under real git")
    args = parser.parse_args()
    if args.matrix:
        run_matrix()
        return
    first = None
    for n in SIZES:
        seconds = timed(n, args.repeat)
        per = seconds / n
        first = first or per
        print(f"merge_entries, decisions.md of {n:>7,} entries: {seconds:7.3f} s  "
              f"(per entry x{per / first:.2f} of 2,500)")
    if args.git:
        print(f"git merge with the driver, {SIZES[-1]:,} entries: {git_merge_seconds(SIZES[-1]):.2f} s")


if __name__ == "__main__":
    main()
