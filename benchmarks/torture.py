"""Kill writers mid-write, run them in parallel, fill the disk: nothing acknowledged may be lost.

Memory that loses a rule when a laptop dies or two agents write at once cannot be trusted, so
this script attacks the tool as users' machines will: real processes, SIGKILL at random moments,
eight writers at once, a file-size limit, a full disk and a read-only folder. It prints one
summary table; `--quick` runs a short version (the test suite runs it on every CI run).

    python benchmarks/torture.py              # full run: 300 kills, 60 s of 8 processes
    python benchmarks/torture.py --quick      # seconds
    python benchmarks/torture.py --json       # the figures as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from torture_common import PY, RECOVERABLE, SRC, cli, curated_text, make_project, replay_state, unparseable_files
from torture_disk import disk_ok, run_fsize, run_mounts, run_readonly_chmod
from torture_load import compare_index, run_concurrency, run_threads  # noqa: F401
from torture_scrub import plant, scrub_check, scrub_ok

# ---- 1. crash: SIGKILL writers at random moments -----------------------------------------------

class Crash:
    def __init__(self, root: Path, rng: random.Random):
        from memory_custodian.memory import Memory

        self.root = root
        self.memory = Memory.open(root)
        self.rng = rng
        self.n = 0
        self.durations: dict[str, float] = {}
        self.acked_notes: set[str] = set()
        self.forgotten: set[str] = set()
        self.maybe_forgotten: set[str] = set()
        self.log: list[tuple[str, str, str]] = []  # (label, argv, outcome) of every attempt
        self.acked_curated: set[str] = set()
        self.acked_reasons: dict[str, str] = {}  # reason marker -> note
        self.acked_edits: set[str] = set()
        self.forgettable: list[str] = []  # constraint topics that exist and may be forgotten
        self.forgot_topics: set[str] = set()
        self.stats = {"attempted": 0, "acknowledged": 0, "killed": 0, "refused": 0, "crash_hook": 0,
                      "journal_recoveries": 0, "tails_torn": 0, "doctor_problems_seen": 0, "unparseable": 0, "other_failures": 0}
        self.failures: list[str] = []
        started = time.monotonic()
        cli(root, "remember", "calibration run", "--format", "json")
        self.baseline = time.monotonic() - started  # how long one writer lives on this machine, now

    def marker(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n:05d}x"

    def plan(self):
        """One writer command: (label, argv, on_ack(stdout), env, buffer) chosen at random."""
        r = self.rng.random()
        live = sorted(self.acked_notes - self.forgotten - self.maybe_forgotten)
        if r < 0.28 or not live:
            m = self.marker("tnote")
            return "remember", ["remember", f"torture note {m}", "--tag", "torture", "--format", "json"], \
                lambda out, m=m: self.acked_notes.add(json.loads(out)["id"]), {}
        if r < 0.42:
            m = self.marker("tcons")
            return "add", ["add", f"Constraint {m} holds", "--type", "constraint"], \
                lambda out, m=m: self.acked_curated.add(m), {}
        if r < 0.50:
            m = self.marker("tdec")
            return "add-decision", ["add", f"Decision {m}", "--type", "decision", "--reason", "torture"], \
                lambda out, m=m: self.acked_curated.add(m), {}
        if r < 0.55:
            m = self.marker("trule")
            env = {"MEMORY_CUSTODIAN_TEST_CRASH_AFTER_WRITES": "1"} if self.rng.random() < 0.3 else {}
            return "add-rule", ["add", f"Rule {m}", "--type", "rule", "--name", m], \
                lambda out, m=m: self.acked_curated.add(m), env
        if r < 0.70:
            note = self.rng.choice(live)
            verb = self.rng.choice(["flag-stale", "reinstate", "revoke", "expire"])
            m = self.marker("why")
            return verb, [verb, note, "--reason", f"torture {m}"], \
                lambda out, m=m, note=note: self.acked_reasons.__setitem__(m, note), {}
        if r < 0.76:
            note = self.rng.choice(live)
            m = self.marker("tsup")
            return "supersede", ["supersede", note, f"replacement {m}", "--reason", f"torture {m}", "--format", "json"], \
                lambda out, m=m, note=note: (self.acked_notes.add(json.loads(out)["id"]),
                                             self.acked_reasons.__setitem__(m, note)), {}
        if r < 0.82 and self.forgettable:
            topic = self.forgettable.pop(0)
            env = {"MEMORY_CUSTODIAN_TEST_CRASH_AFTER_WRITES": "1"} if self.rng.random() < 0.3 else {}
            return "forget", ["forget", topic, "--mode", "soft", "--apply"], \
                lambda out, t=topic: self.forgot_topics.add(t), env
        if r < 0.86:
            return "compact", ["compact", "--apply"], lambda out: None, {}
        if r < 0.97:
            m = self.marker("tedit")
            buf = self.root / f".torture-buffer-{m}.md"
            self.memory.edit_checkout(buf)
            with open(buf, "a", encoding="utf-8") as fh:
                fh.write(f"\n### torture edit {m}\n- kind: finding\n\nbody of {m}\n")
            return "edit-checkin", ["edit", "--checkin", str(buf), "--reason", "torture"], \
                lambda out, m=m: self.acked_edits.add(m), {}
        note = self.rng.choice(live)
        self.maybe_forgotten.add(note)  # a killed forget may still have landed: that is not a loss
        return "forget-note", ["forget", "--note", note, "--yes"], lambda out, n=note: self.forgotten.add(n), {}

    def seed_forgettable(self):
        if len(self.forgettable) < 2:
            m = self.marker("forgetme")
            self.memory.add(f"Constraint {m} is temporary", type="constraint")
            self.forgettable.append(m)

    def one(self):
        self.seed_forgettable()
        label, argv, on_ack, env = self.plan()
        self.stats["attempted"] += 1
        if env:
            self.stats["crash_hook"] += 1
        expected = self.durations.get(label, self.baseline)
        # Start-up dominates a command's life, so most kills are aimed at its last third, where the
        # writes are; some land anywhere, some after it finished (those are acknowledged writes).
        if self.rng.random() < 0.4:
            delay = self.rng.uniform(0, expected * 1.2)
        else:
            delay = self.rng.uniform(expected * 0.7, expected * 1.3)
        shards_before = self.shard_sizes()
        full_env = dict(os.environ, PYTHONPATH=str(SRC), **env)
        started = time.monotonic()
        proc = subprocess.Popen([PY, "-m", "memory_custodian", *argv], cwd=self.root, env=full_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate()
        took = time.monotonic() - started
        if "finished an interrupted" in (err or ""):
            self.stats["journal_recoveries"] += 1
        self.log.append((label, " ".join(argv)[:120], "killed" if proc.returncode == -signal.SIGKILL
                         else f"exit {proc.returncode}"))
        if proc.returncode == 0:
            self.durations[label] = 0.7 * self.durations.get(label, took) + 0.3 * took
            self.stats["acknowledged"] += 1
            try:
                on_ack(out)
            except (ValueError, KeyError) as exc:
                self.fail(f"{label}: exit 0 but unreadable output {out[:100]!r} ({exc})")
        elif proc.returncode == -signal.SIGKILL:
            self.stats["killed"] += 1
            self.maybe_tear(shards_before)
            if delay > expected:  # the estimate was short (a loaded machine): aim later next time
                self.durations[label] = max(expected, 0.5 * (expected + delay)) * 1.05
        elif proc.returncode == 1:
            self.stats["refused"] += 1  # an illegal transition, a stale plan: legitimate
        else:
            self.stats["other_failures"] += 1
            self.fail(f"{label} {argv}: exit {proc.returncode}: {(err or '').strip()[-300:]}")
        self.after()

    def shard_sizes(self) -> dict:
        ledger = Path(self.memory.memory_dir) / "ledger"
        return {p: (st.st_size, st.st_ino) for p in ledger.glob("*.jsonl") for st in [p.stat()]} \
            if ledger.is_dir() else {}

    def maybe_tear(self, before: dict) -> None:
        """A SIGKILL cannot split one write(), but a power cut can lose the unsynced end of an
        unacknowledged append: cut what the killed command appended at a random byte, half the time.
        A shard the command replaced (a new inode: written, synced, then renamed) is not torn: its
        tail is no append of the killed command but lines that were there before."""
        for path, (size, inode) in self.shard_sizes().items():
            old, old_inode = before.get(path, (0, inode))
            if inode == old_inode and size > old + 1 and self.rng.random() < 0.5:
                with open(path, "r+b") as fh:
                    fh.truncate(self.rng.randint(old + 1, size - 1))
                self.stats["tails_torn"] += 1

    def after(self):
        """After every command: the files still parse and doctor sees only what replay ignores."""
        bad = unparseable_files(self.memory.memory_dir)
        if bad:
            self.stats["unparseable"] += len(bad)
            self.fail(f"unparseable after a kill: {bad[:3]}")
        report = self.memory.doctor()
        problems = [p for p in report.problems if p["code"] not in RECOVERABLE]
        self.stats["doctor_problems_seen"] += len(report.problems)
        if problems:
            self.fail(f"doctor: {problems[:2]}")

    def fail(self, message: str):
        if len(self.failures) < 20:
            self.failures.append(message)

    def verify(self) -> dict:
        """Every acknowledged write is present; then `doctor --repair` cleans what kills left."""
        # The next command finishes an interrupted curated plan: run one, as a user would.
        r = cli(self.root, "compact")
        if "finished an interrupted" in r.stderr:
            self.stats["journal_recoveries"] += 1
        events, notes, _ = replay_state(self.memory.memory_dir)
        text = curated_text(self.memory.memory_dir)
        lost = []
        for note in sorted(self.acked_notes - self.forgotten - self.maybe_forgotten):
            if note not in notes or notes[note].state == "forgotten":
                tried = [f"{label} ({outcome})" for label, argv, outcome in self.log if note in argv]
                lost.append(f"note #{note} (commands naming it: {', '.join(tried) or 'none'})")
        for m in sorted(self.acked_curated):
            if m not in text:
                lost.append(f"curated {m}")
        for topic in sorted(self.forgot_topics):
            if f"Constraint {topic} is temporary" in text:
                lost.append(f"forget of {topic} (acknowledged, still present)")
        reasons = {ev.get("reason", "") for ev in events}
        for m, note in sorted(self.acked_reasons.items()):
            if note in self.forgotten or note in self.maybe_forgotten:
                continue
            if not any(m in r for r in reasons):
                lost.append(f"event {m} on #{note}")
        titles = {n.title for n in notes.values() if n.state != "forgotten"}
        for m in sorted(self.acked_edits):
            if f"torture edit {m}" not in titles:
                lost.append(f"edit {m}")
        torn_dir = Path(self.memory.memory_dir) / ".cache" / "torn"
        torn_moved = len(list(torn_dir.glob("*"))) if torn_dir.is_dir() else 0
        repaired = self.memory.doctor(repair=True)
        present = (len(self.acked_notes - self.forgotten - self.maybe_forgotten) + len(self.acked_curated)
                   + len(self.acked_reasons) + len(self.acked_edits) + len(self.forgot_topics) - len(lost))
        return {"lost": lost, "torn_tails_moved_aside": torn_moved,
                "doctor_repair": (repaired.repaired or {}), "doctor_ok_after_repair": repaired.ok,
                "present": present}


def run_crash(tmp: Path, iterations: int, rng: random.Random) -> dict:
    root = tmp / "crash"
    make_project(root, export=False)
    target = plant(root)
    crash = Crash(root, rng)
    crash.acked_notes.add(target)
    crash.maybe_forgotten.add(target)  # forgotten below, by the scrub check
    started = time.monotonic()
    for _ in range(iterations):
        crash.one()
    verified = crash.verify()
    scrub = scrub_check(root, target)
    acked = crash.stats["acknowledged"]
    return {**crash.stats, "checked_writes": verified["present"] + len(verified["lost"]),
            "present": verified["present"], "lost": len(verified["lost"]), "lost_detail": verified["lost"][:10],
            "torn_tails_moved_aside": verified["torn_tails_moved_aside"],
            "doctor_repair": verified["doctor_repair"], "doctor_ok_after_repair": verified["doctor_ok_after_repair"],
            "acknowledged": acked, "failures": crash.failures, "seconds": round(time.monotonic() - started, 1),
            "scrub": scrub}


# ---- report ---------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (seconds) for CI")
    parser.add_argument("--kills", type=int, default=None, help="crash iterations (default 300, quick 12)")
    parser.add_argument("--seconds", type=float, default=None, help="concurrency duration (default 60, quick 3)")
    parser.add_argument("--procs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--skip", default="", help="comma-separated: crash,concurrency,disk")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    rng = random.Random(seed)
    kills = args.kills if args.kills is not None else (10 if args.quick else 300)
    seconds = args.seconds if args.seconds is not None else (2.0 if args.quick else 60.0)
    skip = set(filter(None, args.skip.split(",")))
    report: dict = {"seed": seed, "quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="mc-torture-") as tmp_name:
        tmp = Path(tmp_name)
        if "crash" not in skip:
            report["crash"] = run_crash(tmp, kills, rng)
        if "concurrency" not in skip:
            report["concurrency"] = run_concurrency(tmp, seconds, args.procs, seed)
            report["threads"] = run_threads(tmp, 8, 5 if args.quick else 25)
        if "disk" not in skip:
            rows = run_fsize(tmp, args.quick) + run_readonly_chmod(tmp)
            if not args.quick:
                rows += run_mounts(tmp)
            report["disk"] = rows
    ok = verdict(report)
    report["ok"] = ok
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print_table(report)
    return 0 if ok else 1


def verdict(report: dict) -> bool:
    ok = True
    c = report.get("crash")
    if c:
        ok &= c["lost"] == 0 and c["unparseable"] == 0 and not c["failures"] and c["doctor_ok_after_repair"]
        ok &= scrub_ok(c["scrub"])
    k = report.get("concurrency")
    if k:
        ok &= k["lost"] == 0 and k["duplicated"] == 0 and k["half_written_seen"] == 0 and k["unexpected_count"] == 0
        ok &= k["export_check_exit"] == 0 and k["index_equals_rebuild"]
    t = report.get("threads")
    if t:
        ok &= t["lost"] == 0 and t["errors"] == 0
    for row in report.get("disk", []):
        ok &= disk_ok(row)
    return bool(ok)


def print_table(report: dict) -> None:
    print(f"torture (seed {report['seed']}{', quick' if report['quick'] else ''})")
    c = report.get("crash")
    if c:
        print("\n## crash: writers killed with SIGKILL at random moments")
        print("| attempted | acknowledged | killed | refused | checked writes | present | lost | unparseable | "
              "journal recoveries | tails torn (power cut) | torn tails moved aside | doctor --repair | s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        rep = c["doctor_repair"] or {}
        print(f"| {c['attempted']} | {c['acknowledged']} | {c['killed']} | {c['refused']} | {c['checked_writes']} | "
              f"{c['present']} | {c['lost']} | {c['unparseable']} | {c['journal_recoveries']} | {c['tails_torn']} | "
              f"{c['torn_tails_moved_aside']} | {rep.get('removed_lines', 0)} lines, {rep.get('trimmed_tails', 0)} tails | "
              f"{c['seconds']} |")
        for f in c["failures"][:5] + c["lost_detail"][:5]:
            print(f"  ! {f}")
        sc = c["scrub"]
        print(f"\nthen a hard forget (ledger and curated) of text in {sc['copies_before']} files, and one write: "
              f"files still holding the text "
              f"{len(sc['leaks'])}, temp files left {len(sc['temp_files'])}, doctor exit {sc['doctor_exit']}")
        for f in sc["leaks"][:10] + sc["temp_files"][:10] + ([sc["forget_stderr"]] if not scrub_ok(sc) else []) \
                + ([f"doctor said: {sc['doctor']}"] if sc["doctor_exit"] else []):
            print(f"  ! {f}")
    k = report.get("concurrency")
    if k:
        print(f"\n## concurrency: {k['processes']} processes for {k['seconds']} s")
        print("| writes/s | reads/s | acknowledged | lost | duplicated | half-written seen | torn tails seen "
              "(ignored) | unexpected errors | export --check | index = rebuild |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        print(f"| {k['writes_per_s']} | {k['reads_per_s']} | {k['acknowledged']} | {k['lost']} | {k['duplicated']} | "
              f"{k['half_written_seen']} | {k['torn_tails_seen_by_readers']} | {k['unexpected_count']} | "
              f"{'pass' if k['export_check_exit'] == 0 else 'FAIL'} | {'yes' if k['index_equals_rebuild'] else 'NO'} |")
        print(f"  ops: {json.dumps(k['ops'], sort_keys=True)}")
        for f in k["lost_detail"] + k["dup_detail"] + k["half_written_detail"] + k["unexpected"]:
            print(f"  ! {f}")
        if k["export_check_exit"]:
            print(f"  ! export --check: {k['export_check'][:200]}")
        if not k["index_equals_rebuild"]:
            print(f"  ! index: {k['index_detail']}")
    t = report.get("threads")
    if t:
        print(f"\n## threads: {t['threads']} threads of one process, `add` + `remember` each")
        print("| attempted | acknowledged | lost | errors | s |\n|---|---|---|---|---|")
        print(f"| {t['attempted']} | {t['acknowledged']} | {t['lost']} | {t['errors']} | {t['seconds']} |")
        for f in t["lost_detail"] + t["error_detail"]:
            print(f"  ! {f}")
    rows = report.get("disk")
    if rows:
        print("\n## disk trouble")
        print("| case | exit | clear error | files changed after error | unparseable | stderr |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            if "skipped" in r:
                print(f"| {r['case']} | – | skipped | – | – | {r['skipped']} |")
                continue
            print(f"| {r['case']} | {r['exit']} | {'yes' if r['clear_error'] else 'NO'} | "
                  f"{', '.join(r['changed_after_error']) or 'none'} | {len(r['unparseable'])} | {r['stderr']} |")
    print(f"\nverdict: {'PASS' if report['ok'] else 'FAIL'}")


if __name__ == "__main__":
    sys.exit(main())
