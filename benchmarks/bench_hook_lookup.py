"""What the committed hook command's lookup costs: a session-start hook run through the portable command
(git, its inline alias, the per-clone setting) against the same hook run by the console script directly.

Run: .venv/bin/python benchmarks/bench_hook_lookup.py [--runs 20]
Both run as a host runs them (`sh -c`, the host's payload on stdin) in a fresh repository with one
directive; the figure is the median wall time of each and their ratio, within one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))


def median_seconds(command: str, root: Path, stdin: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(["sh", "-c", command], cwd=root, input=stdin, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        assert proc.returncode == 0 and "additionalContext" in proc.stdout, proc.stderr
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    from test_hooks import payload

    from memory_custodian.base.launcher import current_launcher
    from memory_custodian.memory import Memory

    with tempfile.TemporaryDirectory(prefix="mc-bench-lookup-") as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        memory = Memory.open(root)
        memory.init()
        memory.remember("Run make check before every push.", kind="directive")
        from memory_custodian.agents.install import install_agents

        install_agents(memory, ["claude"])
        committed = json.loads((root / ".claude/settings.json").read_text())["hooks"]["SessionStart"][0]["hooks"][0]
        stdin = payload("claude", "SessionStart", root)
        direct = current_launcher().command(["hook", "--host", "claude", "SessionStart"])
        median_seconds(direct, root, stdin, 2)  # warm the index and the file cache
        a = median_seconds(committed["command"], root, stdin, args.runs)
        b = median_seconds(direct, root, stdin, args.runs)
    print(f"session-start hook, committed portable command: {a * 1000:.0f} ms; console script directly: "
          f"{b * 1000:.0f} ms; x{a / b:.2f} ({(a - b) * 1000:+.0f} ms for the lookup), median of {args.runs}")


if __name__ == "__main__":
    main()
