"""The viewer's history pages on a large history, against its current pages, in one interleaved run.

    python benchmarks/bench_history.py [--notes 74900] [--commits 1000] [--runs 21] [--keep DIR]

Builds (unless DIR holds one) a project of `--notes` ledger notes (make_corpus.py) with `--commits` commits of
memory history made with `git fast-import`: each commit adds a decision, every third changes one, every
tenth adds a constraint, every fiftieth archives the oldest decisions, and each records ledger events
(created by the library in a scratch memory, so they are real). Then it starts a real `serve`, logs a session
through the real hooks, and times every page over HTTP, the pages taken in turn within each run so load falls
on all alike: the first request after start-up, then min / median / p95 of the first byte, in ms.
"""

from __future__ import annotations

import argparse
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

from bench_serve import EXE, ensure_project, timed

IDENTITY = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
SHARD = "history-bench.jsonl"  # the ledger events the commits record, a shard of their own
MEMORY = "docs/memory"


def git(root: Path, *args: str, data: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=root, input=data, capture_output=True, env={**os.environ, **IDENTITY})
    if proc.returncode != 0:
        raise SystemExit(f"git {args[0]}: {proc.stderr.decode(errors='replace')[-500:]}")
    return proc.stdout.decode()


def ledger_events(n: int) -> list[bytes]:
    """Real event lines: `n` notes remembered (every fifth superseded) in a scratch memory."""
    from memory_custodian import Memory

    with tempfile.TemporaryDirectory(prefix="bench-history-events-") as scratch:
        memory = Memory.open(scratch)
        memory.init()
        last = None
        for i in range(n):
            if i % 5 == 4 and last is not None:
                last = memory.supersede(last, f"Step {i}: the worker pool drains before a deploy, measured again.",
                                        reason="measured again").id
            else:
                last = memory.remember(f"Step {i}: the worker pool drains before a deploy.", kind="finding",
                                       tags=("deploy",)).id
        lines: list[bytes] = []
        for shard in sorted((Path(scratch) / MEMORY / "ledger").glob("*.jsonl")):
            lines.extend(line + b"\n" for line in shard.read_bytes().splitlines() if line)
        return lines


def _blob(path: str, data: bytes) -> bytes:
    return f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"


def build_history(root: Path, commits: int) -> None:
    """`commits` commits of memory history on top of the corpus, through one `git fast-import`."""
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "The ledger as it was")
    events = ledger_events(commits)
    per = max(1, len(events) // commits)
    decisions: list[str] = []
    constraints: list[str] = []
    archived: dict[str, list[str]] = {}
    stream = []
    at = int(time.time()) - commits * 3600
    for k in range(1, commits + 1):
        decisions.insert(0, f"## 2026-{1 + k % 12:02d}-{1 + k % 28:02d} - Decision {k}: keep the worker pool at "
                            f"{4 + k % 8} threads\nReason:\nmeasured on the deploy of week {k}\n")
        if k % 3 == 0 and len(decisions) > 2:
            decisions[2] = decisions[2].replace("threads", "threads, measured again")
        if k % 10 == 0:
            constraints.append(f"- Constraint {k}: shard {k % 16} has one writer at a time\n")
        files = {f"{MEMORY}/decisions.md": "# Decisions\n\n" + "\n".join(decisions)}
        if k % 50 == 0:
            name = f"{MEMORY}/archive/decisions-{k:04d}.md"
            archived[name] = decisions[30:]
            del decisions[30:]
            files[name] = "# Archived decisions\n\n" + "\n".join(archived[name])
            files[f"{MEMORY}/decisions.md"] = "# Decisions\n\n" + "\n".join(decisions)
        if k % 10 == 0:
            files[f"{MEMORY}/constraints.md"] = "# Constraints\n\n" + "".join(constraints)
        files[f"{MEMORY}/ledger/{SHARD}"] = b"".join(events[:k * per]).decode()
        message = f"Memory change {k}".encode()
        stream.append(b"commit refs/heads/main\n" + f"committer Bench <bench@example.invalid> {at + k * 3600} +0000\n"
                      .encode() + f"data {len(message)}\n".encode() + message + b"\n"
                      + (b"from refs/heads/main^0\n" if k == 1 else b"")
                      + b"".join(_blob(p, t.encode()) for p, t in sorted(files.items())) + b"\n")
    git(root, "fast-import", "--quiet", data=b"".join(stream))
    git(root, "reset", "-q", "--hard", "main")


def ensure(root: Path, notes: int, commits: int) -> None:
    if (root / ".git").is_dir():
        return
    ensure_project(root, notes)
    (root / MEMORY / "manifest.md").unlink()  # the corpus's bare manifest: init writes the full one, with routes
    subprocess.run([EXE, "init", "--project-root", str(root)], check=True, capture_output=True)
    build_history(root, commits)
    subprocess.run([EXE, "reindex", "--project-root", str(root)], check=True, capture_output=True)
    for event, extra in (("SessionStart", {}), ("UserPromptSubmit", {"prompt": "why does the worker pool drain?"})):
        payload = {"session_id": "bench-session", "cwd": str(root), "hook_event_name": event, **extra}
        subprocess.run([EXE, "hook", event], cwd=root, input=json.dumps(payload), text=True, check=True,
                       capture_output=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=74_900)
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--keep", type=Path, default=None, help="build the project here and keep it")
    args = ap.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-history-"))
    ensure(root, args.notes, args.commits)
    proc = subprocess.Popen([EXE, "serve", "--port", "0", "--format", "json", "--project-root", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = [proc.stdout.readline()]
        while lines[-1] and lines[-1].rstrip() != "}":
            lines.append(proc.stdout.readline())
        url = urlsplit(json.loads("".join(lines))["url"])
        recall = json.loads(subprocess.run([EXE, "recall", "worker pool drains", "--all", "--format", "json",
                                            "--project-root", str(root)], capture_output=True, text=True,
                                           check=True).stdout)["hits"]
        supersedes = [json.loads(line) for line in (root / MEMORY / "ledger" / SHARD).read_text().splitlines()
                      if '"op":"supersede"' in line]
        chained = supersedes[-1]["by"]  # the newest note of a chain: its page diffs every step
        session = json.loads(subprocess.run([EXE, "stats", "--format", "json", "--project-root", str(root)],
                                            capture_output=True, text=True, check=True).stdout)["sessions"][0]
        current = ["/ledger", "/ledger?q=workspace+lock", "/ledger?q=worker+pool", f"/note/{recall[0]['id']}",
                   "/pack?task=implementation&q=lock"]
        history = ["/files", "/file/decisions.md", "/file/constraints.md", "/activity", "/activity?kind=decision",
                   "/activity?op=commit", "/activity?actor=agent&since=2026-06-01", "/search?q=worker+pool",
                   f"/note/{chained}", f"/session/{session['session']}"]
        commits = git(root, "rev-list", "--count", "HEAD").strip()
        print(f"{args.notes} notes · {commits} commits · {args.runs} runs, pages interleaved · ms to the first byte")
        paths = current + history
        first = {p: timed(url.hostname, url.port, p) for p in paths}
        runs: dict[str, list] = {p: [] for p in paths}
        for _ in range(args.runs):
            for p in paths:
                runs[p].append(timed(url.hostname, url.port, p))
        for p in paths:
            assert first[p][2] == 200 and all(r[2] == 200 for r in runs[p]), p
            ttfb = sorted(r[0] for r in runs[p])
            p95 = ttfb[min(len(ttfb) - 1, int(0.95 * len(ttfb)))]
            tag = "current" if p in current else "history"
            print(f"{tag:<8} {p:<44} first {first[p][0]:7.1f}  min {ttfb[0]:6.1f}  "
                  f"median {statistics.median(ttfb):6.1f}  p95 {p95:6.1f}")
    finally:
        proc.terminate()
        proc.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
