"""Shared by the torture scripts: real CLI processes, a seeded project, and the checks that say
whether a memory folder still parses and what it holds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
if str(SRC) not in sys.path:
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
    # a template brief is a check and doctor problem: the torture project is a described one
    (root / "docs" / "memory" / "brief.md").write_text("# Brief\n\nA project the torture run writes to.\n",
                                                      encoding="utf-8")
    # Hundreds of writes (a tombstone per forget) outgrow the default budgets, as a busy team's memory
    # does; its budgets are raised as that team would, so doctor judges what the crashes left, not size.
    manifest = root / "docs" / "memory" / "manifest.md"
    manifest.write_text(re.sub(r"(\d+) tokens max", lambda m: f"{int(m.group(1)) * 20} tokens max",
                               manifest.read_text(encoding="utf-8")), encoding="utf-8")
    memory.add("Seed constraint: no network in unit tests", type="constraint")
    memory.remember("Seed note: the lock is released before restart", kind="gotcha", paths=["src/**"])
    if export:
        memory.export_enable()
    return memory


def curated_text(memory_dir: Path) -> str:
    from memory_custodian.base.fsutil import read_utf8

    parts = []
    for pattern in CURATED_GLOBS:
        for path in sorted(Path(memory_dir).glob(pattern)):
            if path.name != "MEMORY.md":
                parts.append(read_utf8(path))
    return "\n".join(parts)


def unparseable_files(memory_dir: Path) -> list[str]:
    """Every memory file that no longer parses: curated Markdown, the manifest, the ledger lines."""
    from memory_custodian.base.errors import CustodianError
    from memory_custodian.base.fsutil import read_utf8
    from memory_custodian.curated.manifest.reader import parse_manifest
    from memory_custodian.curated.parse.units import split_units
    from memory_custodian.ledger.storage.store import Ledger

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
    except Exception as exc:
        return bad + [f"ledger: {type(exc).__name__}: {exc}"]
    bad += [f"{p.where}: {p.code}" for p in problems if p.code not in RECOVERABLE]
    return bad


def replay_state(memory_dir: Path):
    from memory_custodian.ledger.storage.store import Ledger

    events, _, problems = Ledger(memory_dir).read_events(lenient=True)
    from memory_custodian.ledger.storage.fold import replay

    notes, _by_note, fold_problems = replay(events)
    return events, notes, problems + fold_problems
