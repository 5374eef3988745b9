"""The first session start after a clone, for two `memory-custodian` executables, interleaved in one run.

    python benchmarks/bench_cold_start.py BEFORE AFTER [--notes 74900] [--runs 15] [--root DIR]

A clone has no index (`.cache/` is never committed), so its first `hook SessionStart` reads the
directives straight from the shards. Each run deletes the index, marks a build as running (a marker
naming a live process that does nothing, so no run starts a real build and slows the next) and times
one fresh hook process, BEFORE and AFTER in turn, so a busy machine slows both alike. Prints the
medians, the ratio AFTER/BEFORE per pair (median, min, max) and whether both printed the same pack.
The project is `bench_scale.py`'s `benchmarks/out/scale-N` (built if missing) unless --root names one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_scale import HOST_ENV, project  # noqa: E402


def cold_start(exe: str, root: Path, run: int) -> tuple[float, str]:
    cache = root / "docs" / "memory" / ".cache"
    for name in os.listdir(cache):
        if name.startswith("index.sqlite"):
            os.unlink(cache / name)
    payload = json.dumps({"session_id": f"cold-{run}-{time.time_ns()}", "transcript_path": "/tmp/t.jsonl",
                          "cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"})
    start = time.perf_counter()
    proc = subprocess.run([exe, "hook", "SessionStart"], input=payload, text=True, cwd=root, env=HOST_ENV,
                          capture_output=True, check=True)
    return (time.perf_counter() - start) * 1000, json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--notes", type=int, default=74900)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--root", type=Path)
    args = ap.parse_args(argv)
    root = args.root or project(HERE / "out", args.notes)
    cache = root / "docs" / "memory" / ".cache"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    try:
        (cache / "indexing").write_text(str(idle.pid), encoding="ascii")  # a build "under way": none starts
        times: dict[str, list[float]] = {"before": [], "after": []}
        ratios, packs = [], set()
        for run in range(args.runs):
            got = {}
            for side in (("before", "after") if run % 2 else ("after", "before")):
                (cache / "indexing").touch()
                got[side], pack = cold_start(getattr(args, side), root, run)
                packs.add((side, pack.split("\n", 1)[1]))  # past the first line, which names the session
            for side, ms in got.items():
                times[side].append(ms)
            ratios.append(got["after"] / got["before"])
    finally:
        idle.kill()
        idle.wait()
        shutil.rmtree(cache, ignore_errors=True)  # the next command builds the index again
    same = len({pack for _, pack in packs}) == 1
    print(f"first session start after a clone, {root.name}, {args.runs} interleaved pairs, {os.cpu_count()} CPUs")
    print(f"before median {statistics.median(times['before']):.1f} ms · after median "
          f"{statistics.median(times['after']):.1f} ms · after/before median {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f}) · the same pack: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
