"""How fast `read` is: as a fresh process (what a session-start hook pays) and in-process.

    .venv/bin/python benchmarks/bench_read.py [--runs 20]

Prints median wall times for:
  1. `python -m memory_custodian read --task planning` as a fresh process, 20 runs, on a copy of
     the `dogfood` fixture (target < 80 ms); also as the console script runs it, and a bare
     `python -c pass` for scale;
  2. `Memory.read("planning")` in-process on that copy (target < 3 ms);
  3. `Memory.read("planning")` in-process on a generated decisions.md with 4,000 entries (< 30 ms).
Bytecode caching is on (into a temp PYTHONPYCACHEPREFIX) as on a user's machine, whatever the
calling environment says.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOGFOOD = REPO / "tests" / "fixtures" / "memorycustodian" / "dogfood"


def fresh_process(root: Path | None, runs: int, env: dict, cmd: list[str] | None = None) -> tuple[list[float], list[float]]:
    """Wall times, and the child's CPU time (user+sys), which a busy machine inflates far less."""
    import resource

    cmd = cmd or [sys.executable, "-m", "memory_custodian", "read", "--task", "planning", "--project-root", str(root)]
    subprocess.run(cmd, check=True, capture_output=True, env=env)  # warm the bytecode cache and the page cache
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def in_process(root: Path, runs: int) -> tuple[list[float], list[float]]:
    from memory_custodian import Memory

    memory = Memory.open(root)
    memory.read("planning")
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        memory.read("planning")
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return wall, cpu


def big_decisions(root: Path, entries: int = 4000) -> None:
    memory = root / "docs" / "memory"
    parts = ["# Decisions\n\nEntries are newest first.\n"]
    for i in range(entries, 0, -1):
        parts.append(
            f"\n## 2026-{1 + i % 12:02d}-{1 + i % 28:02d} - Decision {i} about module_{i % 97}\n"
            f"Decision:\nUse approach {i} for the `module_{i % 97}` storage path, with retries.\n"
            f"Reason:\nMeasured {i % 13} incidents when we did not; see the postmortem {i}.\n"
        )
    (memory / "decisions.md").write_text("".join(parts), encoding="utf-8")


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.2f} ms (min {min(values) * 1000:.2f}, max {max(values) * 1000:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-read-") as tmp:
        tmp = Path(tmp)
        dogfood = tmp / "dogfood"
        shutil.copytree(DOGFOOD / "docs", dogfood / "docs")
        big = tmp / "big"
        shutil.copytree(DOGFOOD / "docs", big / "docs")
        big_decisions(big)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        fresh, fresh_cpu = fresh_process(dogfood, args.runs, env)
        bare, bare_cpu = fresh_process(None, args.runs, env, [sys.executable, "-c", "pass"])
        # what the installed `memory-custodian` console script runs (no runpy, unlike `python -m`)
        script = [sys.executable, "-c", "import re, sys; from memory_custodian.__main__ import main; sys.exit(main())",
                  "read", "--task", "planning", "--project-root", str(dogfood)]
        console, console_cpu = fresh_process(None, args.runs, env, script)
        small, small_cpu = in_process(dogfood, 200)
        large, large_cpu = in_process(big, 30)
        load = os.getloadavg()[0]
        print(f"load average (1 min) at the end: {load:.2f} on {os.cpu_count()} cores")
        print(f"fresh-process `read --task planning` on dogfood, {args.runs} runs [target < 80 ms]")
        print(f"  wall {ms(fresh)}; cpu {ms(fresh_cpu)}")
        print(f"  as the console script `memory-custodian read …`: wall {ms(console)}; cpu {ms(console_cpu)}")
        print(f"  (baseline: `python -c pass` wall {ms(bare)}; cpu {ms(bare_cpu)})")
        print("in-process read on dogfood, 200 runs [target < 3 ms]")
        print(f"  wall {ms(small)}; cpu {ms(small_cpu)}")
        print("in-process read, decisions.md with 4,000 entries, 30 runs [target < 30 ms]")
        print(f"  wall {ms(large)}; cpu {ms(large_cpu)}")


if __name__ == "__main__":
    main()
