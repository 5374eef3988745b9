"""What a big ledger costs the agent: hooks, recall, MCP and the viewer at 749, 7,490 and 74,900 notes,
each figure as a ratio to the interpreter's own start-up, in one interleaved run.

    python benchmarks/bench_scale.py [--sizes 749,7490,74900] [--runs 15] [--mcp-runs 30] [--settle 0] [--out benchmarks/out]

The projects (make_corpus.py, seed 7, then `init`) are cached under OUT/scale-N and reused; the index
is warmed before timing. Fresh processes (the console script a host runs) are timed round-robin with
`python -c pass` of the same interpreter, so load on the machine hits the floor and the hooks alike:

- prompt hook: `hook UserPromptSubmit` with a prose prompt (a new session id each run)
- session start: `hook SessionStart` (a new session id each run)
- fresh recall: `recall` of a prose question
- first session start after a clone: `.cache/` removed first (the index is then built in the background)

Long-lived processes: the MCP server over stdio (the official SDK client) — the first and the median
`memory_context` and `memory_recall` against the ping; the viewer (`serve`) — `/` and
`/ledger?q=QUESTION`, first and median, against `/style.css`. Then the index's size against the
ledger's, and the growth per 10x of every median. `--settle S`: the client and the browser wait S
seconds after the server starts, as a host's first model turn does (0: they call at once, and the
background read of what fast recall keeps, which gives way to calls, never gets a turn).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "src"))
sys.path.insert(0, str(HERE))

PROMPT = "The retry budget breaks the queue worker under load again; can you fix it and check the timeout handling?"
QUESTION = "why does the session cache deadlock with the worker pool during deploys?"
HOST_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CONSOLE_SCRIPT = f"""#!{sys.executable}
import sys
from memory_custodian.__main__ import main
if __name__ == "__main__":
    sys.exit(main())
"""
FRESH = ("floor", "prompt hook", "session start", "fresh recall")
GOALS = {("prompt hook", 74900): 6, ("session start", 74900): 8, ("fresh recall", 74900): 6,
         ("prompt hook", 749): 3}


def project(out: Path, notes: int) -> Path:
    """OUT/scale-N with its ledger and an `init`ed memory folder, built once and reused."""
    root = out / f"scale-{notes}"
    if not (root / "docs" / "memory" / "brief.md").exists():
        from make_corpus import generate

        from memory_custodian.memory import Memory

        shutil.rmtree(root, ignore_errors=True)
        generate(root, notes)
        (root / "docs/memory/manifest.md").unlink()  # the corpus's stub: let init write the real one
        Memory.open(root).init()
    return root


def hook_input(root: Path, event: str, session: str) -> str:
    base = {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": str(root), "hook_event_name": event}
    if event == "SessionStart":
        base["source"] = "startup"
    else:
        base["prompt"] = PROMPT
    return json.dumps(base)


def fresh(script: str, what: str, root: Path, run: int) -> float:
    """Wall ms of one fresh process doing `what`."""
    stdin = None
    if what == "floor":
        argv = [sys.executable, "-c", "pass"]
    elif what == "fresh recall":
        argv = [script, "recall", QUESTION]
    else:
        event = "UserPromptSubmit" if what == "prompt hook" else "SessionStart"
        argv = [script, "hook", "--host", "claude", event]
        stdin = hook_input(root, event, f"scale-{what[:6]}-{run}-{time.time_ns()}")
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, cwd=root, capture_output=True, text=True, env=HOST_ENV)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0 or proc.stderr.strip():
        raise SystemExit(f"{what} at {root.name} failed: rc={proc.returncode} {proc.stderr.strip()[:300]}")
    return elapsed


async def _mcp(root: Path, runs: int, settle: float = 0.0) -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "memory_custodian", "mcp"], cwd=str(root),
                                   env=HOST_ENV)
    out: dict[str, list[float]] = {"ping": [], "memory_context": [], "memory_recall": []}
    calls = {"memory_context": {"task": "implementation", "query": QUESTION}, "memory_recall": {"query": QUESTION}}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await asyncio.sleep(settle)
            for _ in range(runs + 1):
                for name in ("memory_recall", "memory_context", "ping"):  # a recall first: the stall
                    start = time.perf_counter()
                    if name == "ping":
                        await session.send_ping()
                    else:
                        got = await session.call_tool(name, calls[name])
                        if got.is_error:
                            raise SystemExit(f"{name} failed: {got.content}")
                    out[name].append((time.perf_counter() - start) * 1000)
    return out


def _get(host: str, port: int, path: str) -> float:
    conn = http.client.HTTPConnection(host, port, timeout=120)
    start = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    conn.close()
    if response.status != 200:
        raise SystemExit(f"GET {path}: {response.status}")
    return (time.perf_counter() - start) * 1000


def viewer(script: str, root: Path, runs: int, settle: float = 0.0) -> dict:
    proc = subprocess.Popen([script, "serve", "--port", "0", "--format", "json"], cwd=root, env=HOST_ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = [proc.stdout.readline()]
        while lines[-1] and lines[-1].rstrip() != "}":
            lines.append(proc.stdout.readline())
        url = urlsplit(json.loads("".join(lines))["url"])
        time.sleep(settle)
        pages = {"/style.css": "/style.css", "/": "/", "/ledger?q=": "/ledger?q=" + quote(QUESTION)}
        times: dict[str, list[float]] = {k: [] for k in pages}
        for _ in range(runs + 1):
            for key, path in pages.items():
                times[key].append(_get(url.hostname, url.port, path))
        return times
    finally:
        proc.terminate()
        proc.wait(10)


def index_ratio(root: Path) -> tuple[float, float, float]:
    memory = root / "docs" / "memory"
    ledger = sum(p.stat().st_size for p in (memory / "ledger").glob("*.jsonl"))
    index = sum(p.stat().st_size for p in (memory / ".cache").glob("index.sqlite*"))
    return index / 1e6, ledger / 1e6, index / ledger


def first_after_clone(script: str, root: Path) -> float:
    """The first session start on a clone (no `.cache/`), then wait for the background build."""
    shutil.rmtree(root / "docs" / "memory" / ".cache", ignore_errors=True)
    ms = fresh(script, "session start", root, -1)
    marker = root / "docs" / "memory" / ".cache" / "indexing"
    began = time.perf_counter()
    while marker.exists() and time.perf_counter() - began < 900:
        time.sleep(0.2)
    subprocess.run([script, "status"], cwd=root, capture_output=True, env=HOST_ENV)  # catch up if the build was small
    return ms


def med(values: list[float]) -> float:
    return statistics.median(values)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="749,7490,74900")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--mcp-runs", type=int, default=30)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--settle", type=float, default=0.0,
                    help="seconds the MCP client and the viewer's browser wait after start, as a host's first turn does")
    ap.add_argument("--no-clone", action="store_true", help="skip the first session start after a clone")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    script = args.out / "memory-custodian"
    script.write_text(CONSOLE_SCRIPT)
    script.chmod(0o755)
    roots = {n: project(args.out, n) for n in sizes}
    for root in roots.values():  # warm: the index built (or caught up) and the bytecode written
        subprocess.run([str(script), "recall", "warm"], cwd=root, capture_output=True, env=HOST_ENV, check=True)
    print(f"cores {os.cpu_count()}, load average at start {os.getloadavg()[0]:.1f}; {args.runs} interleaved runs "
          f"of each fresh process; ratios are to the median `python -c pass` of this run")
    clone = {n: first_after_clone(str(script), roots[n]) for n in sizes} if not args.no_clone else {}
    times: dict[tuple[str, int], list[float]] = {}
    for run in range(args.runs):
        for n in sizes:
            for what in FRESH:
                times.setdefault((what, n), []).append(fresh(str(script), what, roots[n], run))
    floor = med([t for n in sizes for t in times[("floor", n)]])
    print(f"\nfloor: python -c pass, median {floor:.1f} ms\n")
    print(f"{'figure':<34}" + "".join(f"{n:>18,}" for n in sizes) + f"{'per 10x':>18}")

    def row(label: str, values: dict[int, float], unit: str, base: float | None, goal_key: str | None = None):
        cells = []
        for n in sizes:
            v = values[n]
            text = f"{v:.1f} {unit}" + (f" ×{v / base:.1f}" if base else "")
            goal = GOALS.get((goal_key, n)) if goal_key else None
            if goal and base:
                text += " ok" if v / base <= goal else " NO"
            cells.append(f"{text:>18}")
        growth = " ".join(f"×{values[b] / values[a]:.2f}" for a, b in itertools.pairwise(sizes))
        print(f"{label:<34}" + "".join(cells) + f"{growth:>18}")

    for what in FRESH[1:]:
        row(what, {n: med(times[(what, n)]) for n in sizes}, "ms", floor, what)
    if clone:
        row("first session start after a clone", clone, "ms", floor)
    for n in sizes:
        mcp = asyncio.run(_mcp(roots[n], args.mcp_runs, args.settle))
        web = viewer(str(script), roots[n], args.runs, args.settle)
        ping = med(mcp["ping"][1:])
        print(f"\n{n:,} notes, long-lived processes (first call · median of the rest · first/median):")
        for name in ("memory_context", "memory_recall"):
            first, rest = mcp[name][0], med(mcp[name][1:])
            print(f"  MCP {name:<16} first {first:7.1f} ms · p50 {rest:6.1f} ms (×{rest / ping:.0f} the ping "
                  f"{ping:.2f} ms) · first/p50 ×{first / rest:.1f}")
        static = med(web["/style.css"][1:])
        for page in ("/", "/ledger?q="):
            first, rest = web[page][0], med(web[page][1:])
            print(f"  viewer {page:<13} first {first:7.1f} ms · median {rest:6.1f} ms (×{rest / static:.0f} "
                  f"/style.css {static:.2f} ms) · first/median ×{first / rest:.1f}")
        size, ledger, ratio = index_ratio(roots[n])
        print(f"  index {size:.1f} MB for a ledger of {ledger:.1f} MB: ×{ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
