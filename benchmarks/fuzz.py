"""Fuzz every parser and entry point with hypothesis, and print how many cases each one survived.

A tool that is trusted with a project's rules must not die on a stray byte: for any input the
only acceptable outcomes are a result or one of the tool's own errors (`CustodianError`), never
another exception, never a hang, and never a changed file after an error. The targets live in
`fuzz_targets.py` (the contract in `fuzz_harness.py`), so the test suite (`tests/test_fuzz_*.py`,
a few dozen cases each) and this script (thousands) run exactly the same checks.

    python benchmarks/fuzz.py            # full run (a few minutes)
    python benchmarks/fuzz.py --quick    # a smoke run (seconds)
    python benchmarks/fuzz.py --only manifest,edit_buffer --examples 500
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_harness import REPO, Bug, expect_result_or_error  # noqa: F401
from fuzz_targets import build_targets, setup_context


def run_target(name: str, ctx: dict, max_examples: int, seed: int | None = None) -> dict:
    """Run one target; returns {"cases", "ok", "errors", "seconds", "slowest_ms"}; raises Bug on a finding."""
    strategy, check = build_targets(ctx)[name]
    stats = {"cases": 0, "ok": 0, "errors": 0, "slowest_ms": 0.0}

    @settings(max_examples=max_examples, deadline=None, database=None, derandomize=seed is None,
              suppress_health_check=list(HealthCheck), print_blob=True, report_multiple_bugs=False)
    @given(strategy)
    def run(value):
        started = time.monotonic()
        outcome = check(value, ctx)
        stats["slowest_ms"] = max(stats["slowest_ms"], (time.monotonic() - started) * 1000)
        stats["cases"] += 1
        stats["ok" if outcome == "ok" else "errors"] += 1

    if seed is not None:
        from hypothesis import seed as hseed

        run = hseed(seed)(run)
    started = time.monotonic()
    try:
        run()
    except Bug as exc:
        stats["seconds"] = time.monotonic() - started
        exc.stats = stats  # how far it got, for the table
        raise
    stats["seconds"] = time.monotonic() - started
    return stats


def secrets_report() -> dict:
    """The detector's catches and false alarms on the attack corpus of the test suite."""
    sys.path.insert(0, str(REPO / "tests"))
    import test_attacks_secrets

    return test_attacks_secrets.detection_report()


TARGET_NAMES = ["manifest", "markdown_units", "ledger_lines", "ledger_replay", "edit_buffer", "truth_file", "config",
                "hook_payload", "mcp_arguments", "curated_read", "curated_add", "curated_forget", "ledger_remember",
                "secrets_scan", "globs", "hostile_inputs"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 25 cases per target")
    parser.add_argument("--examples", type=int, default=None, help="cases per target (default 1500, quick 25)")
    parser.add_argument("--only", default="", help="comma-separated target names")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a fresh one)")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    args = parser.parse_args(argv)
    examples = args.examples or (25 if args.quick else 1500)
    names = [n for n in args.only.split(",") if n] or TARGET_NAMES
    seed = args.seed if args.seed is not None else (None if args.quick else random.randrange(2**32))
    rows, failed = [], 0
    with tempfile.TemporaryDirectory(prefix="mc-fuzz-") as tmp:
        ctx = setup_context(Path(tmp))
        for name in names:
            try:
                stats = run_target(name, ctx, examples, seed)
                stats["finding"] = ""
            except Bug as exc:
                failed += 1
                stats = dict(getattr(exc, "stats", None) or {"cases": 0, "ok": 0, "errors": 0, "seconds": 0.0,
                                                             "slowest_ms": 0.0})
                stats["finding"] = str(exc)[:300]
            rows.append({"target": name, **stats})
            if not args.json:
                print(f"  {name}: {stats['cases']} cases{' — FINDING: ' + stats['finding'] if stats['finding'] else ''}",
                      file=sys.stderr, flush=True)
    secrets = secrets_report()
    if args.json:
        print(json.dumps({"seed": seed, "examples": examples, "rows": rows, "findings": failed, "secrets": secrets},
                         indent=2, sort_keys=True))
    else:
        print(f"\nfuzz: {examples} cases per target, seed {seed}, python {sys.version.split()[0]}")
        print(f"| {'target':<16} | {'cases':>6} | {'results':>7} | {'tool errors':>11} | {'slowest ms':>10} | {'s':>6} | finding")
        print(f"|{'-' * 18}|{'-' * 8}|{'-' * 9}|{'-' * 13}|{'-' * 12}|{'-' * 8}|---------")
        for r in rows:
            print(f"| {r['target']:<16} | {r['cases']:>6} | {r['ok']:>7} | {r['errors']:>11} | {r['slowest_ms']:>10.1f} | "
                  f"{r['seconds']:>6.1f} | {r['finding'] or 'none'}")
        print(f"\ntotal: {sum(r['cases'] for r in rows)} cases, {failed} target(s) with findings")
        print(f"\nsecret detector on the generated corpus (tests/test_attacks_secrets.py): "
              f"{secrets['caught']}/{secrets['total']} caught, {len(secrets['false_alarms'])} false alarm(s) "
              f"on {secrets['clean']} ordinary lines")
        print("| kind | caught |\n|---|---|")
        for kind, (caught, total) in sorted(secrets["per_kind"].items()):
            print(f"| {kind} | {caught}/{total} |")
        for text in secrets["false_alarms"]:
            print(f"  false alarm: {text}")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
