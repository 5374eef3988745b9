"""Fresh-process start-up of two `memory-custodian` executables, interleaved in one run.

    python benchmarks/bench_startup.py BEFORE AFTER [--runs 31] [--notes 60] [--corpus 7490]

Each case runs once with BEFORE, then once with AFTER, and so on, so that a busy machine slows
both alike; the table gives min and median milliseconds of each and the ratio AFTER/BEFORE
(below 1.0: AFTER is faster). `--corpus N` writes a realistic ledger of N varied notes
(`make_corpus.py`) instead of N look-alike ones, and recalls a prose question. Each runs on its own
copy of one small temp project (built with BEFORE): their index formats may differ, and on a shared
`.cache/` each run would rebuild the index the other left. Byte-code caches are written and reused as on an installed machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# as installed: byte-code caches are written and reused (PYTHONDONTWRITEBYTECODE would time compiling)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def cases(root: str) -> dict[str, tuple[list[str], bytes]]:
    def hook_payload(event: str, **extra) -> bytes:
        return json.dumps({"session_id": f"bench-{event}", "cwd": root, "hook_event_name": event, **extra}).encode()

    return {
        "recall": (["recall", "cache invalidation"], b""),
        "recall (a prose question)": (["recall", "why does the refund webhook retry twice?"], b""),
        "remember": (["remember", "--tag", "bench", "start-up bench note"], b""),
        # an agent's quote is checked against the user's recent messages (the library's trust rule)
        "remember --actor agent --quote": (["remember", "--actor", "agent", "--quote", "words nobody wrote here",
                                            "start-up bench note"], b""),
        "read --task implementation": (["read", "--task", "implementation"], b""),
        "hook SessionStart": (["hook", "SessionStart"], hook_payload("SessionStart", source="startup")),
        "hook UserPromptSubmit": (["hook", "UserPromptSubmit"],
                                  hook_payload("UserPromptSubmit", prompt="why is the cache invalidation slow?")),
        # the rule detector reads every sentence: a stated rule, and a pasted error log with a request after it
        "hook UserPromptSubmit (a rule)": (["hook", "UserPromptSubmit"], hook_payload(
            "UserPromptSubmit", prompt="Thanks. From now on, run the linter before every commit.")),
        "hook UserPromptSubmit (a pasted log)": (["hook", "UserPromptSubmit"], hook_payload(
            "UserPromptSubmit", prompt="npm install fails:\n" + "".join(
                f"npm ERR! {i} timing reify:loadTrees Completed in {i}ms\n" for i in range(120))
            + "Traceback (most recent call last):\n  File \"manage.py\", line 22\nKeyError: 'protocol'\n"
            "Can you find out why the install fails on a clean checkout?")),
        "status": (["status"], b""),  # a command that had no click-free path
    }


def build_project(exe: str, root: str, notes: int) -> None:
    # `init` wants the folder an agent starts in, which it takes from git
    subprocess.run(["git", "init", "-q", root], check=True, capture_output=True, env=ENV)
    subprocess.run([exe, "init"], cwd=root, check=True, capture_output=True, env=ENV)
    with open(os.path.join(root, "docs", "memory", "brief.md"), "w", encoding="utf-8") as fh:
        fh.write("# Brief\n\nA start-up benchmark project.\n")  # a template brief fails `status` (exit 1)
    for i in range(notes):
        subprocess.run([exe, "remember", f"note {i} about cache invalidation and the retry budget", "--tag", f"t{i % 7}"],
                       cwd=root, check=True, capture_output=True, env=ENV)


def once(exe: str, argv: list[str], stdin: bytes, root: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run([exe, *argv], cwd=root, input=stdin, capture_output=True, env=ENV)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{exe} {' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return elapsed


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--runs", type=int, default=31)
    ap.add_argument("--notes", type=int, default=60)
    ap.add_argument("--corpus", type=int, default=0, help="a realistic ledger of this many notes instead")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        roots = os.path.join(tmp, "before"), os.path.join(tmp, "after")
        os.mkdir(roots[0])
        build_project(args.before, roots[0], 0 if args.corpus else args.notes)
        if args.corpus:
            manifest = os.path.join(roots[0], "docs", "memory", "manifest.md")
            with open(manifest, encoding="utf-8") as fh:
                kept = fh.read()  # the corpus writes a bare manifest: keep init's
            subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_corpus.py"),
                            roots[0], "--notes", str(args.corpus)], check=True, capture_output=True)
            with open(manifest, "w", encoding="utf-8") as fh:
                fh.write(kept)
        shutil.copytree(roots[0], roots[1], ignore=shutil.ignore_patterns(".cache"))
        runs = [(exe, root, cases(root)) for exe, root in zip((args.before, args.after), roots)]
        times = {name: ([], []) for name in runs[0][2]}
        for exe, root, env_cases in runs:  # build each index and warm the page cache
            for words, stdin in env_cases.values():
                once(exe, words, stdin, root)
        for _ in range(args.runs):
            for name in times:
                for side, (exe, root, env_cases) in enumerate(runs):
                    times[name][side].append(once(exe, *env_cases[name], root))
    print(f"fresh-process start-up, {args.runs} interleaved runs each, {os.cpu_count()} CPUs, "
          f"Python {sys.version.split()[0]}")
    print(f"{'command':<28}{'before min':>11}{'median':>9}{'after min':>11}{'median':>9}{'ratio min':>11}"
          f"{'median':>9}")
    for name, (before, after) in times.items():
        b_min, b_med, a_min, a_med = min(before), statistics.median(before), min(after), statistics.median(after)
        print(f"{name:<28}{b_min:>11.1f}{b_med:>9.1f}{a_min:>11.1f}{a_med:>9.1f}{a_min / b_min:>11.2f}"
              f"{a_med / b_med:>9.2f}")


if __name__ == "__main__":
    main()
