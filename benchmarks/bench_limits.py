"""The worst case each input limit lets past: time and peak memory of the command that reads it.

    python benchmarks/bench_limits.py [--lines 1000000] [--out DIR]

Each case builds its input at (or just past) a limit in `base/limits.py` and runs the command a
person or a host would run on it, in a fresh process (the console script, bytecode cached), and
prints wall time and the process's peak resident memory (`ru_maxrss`). The issue's bound is 2 s
and 500 MB for every input the table lets past; an input over a limit is shown with what it costs
to be refused or skipped. A row marked `over` breaks that bound and is named in `docs/limits.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "src"))

from memory_custodian.base import limits  # noqa: E402
from memory_custodian.ledger.storage.ids import CROCKFORD  # noqa: E402

BOUND_S, BOUND_MB = 2.0, 500
EXE = [sys.executable, "-m", "memory_custodian"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
_MEASURE = ("import resource, subprocess, sys, time\n"
            "data = sys.stdin.buffer.read()\n"
            "t = time.monotonic()\n"
            "p = subprocess.run(sys.argv[2:], cwd=sys.argv[1], input=data, capture_output=True)\n"
            "s = time.monotonic() - t\n"
            "print(p.returncode, round(s, 3), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "sys.stderr.buffer.write(p.stderr[-300:])\n")


def measure(root: Path, args: list[str], stdin: bytes = b"") -> dict:
    """One fresh run of `memory-custodian ARGS` in `root`: exit code, seconds, peak MB (its own)."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(root), *EXE, *args], input=stdin,
                          capture_output=True, env=ENV)
    code, seconds, kib = proc.stdout.split()
    return {"exit": int(code), "s": float(seconds), "mb": round(int(kib) / 1024, 1),
            "stderr": proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]}


def project(out: Path, name: str) -> Path:
    root = out / name
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*EXE, "init"], cwd=root, check=True, capture_output=True, env=ENV)
    subprocess.run([*EXE, "remember", "--kind", "gotcha", "--path", "src/**", "--title", "lock trap",
                    "The lock is released before the daemon restarts."], cwd=root, check=True,
                   capture_output=True, env=ENV)
    return root


def shard_of(root: Path) -> Path:
    return next((root / "docs" / "memory" / "ledger").glob("*.jsonl"))


def _id(n: int, length: int) -> str:
    out = []
    for _ in range(length):
        n, r = divmod(n, 32)
        out.append(CROCKFORD[r])
    return "".join(reversed(out))


def append_creates(root: Path, count: int, body_chars: int = 40) -> None:
    """`count` valid one-event notes appended to the shard, each its own txn (what a year of a
    very busy team, or a hostile merge, leaves in one file)."""
    shard = shard_of(root)
    seed = json.loads(shard.read_text(encoding="utf-8").splitlines()[0])
    filler = ("lorem ipsum dolor sit amet " * (body_chars // 27 + 1))[:body_chars]
    with open(shard, "a", encoding="utf-8") as fh:
        for i in range(count):
            ev = dict(seed, id="01M8" + _id(2 * i, 22), txn="01M8" + _id(2 * i + 1, 22), note=_id(i + 1, 8),
                      body=f"note {i} {filler}", title=f"note {i}", kind="finding", paths=[])
            fh.write(json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n")


def wait_for_build(root: Path) -> float:
    """Wait for the detached index build (`.cache/indexing`) to end; the seconds it took from here."""
    start = time.monotonic()
    while (root / "docs" / "memory" / ".cache" / "indexing").exists() and time.monotonic() < start + 3600:
        time.sleep(0.5)
    return time.monotonic() - start


def cases(out: Path, lines: int):
    """(label, limit, root, argv, stdin, allowed) for every row; built lazily, one project each."""
    root = project(out, "note-text")
    body = "word " * (limits.NOTE_TEXT_CHARS // 5)
    text = body[:limits.NOTE_TEXT_CHARS]
    yield "note text at the limit: remember", f"{limits.NOTE_TEXT_CHARS:,} chars", root, ["remember", text], b"", True
    yield "note text at the limit: recall", "", root, ["recall", "word"], b"", True
    yield "note text one over: remember", "", root, ["remember", body[:limits.NOTE_TEXT_CHARS] + "x"], b"", False

    root = project(out, "shard-line")
    seed = json.loads(shard_of(root).read_text(encoding="utf-8").splitlines()[0])
    line = dict(seed, id="01M8KDZGDQ00VEVP0P1CMC7ZZZ", note="zzzzzzzz", body="")
    pad = limits.SHARD_LINE_BYTES - len(json.dumps(line, sort_keys=True, separators=(",", ":")).encode())
    with open(shard_of(root), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(dict(line, body="x" * pad), sort_keys=True, separators=(",", ":")) + "\n")
        big = dict(line, id="01M8KDZGDQ00VEVP0P1CMC7ZZY", note="zzzzzzzy", body="y" * (100 * 1_048_576))
        fh.write(json.dumps(big, sort_keys=True, separators=(",", ":")) + "\n")
    yield ("shard line at 1 MiB + a 100 MB one: first recall", f"{limits.SHARD_LINE_BYTES:,} bytes", root,
           ["recall", "lock"], b"", True)
    yield "the same: read --path", "", root, ["read", "--path", "src/a.py"], b"", True
    yield "the same: export", "", root, ["export"], b"", True

    root = project(out, "many-lines")
    append_creates(root, lines)
    step = f"{limits.INDEX_LINES_PER_COMMAND:,} lines a command"
    yield f"a {lines:,}-line shard, no index: first recall (reads one step)", step, root, ["recall", "note lorem"], b"", True
    yield f"a {lines:,}-line shard: recall while the rest is read", "", root, ["recall", "note lorem"], b"", True
    yield f"a {lines:,}-line shard: supersede while the rest is read (refused)", "", root, \
        ["supersede", "zzzz", "x", "--reason", "y"], b"", True
    print(f"(the detached build read the rest in {wait_for_build(root):.0f} s more)", flush=True)
    yield f"a {lines:,}-line shard, indexed: recall (every note matches)", "", root, ["recall", "note lorem"], b"", True
    yield f"a {lines:,}-line shard: reindex (reads every line, as asked)", "", root, ["reindex"], b"", False
    shutil.rmtree(root / "docs" / "memory" / ".cache", ignore_errors=True)
    session = json.dumps({"session_id": "lim", "cwd": str(root), "hook_event_name": "SessionStart",
                          "source": "startup"}).encode()
    yield (f"a {lines:,}-line shard, no index: session-start hook", "", root,
           ["hook", "--host", "claude", "SessionStart"], session, True)
    wait_for_build(root)  # the hook started the index build in the background: not timed with the next row

    root = project(out, "hook-stdin")
    def prompt(size: int) -> bytes:
        head = {"session_id": "lim", "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": ""}
        text = json.dumps(head)
        return text.replace('"prompt": ""', '"prompt": "' + "why is the lock " * ((size - len(text)) // 16) + '"').encode()
    on_prompt = ["hook", "--host", "claude", "UserPromptSubmit"]
    yield ("hook stdin just under the limit: prompt hook", f"{limits.HOOK_STDIN_BYTES:,} bytes", root, on_prompt,
           prompt(limits.HOOK_STDIN_BYTES - 100), True)
    yield "hook stdin of 50 MB: prompt hook", "", root, on_prompt, prompt(50 * 1_048_576), False

    root = project(out, "edit-file")
    buf = root / "buf.md"
    subprocess.run([*EXE, "edit", "--checkout", str(buf)], cwd=root, check=True, capture_output=True, env=ENV)
    block = "\n### new\n- kind: finding\n\n" + ("word " * 6000).strip() + "\n"
    room = limits.EDIT_FILE_BYTES - buf.stat().st_size - 1
    with open(buf, "a", encoding="utf-8") as fh:
        fh.write(block * (room // len(block.encode())))
    checkin = ["edit", "--checkin", str(buf), "--reason", "bulk"]
    yield "edit file just under the limit: edit --checkin", f"{limits.EDIT_FILE_BYTES:,} bytes", root, checkin, b"", True
    with open(buf, "a", encoding="utf-8") as fh:
        fh.write(block * 3)
    yield "edit file over the limit: edit --checkin", "", root, checkin, b"", False

    root = project(out, "paths-ids")
    # as long as the table allows and the OS can still open beside the project (PATH_MAX is 4,096 in all)
    room = limits.QUERY_PATH_CHARS - len(str(root)) - 16
    deep = "/".join(["d" * 60] * (room // 61)) + "/a.py"
    args = ["read"] + [a for i in range(limits.QUERY_PATHS) for a in ("--path", f"{deep[:-5]}{i}.py")]
    limit = f"{limits.QUERY_PATH_CHARS:,} chars x {limits.QUERY_PATHS}"
    yield "64 touched paths of 4,096 chars: read", limit, root, args, b"", True
    yield "an id of 5,000 chars: expand", f"{limits.SHOWN_CHARS} chars shown", root, ["expand", "a" * 5000], b"", False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    # outside this checkout: a project nested in it would find this repository's memory folder first
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "memory-custodian-bench-limits")
    args = ap.parse_args()
    rows = []
    print(f"{'case':64} {'limit':>22} {'exit':>4} {'s':>8} {'MB':>8}")
    for label, limit, root, argv, stdin, allowed in cases(args.out, args.lines):
        r = measure(root, argv, stdin)
        over = allowed and (r["s"] > BOUND_S or r["mb"] > BOUND_MB)
        rows.append({"case": label, "limit": limit, "allowed": allowed, **r, "over": over})
        print(f"{label:64} {limit:>22} {r['exit']:>4} {r['s']:>8.2f} {r['mb']:>8.1f}{'  over' if over else ''}",
              flush=True)
    print(f"bound: {BOUND_S} s and {BOUND_MB} MB for every input a limit lets past; "
          f"{sum(r['over'] for r in rows)} row(s) over")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "limits.json").write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
