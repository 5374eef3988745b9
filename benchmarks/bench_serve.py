"""Time to first byte of the viewer's pages on a big ledger, served by a real `memory-custodian serve`.

    python benchmarks/bench_serve.py [--notes 74900] [--runs 21] [--keep DIR]

Builds the corpus (make_corpus.py) and its index unless DIR already holds one, starts the server
as a user would (`serve --port 0 --format json`), and times each page over real HTTP: the first
request after start-up, then `--runs` more (min / median / p95, ms), the first byte and the whole body.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_corpus import generate

EXE = str(Path(sys.executable).with_name("memory-custodian"))


def ensure_project(root: Path, notes: int) -> None:
    if not (root / "docs" / "memory" / "ledger").is_dir():
        generate(root, notes)
    subprocess.run([EXE, "reindex", "--project-root", str(root)], check=True, capture_output=True)


def timed(host: str, port: int, path: str) -> tuple[float, float, int]:
    """(ms to the first byte, ms to the whole body, status) of one GET on a fresh connection."""
    conn = http.client.HTTPConnection(host, port, timeout=120)
    started = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    first = time.perf_counter()
    response.read()
    done = time.perf_counter()
    conn.close()
    return 1000 * (first - started), 1000 * (done - started), response.status


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=74_900)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--keep", type=Path, default=None, help="build the project here and keep it")
    args = ap.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-serve-"))
    ensure_project(root, args.notes)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.Popen([EXE, "serve", "--port", "0", "--format", "json", "--project-root", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        lines = [proc.stdout.readline()]
        while lines[-1] and lines[-1].rstrip() != "}":  # the JSON document is indented: read it whole
            lines.append(proc.stdout.readline())
        url = urlsplit(json.loads("".join(lines))["url"])
        some_id = json.loads(subprocess.run([EXE, "recall", "lock", "--format", "json", "--project-root", str(root)],
                                            capture_output=True, text=True, check=True).stdout)["hits"][0]["id"]
        paths = ["/ledger", "/ledger?page=2", "/ledger?page=1000", "/ledger?kind=gotcha&state=stale&provenance=agent",
                 "/ledger?q=workspace+lock", f"/note/{some_id}", "/pack?task=implementation&q=lock"]
        print(f"{args.notes} notes · {args.runs} runs per page · ms (first byte / whole page)")
        for path in paths:
            cold = timed(url.hostname, url.port, path)
            runs = [timed(url.hostname, url.port, path) for _ in range(args.runs)]
            assert all(r[2] == 200 for r in (cold, *runs)), path
            ttfb = sorted(r[0] for r in runs)
            whole = sorted(r[1] for r in runs)
            p95 = ttfb[min(len(ttfb) - 1, int(0.95 * len(ttfb)))]
            print(f"{path:<52} first {cold[0]:7.1f}  min {ttfb[0]:6.1f}  median {statistics.median(ttfb):6.1f}  "
                  f"p95 {p95:6.1f}  body median {statistics.median(whole):6.1f}")
    finally:
        proc.terminate()
        proc.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
