"""The curated write path: add, forget, compact, enable, migrate; and check_privacy.

Every command takes the project lock, first finishes any multi-file plan an interrupted command
left behind (saying so in `recovered`), builds its plan from what is on disk, and writes it
all-or-nothing. Previewing commands return the plan and its id; applying re-checks the id.
Each returns a plain dict (JSON-ready, no secrets, and for hard/purge forget no topic).
"""

from __future__ import annotations


def _memory_rel(memory) -> str:
    import os

    rel = os.path.relpath(memory.memory_dir_str, memory.root_str).replace(os.sep, "/")
    return "docs/memory" if rel.startswith("..") else rel


def _run_plan(memory, command: str, build, *, apply: bool, plan_id: str | None = None, label: str,
              guard=None) -> dict:
    from .. import fsutil
    from ..errors import InvalidInput
    from ..project import require_memory_dir
    from . import journal

    if plan_id is not None and not apply:
        raise InvalidInput("--plan is used with --apply: rerun with --apply --plan ID")
    require_memory_dir(memory.memory_dir)
    with fsutil.project_lock(memory.memory_dir):
        recovered = journal.recover(memory.memory_dir)
        plan = build()
        if apply:
            plan.check_plan_id(plan_id)
            if guard is not None:
                guard(plan)
            journal.apply_changes(memory.memory_dir, plan.effective, label)
    result = {
        "applied": bool(apply) and bool(plan.effective),
        "changes": plan.changes_summary(),
        "plan": plan.lines,
        "plan_id": plan.plan_id,
        "recovered": recovered,
    }
    result.update(plan.details)
    result["command"] = command
    return result


# ---- commands -----------------------------------------------------------------------------------

def add(memory, text: str, type: str, reasons: list[str] | None = None, scope: str | None = None,
        name: str | None = None, area: str | None = None, allow_long: bool = False) -> dict:
    """Add one entry (decision, constraint, preference, tombstone, rule, profile, area or inbox)."""
    from . import add as add_mod
    from .entries import today

    return _run_plan(memory, "add", lambda: add_mod.build_plan(
        memory.memory_dir, text, type, list(reasons or []), scope, name, area, allow_long, today(),
        _memory_rel(memory)), apply=True, label="add")


def forget(memory, topic: str, mode: str = "soft", apply: bool = False, plan_id: str | None = None,
           allow_broad_match: bool = False) -> dict:
    """Remove every curated entry mentioning `topic` (preview unless `apply`)."""
    from ..errors import Refused
    from . import forget as forget_mod
    from .entries import today

    def guard(plan):
        if plan.details["broad_match"] and not allow_broad_match:
            short = len(topic.strip()) < forget_mod.MIN_TOPIC_CHARS
            raise Refused(
                ("the topic is shorter than 4 characters" if short else
                 f"the topic matches {plan.details['removed_entries']} entries")
                + " — review the preview, then pass --allow-broad-match to apply; nothing was changed"
            )

    return _run_plan(memory, "forget", lambda: forget_mod.build_plan(
        memory.memory_dir, topic, mode, today(), allow_broad_match), apply=apply, plan_id=plan_id,
        label=f"forget ({mode})", guard=guard)


def compact(memory, target: str | None = None, apply: bool = False, plan_id: str | None = None,
            archive_oldest: bool = False) -> dict:
    """Mechanical maintenance: dedupe, drop tombstoned inbox items, archive the oldest (preview unless `apply`)."""
    from . import compact as compact_mod
    from .entries import today

    return _run_plan(memory, "compact", lambda: compact_mod.build_plan(
        memory.memory_dir, target, today(), archive_oldest, _memory_rel(memory)), apply=apply, plan_id=plan_id,
        label="compact")


def enable(memory, module: str, paths: list[str] | None = None) -> dict:
    """Create an optional module and index it in the manifest (idempotent)."""
    from . import enable as enable_mod
    from .entries import today

    return _run_plan(memory, "enable", lambda: enable_mod.build_plan(
        memory.memory_dir, module, list(paths or []), today(), _memory_rel(memory)), apply=True, label="enable")


def migrate(memory, apply: bool = False, plan_id: str | None = None) -> dict:
    """Bring the manifest's protocol metadata and routes up to date (preview unless `apply`)."""
    from . import migrate as migrate_mod

    return _run_plan(memory, "migrate", lambda: migrate_mod.build_plan(memory.memory_dir), apply=apply,
                     plan_id=plan_id, label="migrate")


def finish_interrupted_writes(memory) -> str | None:
    """Finish a multi-file plan a killed command left behind; what was done, or None if nothing was pending."""
    from .. import fsutil
    from ..project import require_memory_dir
    from . import journal

    require_memory_dir(memory.memory_dir)
    if not journal.pending(memory.memory_dir):
        return None
    with fsutil.project_lock(memory.memory_dir):
        return journal.recover(memory.memory_dir)


def interrupted_write_pending(memory) -> bool:
    """One stat: whether a killed multi-file write awaits `finish_interrupted_writes` (for readers to warn)."""
    from . import journal

    return journal.pending(memory.memory_dir)


def check_privacy(memory) -> list[dict]:
    """Every credential-looking span in the memory folder: path, line, column, kind — never the value."""
    from pathlib import Path

    from .. import fsutil
    from ..project import require_memory_dir
    from ..secrets import scan
    from .files import curated_files

    require_memory_dir(memory.memory_dir)
    memory_dir = Path(memory.memory_dir)
    paths = curated_files(memory_dir, include_archive=True, include_manifest=True)
    if (memory_dir / "MEMORY.md").is_file():
        paths.append("MEMORY.md")
    ledger = memory_dir / "ledger"
    if ledger.is_dir():
        paths.extend(f"ledger/{p.name}" for p in sorted(ledger.glob("*.jsonl")))
    findings = []
    for rel in sorted(paths):
        text = fsutil.read_utf8(memory_dir / rel)
        findings.extend(dict(f.to_dict(), path=rel) for f in scan(text))
    return sorted(findings, key=lambda f: (f["path"], f["line"], f["column"], f["kind"]))
