"""The curated write path: add, forget, compact, enable, migrate; and check_privacy.

Every command takes the project lock, first finishes any multi-file plan an interrupted command
left behind (saying so in `recovered`), builds its plan from what is on disk, and writes it
all-or-nothing. Previewing commands return the plan and its id; applying re-checks the id.
Each returns a record (`plans.PlanResult`; no secrets, and for hard/purge forget no topic) whose
`to_dict()` is the JSON the CLI prints.
"""

from __future__ import annotations

import os

from ...base import fsutil
from ...base.errors import CustodianError, InvalidInput, Refused
from ...base.project import require_memory_dir
from ...base.records import Record
from ...base.scrub import scrub_cache_matching
from ...base.secrets import scan
from ..manifest import migrate as migrate_mod
from ..parse.files import curated_files
from . import add as add_mod
from . import compact as compact_mod
from . import enable as enable_mod
from . import forget as forget_mod
from . import journal
from .entries import today


def _memory_rel(memory) -> str:
    rel = os.path.relpath(memory.memory_dir_str, memory.root_str).replace(os.sep, "/")
    return "docs/memory" if rel.startswith("..") else rel


def _run_plan(memory, command: str, result_type, build, *, apply: bool, plan_id: str | None = None,
              label: str, guard=None):
    if plan_id is not None and not apply:
        raise InvalidInput("{field} is used with {field:apply}: rerun with {field:apply} {field} ID", field="plan_id")
    memory_dir = require_memory_dir(memory.memory_dir_str)
    # a folder no command of ours has written to yet (as 0.9.1 leaves it) gets a `.cache/` only
    # when something is actually written: first a pass that creates nothing
    fresh = not os.path.exists(os.path.join(memory_dir, fsutil.CACHE_DIR, fsutil.LOCK_FILE))
    plan, recovered, wrote = _plan_pass(memory_dir, build, apply=apply, create=not fresh, plan_id=plan_id, guard=guard,
                                        label=label)
    if apply and fresh and plan.effective:
        plan, recovered, wrote = _plan_pass(memory_dir, build, apply=True, create=True, plan_id=plan_id, guard=guard,
                                            label=label)
    return result_type(applied=wrote, changes=plan.changes_summary(), plan=plan.lines, plan_id=plan.plan_id,
                       recovered=recovered, command=command, **plan.details)


def _plan_pass(memory_dir, build, *, apply: bool, create: bool, plan_id, guard, label: str):
    """Build the plan under the lock; with `apply` and `create` also finish an interrupted write and write it."""
    writing = apply and create
    with fsutil.project_lock(memory_dir, create=create):
        recovered = journal.recover(memory_dir) if writing else None
        try:
            plan = _checked_plan(memory_dir, build, apply=apply, writing=writing, plan_id=plan_id, guard=guard,
                                 label=label)
        except CustodianError as exc:
            if recovered is None:
                raise
            raise exc.after(recovered) from exc  # the files it finished were changed: say so
    return plan, recovered, writing and bool(plan.effective)


def _checked_plan(memory_dir, build, *, apply: bool, writing: bool, plan_id, guard, label: str):
    plan = build()
    if apply:
        plan.check_plan_id(plan_id)
        if guard is not None:
            guard(plan)
    if writing:
        journal.apply_changes(memory_dir, plan.effective, label)
    elif journal.pending(memory_dir):
        plan.lines.insert(0, "warning: a killed write left .cache/journal.json; the next --apply finishes it "
                             "first, and this preview shows the files as they are now")
    return plan


class PrivacyFinding(Record):
    """A credential-looking span in the memory folder: the file (relative to it), 1-based line and
    column, and what it looks like (`kind`) — never the value."""

    path: str
    line: int
    column: int
    kind: str

    def to_dict(self) -> dict:
        return self.as_dict()


# ---- commands -----------------------------------------------------------------------------------

def add(memory, text: str, type: str, reasons: list[str] | None = None, scope: str | None = None,
        name: str | None = None, area: str | None = None, allow_long: bool = False, title: str | None = None):
    """Add one entry (decision, constraint, preference, tombstone, rule, profile, area or inbox)."""
    return _run_plan(memory, "add", add_mod.AddResult, lambda: add_mod.build_plan(
        memory.memory_dir_str, text, type, list(reasons or []), scope, name, area, allow_long, today(),
        _memory_rel(memory), title), apply=True, label="add")


def forget(memory, topic: str, mode: str = "soft", apply: bool = False, plan_id: str | None = None,
           allow_broad_match: bool = False):
    """Remove every curated entry mentioning `topic` (preview unless `apply`)."""
    def guard(plan):
        if plan.details.get("blocked"):
            raise forget_mod.refusal(plan.details["blocked"])
        if plan.details["broad_match"] and not allow_broad_match:
            short = len(topic.strip()) < forget_mod.MIN_TOPIC_CHARS
            removed, loose = plan.details["removed_entries"], plan.details["loose_matches"]
            raise Refused(
                ("the topic is shorter than 4 characters" if short else
                 f"the topic matches {removed} entries" if removed >= forget_mod.BROAD_MATCH_UNITS else
                 f"the topic appears in {loose} entries, counting parts of words as MemoryCustodian 0.9.1 does "
                 f"({removed} as a whole word, which is what forget removes)")
                + " — review the preview, then pass {field} to apply; nothing was changed",
                field="allow_broad_match",
            )

    result = _run_plan(memory, "forget", forget_mod.ForgetResult, lambda: forget_mod.build_plan(
        memory.memory_dir_str, topic, mode, today(), allow_broad_match), apply=apply, plan_id=plan_id,
        label=f"forget ({mode})", guard=guard)
    if result.applied and mode != "soft":
        _scrub_topic(memory.memory_dir_str, forget_mod.topic_pattern(topic))
    return result


def _scrub_topic(memory_dir: str, pattern) -> None:
    """A hard forget leaves the topic in no cache file: the prompt hook keeps the user's last message
    (quote binding, the checkpoint) in `.cache/sessions/`. The index holds the ledger, not these files."""
    cache = os.path.join(memory_dir, fsutil.CACHE_DIR)
    with fsutil.project_lock(memory_dir):
        scrub_cache_matching(cache, pattern, skip=("index.sqlite",))


def compact(memory, target: str | None = None, apply: bool = False, plan_id: str | None = None,
            archive_oldest: bool = False):
    """Mechanical maintenance: dedupe, drop tombstoned inbox items, archive the oldest (preview unless `apply`)."""
    def guard(plan):
        if plan.details["refusals"]:
            raise Refused(plan.details["refusals"][0], field="archive_oldest")

    return _run_plan(memory, "compact", compact_mod.CompactResult, lambda: compact_mod.build_plan(
        memory.memory_dir_str, target, today(), archive_oldest, _memory_rel(memory)), apply=apply, plan_id=plan_id,
        label="compact", guard=guard)


def enable(memory, module: str, paths: list[str] | None = None):
    """Create an optional module and index it in the manifest (idempotent)."""
    return _run_plan(memory, "enable", enable_mod.EnableResult, lambda: enable_mod.build_plan(
        memory.memory_dir_str, module, list(paths or []), today(), _memory_rel(memory)), apply=True, label="enable")


def migrate(memory, apply: bool = False, plan_id: str | None = None):
    """Bring the manifest's protocol metadata and routes up to date (preview unless `apply`)."""
    return _run_plan(memory, "migrate", migrate_mod.MigrateResult, lambda: migrate_mod.build_plan(memory.memory_dir_str),
                     apply=apply, plan_id=plan_id, label="migrate")


def finish_interrupted_writes(memory) -> str | None:
    """Finish a multi-file plan a killed command left behind; what was done, or None if nothing was pending."""
    require_memory_dir(memory.memory_dir_str)
    if not journal.pending(memory.memory_dir_str):
        return None
    with fsutil.project_lock(memory.memory_dir_str):
        return journal.recover(memory.memory_dir_str)


def interrupted_write_pending(memory) -> bool:
    """One stat: whether a killed multi-file write awaits `finish_interrupted_writes` (for readers to warn)."""
    return journal.pending(memory.memory_dir_str)


def check_privacy(memory) -> list:
    """Every credential-looking span in the memory folder: path, line, column, kind — never the value."""
    memory_dir = require_memory_dir(memory.memory_dir_str)
    paths = curated_files(memory_dir, include_archive=True, include_manifest=True)
    if os.path.isfile(os.path.join(memory_dir, "MEMORY.md")):
        paths.append("MEMORY.md")
    ledger = os.path.join(memory_dir, "ledger")
    if os.path.isdir(ledger):
        paths.extend(f"ledger/{name}" for name in sorted(os.listdir(ledger)) if name.endswith(".jsonl"))
    findings: list[PrivacyFinding] = []
    for rel in sorted(paths):
        text = fsutil.read_utf8(os.path.join(memory_dir, rel))
        findings.extend(PrivacyFinding(rel, f.line, f.column, f.kind) for f in scan(text))
    return sorted(findings, key=lambda f: (f.path, f.line, f.column, f.kind))
