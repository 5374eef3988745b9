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
import multiprocessing
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
sys.path.insert(0, str(SRC))

PY = sys.executable
RECOVERABLE = ("torn-tail", "incomplete-txn", "forgotten-leftovers")
CURATED_GLOBS = ("*.md", "rules/*.md", "profiles/*.md", "areas/*.md", "archive/*.md")


def cli(root: Path, *args: str, env: dict | None = None, timeout: float = 120, preexec=None, stdin=None):
    full = dict(os.environ, PYTHONPATH=str(SRC), **(env or {}))
    return subprocess.run([PY, "-m", "memory_custodian", *args], cwd=root, capture_output=True, text=True,
                          env=full, timeout=timeout, preexec_fn=preexec, input=stdin)


def make_project(root: Path, *, export: bool = True):
    from memory_custodian.memory import Memory

    root.mkdir(parents=True, exist_ok=True)
    memory = Memory.open(root)
    memory.init(extended=True)
    memory.add("Seed constraint: no network in unit tests", type="constraint")
    memory.remember("Seed note: the lock is released before restart", kind="gotcha", paths=["src/**"])
    if export:
        memory.export_enable()
    return memory


def curated_text(memory_dir: Path) -> str:
    from memory_custodian.fsutil import read_utf8

    parts = []
    for pattern in CURATED_GLOBS:
        for path in sorted(Path(memory_dir).glob(pattern)):
            if path.name != "MEMORY.md":
                parts.append(read_utf8(path))
    return "\n".join(parts)


def unparseable_files(memory_dir: Path) -> list[str]:
    """Every memory file that no longer parses: curated Markdown, the manifest, the ledger lines."""
    from memory_custodian.curated.manifest import parse_manifest
    from memory_custodian.curated.units import split_units
    from memory_custodian.errors import CustodianError
    from memory_custodian.fsutil import read_utf8
    from memory_custodian.ledger.store import Ledger

    bad = []
    for pattern in CURATED_GLOBS:
        for path in sorted(Path(memory_dir).glob(pattern)):
            try:
                text = read_utf8(path)
                if path.name == "manifest.md":
                    parse_manifest(text, str(path))
                else:
                    split_units(text)
            except CustodianError as exc:
                bad.append(f"{path.name}: {exc.one_line()}")
    try:
        _, _, problems = Ledger(memory_dir).read_events(lenient=True)
    except Exception as exc:  # noqa: BLE001 - counted, reported
        return bad + [f"ledger: {type(exc).__name__}: {exc}"]
    bad += [f"{p.where}: {p.code}" for p in problems if p.code not in RECOVERABLE]
    return bad


def replay_state(memory_dir: Path):
    from memory_custodian.ledger.store import Ledger

    events, _, problems = Ledger(memory_dir).read_events(lenient=True)
    from memory_custodian.ledger.fold import replay

    notes, by_note, fold_problems = replay(events)
    return events, notes, problems + fold_problems


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
        return {p: p.stat().st_size for p in ledger.glob("*.jsonl")} if ledger.is_dir() else {}

    def maybe_tear(self, before: dict) -> None:
        """A SIGKILL cannot split one write(), but a power cut can lose the unsynced end of an
        unacknowledged append: cut what the killed command appended at a random byte, half the time."""
        for path, size in self.shard_sizes().items():
            old = before.get(path, 0)
            if size > old + 1 and self.rng.random() < 0.5:
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
        problems = [p for p in report["problems"] if p["code"] not in RECOVERABLE]
        self.stats["doctor_problems_seen"] += len(report["problems"])
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
        present = (len(self.acked_notes - self.forgotten - self.maybe_forgotten) + len(self.acked_curated) + len(self.acked_reasons)
                   + len(self.acked_edits) + len(self.forgot_topics) - len(lost))
        return {"lost": lost, "torn_tails_moved_aside": torn_moved,
                "doctor_repair": (repaired.get("repaired") or {}), "doctor_ok_after_repair": repaired["ok"],
                "present": present}


def run_crash(tmp: Path, iterations: int, rng: random.Random) -> dict:
    root = tmp / "crash"
    make_project(root, export=False)
    crash = Crash(root, rng)
    started = time.monotonic()
    for _ in range(iterations):
        crash.one()
    verified = crash.verify()
    acked = crash.stats["acknowledged"]
    return {**crash.stats, "checked_writes": verified["present"] + len(verified["lost"]),
            "present": verified["present"], "lost": len(verified["lost"]), "lost_detail": verified["lost"][:10],
            "torn_tails_moved_aside": verified["torn_tails_moved_aside"],
            "doctor_repair": verified["doctor_repair"], "doctor_ok_after_repair": verified["doctor_ok_after_repair"],
            "acknowledged": acked, "failures": crash.failures, "seconds": round(time.monotonic() - started, 1)}


# ---- 2. concurrency: 8 processes mixing writes and reads -----------------------------------------

def _worker(args) -> dict:
    index, root, seconds, seed, use_cli = args
    sys.path.insert(0, str(SRC))
    from memory_custodian.errors import Corrupt, CustodianError, Refused
    from memory_custodian.memory import Memory

    rng = random.Random(seed)
    memory = Memory.open(root)
    out = {"worker": index, "ops": {}, "acked_notes": [], "acked_curated": [], "half_written": [],
           "unexpected": [], "refused": 0, "torn_seen": 0}
    mine_notes: list[str] = []
    n = 0
    deadline = time.monotonic() + seconds

    def count(op):
        out["ops"][op] = out["ops"].get(op, 0) + 1

    while time.monotonic() < deadline:
        n += 1
        r = rng.random()
        m = f"w{index}n{n:05d}x"
        try:
            if use_cli:
                if r < 0.6:
                    p = cli(Path(root), "remember", f"concurrent note {m}", "--format", "json")
                    if p.returncode == 0:
                        out["acked_notes"].append(json.loads(p.stdout)["id"])
                    else:
                        out["unexpected"].append(f"cli remember exit {p.returncode}: {p.stderr.strip()[:200]}")
                    count("remember (cli)")
                else:
                    p = cli(Path(root), "add", f"Concurrent constraint {m}", "--type", "constraint")
                    if p.returncode == 0:
                        out["acked_curated"].append(m)
                    else:
                        out["unexpected"].append(f"cli add exit {p.returncode}: {p.stderr.strip()[:200]}")
                    count("add (cli)")
                continue
            if r < 0.30:
                note = memory.remember(f"concurrent note {m}", tags=["concurrent"])
                out["acked_notes"].append(note.id)
                mine_notes.append(note.id)
                count("remember")
            elif r < 0.42:
                memory.add(f"Concurrent constraint {m}", type="constraint")
                out["acked_curated"].append(m)
                count("add")
            elif r < 0.50 and mine_notes:
                note = rng.choice(mine_notes)
                try:
                    memory.flag_stale(note, reason=f"check {m}")
                except Refused:
                    memory.reinstate(note, reason=f"confirmed {m}")
                count("lifecycle")
            elif r < 0.65:
                result = memory.recall("concurrent note", limit=5)
                count("recall")
                _ = result
            elif r < 0.80:
                memory.read("implementation", paths=("src/x.py",))
                count("read")
            else:
                from memory_custodian.ledger.store import Ledger

                events, _, problems = Ledger(memory.memory_dir).read_events(lenient=True)
                ids = {ev["note"] for ev in events}
                missing = [i for i in out["acked_notes"] if i not in ids]
                if missing:
                    out["half_written"].append(f"own acknowledged notes not visible: {missing[:3]}")
                for p in problems:
                    if p.code == "torn-tail":
                        out["torn_seen"] += 1  # an append in flight; replay ignores it by design
                    elif p.code not in RECOVERABLE:
                        out["half_written"].append(f"{p.code} at {p.where}")
                text = curated_text(memory.memory_dir)
                gone = [c for c in out["acked_curated"] if c not in text]
                if gone:
                    out["half_written"].append(f"own acknowledged constraints not visible: {gone[:3]}")
                count("replay+files")
        except Corrupt as exc:
            out["half_written"].append(f"Corrupt: {exc.one_line()[:200]}")
        except Refused:
            out["refused"] += 1
        except CustodianError as exc:
            out["unexpected"].append(f"{type(exc).__name__}: {exc.one_line()[:200]}")
        except Exception as exc:  # noqa: BLE001 - the finding
            out["unexpected"].append(f"{type(exc).__name__}: {exc}"[:300])
    return out


def run_concurrency(tmp: Path, seconds: float, procs: int, seed: int) -> dict:
    root = tmp / "concurrent"
    memory = make_project(root, export=True)
    ctx = multiprocessing.get_context("spawn")
    started = time.monotonic()
    with ctx.Pool(procs) as pool:
        results = pool.map(_worker, [(i, str(root), seconds, seed + i, i == 0) for i in range(procs)])
    elapsed = time.monotonic() - started
    ops: dict[str, int] = {}
    for r in results:
        for k, v in r["ops"].items():
            ops[k] = ops.get(k, 0) + v
    acked_notes = [n for r in results for n in r["acked_notes"]]
    acked_curated = [c for r in results for c in r["acked_curated"]]
    events, notes, _ = replay_state(memory.memory_dir)
    creates: dict[str, int] = {}
    for ev in events:
        if ev["op"] == "create":
            creates[ev["note"]] = creates.get(ev["note"], 0) + 1
    text = curated_text(memory.memory_dir)
    lost = [n for n in acked_notes if n not in notes] + [c for c in acked_curated if c not in text]
    dup = [n for n in acked_notes if creates.get(n, 0) > 1] + [c for c in acked_curated if text.count(c) > 1]
    bodies = [n.body for n in notes.values()]
    dup += [b for b in set(bodies) if bodies.count(b) > 1 and b.startswith("concurrent note")]
    # The mirror under load: after the last write through the CLI it must match the ledger (library
    # calls do not re-render it; the CLI and the MCP server do).
    last = cli(root, "remember", "concurrency finished", "--format", "json")
    if last.returncode == 0:
        acked_notes.append(json.loads(last.stdout)["id"])
    check = cli(root, "export", "--check")
    index_equal, index_detail = compare_index(memory)
    writes = sum(v for k, v in ops.items() if k.startswith(("remember", "add", "lifecycle")))
    reads = sum(ops.values()) - writes
    return {"processes": procs, "seconds": round(elapsed, 1), "ops": ops, "writes": writes, "reads": reads,
            "writes_per_s": round(writes / seconds, 1), "reads_per_s": round(reads / seconds, 1),
            "acknowledged": len(acked_notes) + len(acked_curated), "lost": len(lost), "duplicated": len(dup),
            "lost_detail": lost[:5], "dup_detail": dup[:5],
            "half_written_seen": sum(len(r["half_written"]) for r in results),
            "half_written_detail": [h for r in results for h in r["half_written"]][:5],
            "torn_tails_seen_by_readers": sum(r["torn_seen"] for r in results),
            "refused": sum(r["refused"] for r in results),
            "unexpected": [u for r in results for u in r["unexpected"]][:5],
            "unexpected_count": sum(len(r["unexpected"]) for r in results),
            "export_check_exit": check.returncode, "export_check": (check.stdout + check.stderr).strip()[:300],
            "index_equals_rebuild": index_equal, "index_detail": index_detail}


def compare_index(memory) -> tuple[bool, str]:
    """The incrementally caught-up index against a fresh replay, then against a full rebuild."""
    def rows(notes):
        return sorted((n.id, n.state, n.last_event, n.title) for n in notes)

    _, replayed, _ = replay_state(memory.memory_dir)
    truth = rows(n for n in replayed.values() if n.state != "forgotten")
    incremental = rows(memory.notes())
    memory.reindex()
    rebuilt = rows(memory.notes())
    if incremental != truth:
        return False, f"incremental index differs from replay ({len(incremental)} vs {len(truth)} notes)"
    if rebuilt != truth:
        return False, f"rebuilt index differs from replay ({len(rebuilt)} vs {len(truth)} notes)"
    return True, f"{len(truth)} notes identical"


# ---- 3. disk trouble: file-size limit, full disk, read-only folder --------------------------------

WRITERS = [
    ("remember", ["remember", "disk trouble note " + "x" * 2000]),
    ("add", ["add", "Disk trouble constraint " + "y" * 2000, "--type", "constraint"]),
    ("add-rule", ["add", "Disk trouble rule", "--type", "rule", "--name", "disk"]),
    ("export", ["export"]),
    ("edit-checkin", None),  # built per run
    ("reindex", ["reindex"]),
    ("compact", ["compact", "--apply"]),
]


def _snapshot(memory_dir: Path) -> dict:
    import hashlib

    out = {}
    for path in sorted(Path(memory_dir).rglob("*")):
        rel = path.relative_to(memory_dir).as_posix()
        if path.is_file() and not rel.startswith(".cache"):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _judge(result, before: dict, after: dict, memory_dir: Path) -> dict:
    err = result.stderr.strip().splitlines()
    clear = result.returncode in (1, 2) and len(err) >= 1 and err[-1].startswith("error:") and \
        "Traceback" not in result.stderr
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    return {"exit": result.returncode, "clear_error": clear or result.returncode == 0,
            "stderr": (err[-1] if err else "")[:160], "changed_after_error": changed if result.returncode else [],
            "unparseable": unparseable_files(memory_dir)}


def edit_argv(root: Path) -> list[str]:
    from memory_custodian.memory import Memory

    fd, name = tempfile.mkstemp(suffix=".md", prefix="torture-buffer-")
    os.close(fd)
    Memory.open(root).edit_checkout(name)
    with open(name, "a", encoding="utf-8") as fh:
        fh.write("\n### disk trouble edit\n- kind: finding\n\n" + "z" * 3000 + "\n")
    return ["edit", "--checkin", name, "--reason", "disk"]


def disk_case(root: Path, label: str, argv, preexec=None) -> dict:
    from memory_custodian.memory import Memory

    memory = Memory.open(root)
    if argv is None:
        argv = edit_argv(root)
    before = _snapshot(memory.memory_dir)
    result = cli(root, *argv, preexec=preexec)
    return {"case": label, **_judge(result, before, _snapshot(memory.memory_dir), memory.memory_dir)}


def fsize_limit(limit: int):
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def run_fsize(tmp: Path, quick: bool) -> list[dict]:
    """RLIMIT_FSIZE: `edge` sits just above the biggest file (an append or rewrite runs out half-way),
    `tight` below every file (nothing can grow). Every writer must fail cleanly, nothing corrupted."""
    out = []
    writers = [w for w in WRITERS if w[0] in ("remember", "add", "reindex")] if quick else WRITERS
    for label, argv in writers:
        for mode in ("edge", "tight"):
            root = tmp / f"fsize-{mode}-{label}"
            memory = make_project(root, export=True)
            for i in range(3):
                memory.remember(f"padding note {i} " + "p" * 300)
            memory.reindex()
            biggest = max(p.stat().st_size for p in Path(memory.memory_dir).rglob("*") if p.is_file()
                          and ".cache" not in p.parts)
            limit = biggest + 64 if mode == "edge" else 200
            out.append(disk_case(root, f"fsize-{mode}:{label}", argv, fsize_limit(limit)))
    return out


def run_mounts(tmp: Path) -> list[dict]:
    """A full tmpfs and a read-only bind mount, in a private mount namespace (root only)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return [{"case": "mounts", "skipped": "needs root and unshare(1) for a private tmpfs / read-only bind"}]
    inner = subprocess.run(["unshare", "-m", "--propagation", "private", PY, __file__, "--_mounts-inner", str(tmp)],
                           capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(SRC)))
    try:
        return json.loads(inner.stdout)
    except ValueError:
        return [{"case": "mounts", "skipped": f"could not run: {(inner.stderr or inner.stdout).strip()[-300:]}"}]


def _mounts_inner(tmp: Path) -> list[dict]:
    out = []
    # full disk: a small tmpfs, filled to the brim
    for label, argv in WRITERS:
        mnt = tmp / f"tmpfs-{label}"
        mnt.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)]).returncode:
            return [{"case": "mounts", "skipped": "mount -t tmpfs refused"}]
        root = mnt / "p"
        memory = make_project(root, export=True)
        memory.reindex()
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 512):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        out.append(disk_case(root, f"full-disk:{label}", argv))
    # read-only: the project bind-mounted read-only over itself
    readers = [("read", ["read", "--task", "implementation"]), ("recall", ["recall", "lock"]),
               ("export-check", ["export", "--check"]), ("doctor", ["doctor"])]
    for label, argv in WRITERS + readers:
        root = tmp / f"ro-{label}" / "p"
        make_project(root, export=True)
        argv = edit_argv(root) if argv is None else argv
        if subprocess.run(["mount", "--bind", str(root), str(root)]).returncode or \
                subprocess.run(["mount", "-o", "remount,bind,ro", str(root)]).returncode:
            return out + [{"case": "read-only", "skipped": "read-only bind mount refused"}]
        out.append(disk_case(root, f"read-only:{label}", argv))
    return out


def run_readonly_chmod(tmp: Path) -> list[dict]:
    """Without root, permission bits make a folder read-only; root ignores them."""
    if os.geteuid() == 0:
        return [{"case": "read-only (chmod)", "skipped": "running as root: permission bits do not bind; "
                 "see the read-only bind mount cases"}]
    out = []
    for label, argv in WRITERS:
        root = tmp / f"chmod-{label}"
        memory = make_project(root, export=True)
        for path in [Path(memory.memory_dir), *Path(memory.memory_dir).rglob("*")]:
            if ".cache" not in path.parts:
                path.chmod(path.stat().st_mode & ~0o222)
        try:
            out.append(disk_case(root, f"read-only-chmod:{label}", argv))
        finally:
            for path in [Path(memory.memory_dir), *Path(memory.memory_dir).rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)
    return out


def disk_ok(row: dict) -> bool:
    return "skipped" in row or (row["clear_error"] and not row["changed_after_error"] and not row["unparseable"])


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
    parser.add_argument("--_mounts-inner", dest="mounts_inner", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.mounts_inner:
        print(json.dumps(_mounts_inner(Path(args.mounts_inner))))
        return 0
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
    k = report.get("concurrency")
    if k:
        ok &= k["lost"] == 0 and k["duplicated"] == 0 and k["half_written_seen"] == 0 and k["unexpected_count"] == 0
        ok &= k["export_check_exit"] == 0 and k["index_equals_rebuild"]
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
