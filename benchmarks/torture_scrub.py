"""After the crash run: a hard delete must leave the deleted text in no file under the project.

Killed writers leave temp files, journals and torn tails holding text; a later `forget --note`
and a curated `forget --mode hard` must scrub every one of them, the index, the session cache
and a mirror exported by hand, and the next write must leave no temp file behind.
"""

from __future__ import annotations

import json
from pathlib import Path

from torture_common import cli

LEDGER_PHRASE = "scrubledgerphrase qv7 the deploy key lives in the blue binder"
CURATED_PHRASE = "scrubcuratedphrase qv7 never page the night shift for staging"


def plant(root: Path) -> str:
    """The two texts a later hard delete removes, and a hand export that copies the ledger one."""
    out = cli(root, "remember", LEDGER_PHRASE, "--format", "json")
    cli(root, "add", f"Constraint {CURATED_PHRASE}", "--type", "constraint")
    cli(root, "export")
    return json.loads(out.stdout)["id"]


def _files(root: Path):
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(root).parts \
                and not path.name.startswith(".torture-buffer-"):  # the run's own edit buffers
            yield path


def scrub_check(root: Path, note_id: str) -> dict:
    before = [p for p in _files(root) if any(ph.encode() in p.read_bytes() for ph in (LEDGER_PHRASE, CURATED_PHRASE))]
    forgot = cli(root, "forget", "--note", note_id, "--yes")
    hard = cli(root, "forget", CURATED_PHRASE, "--mode", "hard", "--apply")
    nxt = cli(root, "remember", "the next write after the hard delete")
    leaks = [str(p.relative_to(root)) for p in _files(root)
             if any(phrase.encode() in p.read_bytes() for phrase in (LEDGER_PHRASE, CURATED_PHRASE))]
    temps = [str(p.relative_to(root)) for p in _files(root) if ".tmp-" in p.name]
    doctor = cli(root, "doctor")
    return {"copies_before": len(before), "forget_exit": forgot.returncode, "hard_forget_exit": hard.returncode,
            "next_write_exit": nxt.returncode,
            "forget_stderr": (forgot.stderr + hard.stderr).strip()[-300:], "leaks": leaks, "temp_files": temps,
            "doctor_exit": doctor.returncode,
            "doctor": " | ".join(line for line in doctor.stdout.splitlines() if not line.startswith("ok"))[-600:]}


def scrub_ok(s: dict) -> bool:
    return (s["forget_exit"] == 0 and s["hard_forget_exit"] == 0 and s["next_write_exit"] == 0 and not s["leaks"]
            and not s["temp_files"] and s["doctor_exit"] == 0)
