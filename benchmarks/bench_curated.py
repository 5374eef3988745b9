"""Curated write path timings: compact and forget on decisions.md with 100, 1,000 and 4,000 entries.

Run: .venv/bin/python benchmarks/bench_curated.py [--repeat 5]
Each figure is the median wall time of an in-process API call on a fresh temp project (the lock,
the plan, the journal and fsynced atomic writes included). `compact` archives the oldest entries
beyond the 800-token budget (`--archive-oldest --apply`); `forget` removes the one entry naming a
topic (`--mode hard --apply`). MemoryCustodian 0.9.1 takes 28 s to compact 4,000 decisions.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from memory_custodian import Memory  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "memorycustodian" / "dogfood" / "docs"
SIZES = (100, 1000, 4000)


def make(root: Path, entries: int) -> Memory:
    shutil.copytree(FIXTURE, root / "docs")
    parts = ["# Decisions\n\nEntries are newest first.\n"]
    for i in range(entries, 0, -1):
        day = f"20{20 + i // 4000:02d}-{1 + (i // 28) % 12:02d}-{1 + i % 28:02d}"
        topic = "Quokkabase" if i == entries // 2 else f"component {i}"
        parts.append(f"## {day} - Decide about {topic}\nDecision:\nUse the simple option for {topic}, number {i}.\n"
                     f"Reason:\nIt keeps entry {i} easy to review.\n")
    (root / "docs" / "memory" / "decisions.md").write_text("\n".join(parts), encoding="utf-8")
    return Memory.open(root)


def timed(entries: int, action) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        memory = make(Path(tmp), entries)
        start = time.perf_counter()
        action(memory)
        return time.perf_counter() - start


def timed_cli(entries: int, args: list[str]) -> float:
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        make(Path(tmp), entries)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memory_custodian", *args, "--project-root", tmp],
                       check=True, capture_output=True)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    actions = {
        "compact preview": lambda m: m.compact(target="decisions.md", archive_oldest=True),
        "compact --archive-oldest --apply": lambda m: m.compact(target="decisions.md", archive_oldest=True, apply=True),
        "forget --mode hard (preview)": lambda m: m.forget("Quokkabase", mode="hard"),
        "forget --mode hard --apply": lambda m: m.forget("Quokkabase", mode="hard", apply=True),
    }
    print(f"| operation | {' | '.join(f'{n:,} entries' for n in SIZES)} |")
    print("|---|" + "---:|" * len(SIZES))
    for name, action in actions.items():
        cells = []
        for entries in SIZES:
            runs = [timed(entries, action) for _ in range(args.repeat)]
            cells.append(f"{statistics.median(runs) * 1000:.1f} ms")
        print(f"| {name} | {' | '.join(cells)} |")
    cli_args = ["compact", "--target", "decisions.md", "--archive-oldest", "--apply"]
    cells = [f"{statistics.median(timed_cli(n, cli_args) for _ in range(args.repeat)) * 1000:.1f} ms" for n in SIZES]
    print(f"| `memory-custodian {' '.join(cli_args)}` (fresh process) | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
