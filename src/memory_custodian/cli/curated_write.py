"""CLI commands of the curated write path: add, forget, compact, enable, migrate.

Each opens the Memory, calls one method, prints the plan (stdout) and any recovery or budget
warning (stderr). Hard and purge forget print nothing but counts and line numbers.
"""

from __future__ import annotations

import sys

from ..base.errors import InvalidInput, ProblemsFound, Refused
from .output import Exit, echo, emit_json, open_memory, warn


def _print_result(result, fmt: str, *, preview_hint: str | None = None) -> None:
    if result.recovered:
        warn(result.recovered)
    if fmt == "json":
        emit_json(result.to_dict())
        return
    for line in result.plan:
        echo(line)
    if preview_hint and not result.applied and result.changes:
        echo(f"plan {result.plan_id} (preview; nothing changed)")
        echo(preview_hint.format(plan_id=result.plan_id))
    elif result.applied:
        echo(f"applied: {len(result.changes)} file(s) written")
    for note in getattr(result, "notes", []):
        warn(note)


def add(project_root, memory_dir, text, kind, reasons, scope, name, area, allow_long, title, fmt):
    memory = open_memory(project_root, memory_dir)
    result = memory.add(text, kind, reasons=list(reasons), scope=scope, name=name, area=area, allow_long=allow_long,
                        title=title)
    _print_result(result, fmt)
    if fmt != "json":
        info = result.budget
        if info.get("budget"):
            echo(f"budget: {info['path']} {info['tokens']}/{info['budget']} tokens ({info['percent']}%)")
        else:
            echo(f"budget: {info['path']} {info['tokens']} tokens (unbudgeted)")
    for message in result.warnings:
        warn(message)


def forget(project_root, memory_dir, topic, mode, apply_, plan_id, allow_broad_match, note_id, yes, fmt):
    if (topic is None) == (note_id is None):
        raise InvalidInput("give exactly one of TOPIC or --note ID")
    memory = open_memory(project_root, memory_dir)
    if note_id is not None:
        if not yes:
            _confirm(f"Delete note {note_id} from the ledger for good?")
        forgotten = memory.forget_note(note_id.lstrip("#"))
        if forgotten.mirror_warning:
            warn(forgotten.mirror_warning)
        if fmt == "json":
            emit_json(forgotten.to_dict())
        else:
            echo(f"forgot note #{forgotten.note or note_id.lstrip('#')}")
            if forgotten.warning:
                warn(forgotten.warning)
        return
    result = memory.forget(topic, mode=mode, apply=apply_, plan_id=plan_id, allow_broad_match=allow_broad_match)
    hint = ("to apply it, rerun this command with: --apply --plan {plan_id}"
            + (" --allow-broad-match" if result.needs_allow_broad_match else ""))
    _print_result(result, fmt, preview_hint=hint)


def compact(project_root, memory_dir, target, apply_, plan_id, archive_oldest, fmt):
    memory = open_memory(project_root, memory_dir)
    result = memory.compact(target=target, apply=apply_, plan_id=plan_id, archive_oldest=archive_oldest)
    _print_result(result, fmt, preview_hint="to apply it: memory-custodian compact"
                  + (f" --target {target}" if target else "") + (" --archive-oldest" if archive_oldest else "")
                  + " --apply --plan {plan_id}")


def enable(project_root, memory_dir, module, paths, fmt):
    memory = open_memory(project_root, memory_dir)
    _print_result(memory.enable(module, paths=list(paths)), fmt)


def migrate(project_root, memory_dir, apply_, plan_id, fmt):
    memory = open_memory(project_root, memory_dir)
    _print_result(memory.migrate(apply=apply_, plan_id=plan_id), fmt,
                  preview_hint="to apply it: memory-custodian migrate --apply --plan {plan_id}")


def _confirm(question: str) -> None:
    """Ask on the terminal; anything but yes ends the command (exit 1) with nothing changed."""
    if not sys.stdin.isatty():
        raise Refused("forget --note deletes the note's text for good — pass --yes to confirm")
    sys.stderr.write(f"{question} [y/N]: ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise Exit("aborted; nothing was deleted", 1)


def emit_privacy(findings: list, fmt: str) -> None:
    """Print `check --privacy` findings (kind and place only); exit 1 when there are any."""
    if fmt == "json":
        emit_json({"findings": [f.to_dict() for f in findings], "ok": not findings})
    else:
        for f in findings:
            echo(f"{f.path}:{f.line}:{f.column}: what looks like a {f.kind} — remove it "
                       "(and rotate the credential: git history still holds it)")
        echo(f"privacy: {len(findings)} finding{'s' if len(findings) != 1 else ''}")
    if findings:
        raise ProblemsFound(f"{len(findings)} credential-like value(s) found in memory; remove them and rotate them")
