"""CLI commands of the curated write path: add, forget, compact, enable, migrate.

Each opens the Memory, calls one method, prints the plan (stdout) and any recovery or budget
warning (stderr). Hard and purge forget print nothing but counts and line numbers.
"""

from __future__ import annotations

import click

from . import emit_json, format_option, handle_errors, memory_options, open_memory, warn


def _print_result(result, fmt: str, *, preview_hint: str | None = None) -> None:
    if result.recovered:
        warn(result.recovered)
    if fmt == "json":
        emit_json(result.to_dict())
        return
    for line in result.plan:
        click.echo(line)
    if preview_hint and not result.applied and result.changes:
        click.echo(f"plan {result.plan_id} (preview; nothing changed)")
        click.echo(preview_hint.format(plan_id=result.plan_id))
    elif result.applied:
        click.echo(f"applied: {len(result.changes)} file(s) written")
    for note in getattr(result, "notes", []):
        warn(note)


@click.command()
@memory_options
@click.argument("text")
@click.option("--type", "kind", required=True, metavar="TYPE",
              help="decision, constraint, preference, tombstone, rule, profile, area or inbox.")
@click.option("--reason", "reasons", multiple=True, metavar="R", help="Why (decision and tombstone; repeatable).")
@click.option("--scope", default=None, metavar="S", help="Where the decision or tombstone applies.")
@click.option("--name", default=None, metavar="N", help="The rule, profile or area file name (rules/N.md).")
@click.option("--area", default=None, metavar="A", help="Write a decision/constraint/preference/tombstone to areas/A.md.")
@click.option("--allow-long", is_flag=True, help="Accept a decision over its 120-token entry budget (after review).")
@format_option
@handle_errors
def add(project_root, memory_dir, text, kind, reasons, scope, name, area, allow_long, fmt):
    """Add one entry to curated memory, in MemoryCustodian's format (refuses credentials)."""
    memory = open_memory(project_root, memory_dir)
    result = memory.add(text, kind, reasons=list(reasons), scope=scope, name=name, area=area, allow_long=allow_long)
    _print_result(result, fmt)
    if fmt != "json":
        info = result.budget
        if info.get("budget"):
            click.echo(f"budget: {info['path']} {info['tokens']}/{info['budget']} tokens ({info['percent']}%)")
        else:
            click.echo(f"budget: {info['path']} {info['tokens']} tokens (unbudgeted)")
    for message in result.warnings:
        warn(message)


@click.command()
@memory_options
@click.argument("topic", required=False)
@click.option("--mode", type=click.Choice(["soft", "hard", "purge"]), default="soft", show_default=True,
              help="soft: leave a tombstone naming the topic; hard: a generic tombstone; purge: archive too, no tombstone.")
@click.option("--apply", "apply_", is_flag=True, help="Write the plan (default: preview only).")
@click.option("--plan", "plan_id", default=None, metavar="ID", help="With --apply: refuse unless the preview's plan still holds.")
@click.option("--allow-broad-match", is_flag=True, help="Allow a topic under 4 characters or matching 3+ entries.")
@click.option("--note", "note_id", default=None, metavar="ID", help="Instead: hard-delete one ledger note (#id or prefix).")
@click.option("--yes", is_flag=True, help="With --note: do not ask for confirmation.")
@format_option
@handle_errors
def forget(project_root, memory_dir, topic, mode, apply_, plan_id, allow_broad_match, note_id, yes, fmt):
    """Remove a topic from curated memory (preview, then --apply), or one ledger note with --note.

    Matching is whole-word and case-insensitive. Hard and purge never print the topic.
    """
    from ..errors import InvalidInput, Refused

    if (topic is None) == (note_id is None):
        raise InvalidInput("give exactly one of TOPIC or --note ID")
    memory = open_memory(project_root, memory_dir)
    if note_id is not None:
        if not yes:
            import sys

            if not sys.stdin.isatty():
                raise Refused("forget --note deletes the note's text for good — pass --yes to confirm")
            click.confirm(f"Delete note {note_id} from the ledger for good?", abort=True, err=True)
        forgotten = memory.forget_note(note_id.lstrip("#"))
        if forgotten.mirror_warning:
            warn(forgotten.mirror_warning)
        result = forgotten.to_dict()
        if fmt == "json":
            emit_json(result)
        else:
            click.echo(f"forgot note #{result.get('note', note_id.lstrip('#'))}")
            if result.get("warning"):
                warn(result["warning"])
        return
    result = memory.forget(topic, mode=mode, apply=apply_, plan_id=plan_id, allow_broad_match=allow_broad_match)
    hint = ("to apply it, rerun this command with: --apply --plan {plan_id}"
            + (" --allow-broad-match" if result.needs_allow_broad_match else ""))
    _print_result(result, fmt, preview_hint=hint)


@click.command()
@memory_options
@click.option("--target", default=None, metavar="FILE", help="Only this file (e.g. decisions.md); default: every file compact handles.")
@click.option("--apply", "apply_", is_flag=True, help="Write the plan (default: preview only).")
@click.option("--plan", "plan_id", default=None, metavar="ID", help="With --apply: refuse unless the preview's plan still holds.")
@click.option("--archive-oldest", is_flag=True,
              help="Move the oldest entries of an over-budget decisions/changelog file to archive/.")
@format_option
@handle_errors
def compact(project_root, memory_dir, target, apply_, plan_id, archive_oldest, fmt):
    """Drop duplicates and tombstoned inbox items; list candidates; archive the oldest over budget."""
    memory = open_memory(project_root, memory_dir)
    result = memory.compact(target=target, apply=apply_, plan_id=plan_id, archive_oldest=archive_oldest)
    _print_result(result, fmt, preview_hint="to apply it: memory-custodian compact"
                  + (f" --target {target}" if target else "") + (" --archive-oldest" if archive_oldest else "")
                  + " --apply --plan {plan_id}")


@click.command()
@memory_options
@click.argument("module")
@click.option("--path", "paths", multiple=True, metavar="GLOB",
              help="For areas/NAME: load it when a touched path matches (repeatable; `*`, `?`, `**`).")
@format_option
@handle_errors
def enable(project_root, memory_dir, module, paths, fmt):
    """Create an optional module and index it: preferences, changelog, rules, profiles, archive,
    rules/NAME, profiles/NAME or areas/NAME. Idempotent."""
    memory = open_memory(project_root, memory_dir)
    _print_result(memory.enable(module, paths=list(paths)), fmt)


@click.command()
@memory_options
@click.option("--apply", "apply_", is_flag=True, help="Write the plan (default: preview only).")
@click.option("--plan", "plan_id", default=None, metavar="ID", help="With --apply: refuse unless the preview's plan still holds.")
@format_option
@handle_errors
def migrate(project_root, memory_dir, apply_, plan_id, fmt):
    """Bring manifest.md's protocol metadata and routes up to date (never downgrades)."""
    memory = open_memory(project_root, memory_dir)
    _print_result(memory.migrate(apply=apply_, plan_id=plan_id), fmt,
                  preview_hint="to apply it: memory-custodian migrate --apply --plan {plan_id}")


def emit_privacy(findings: list, fmt: str) -> None:
    """Print `check --privacy` findings (kind and place only); exit 1 when there are any."""
    from ..errors import ProblemsFound

    if fmt == "json":
        emit_json({"findings": [f.to_dict() for f in findings], "ok": not findings})
    else:
        for f in findings:
            click.echo(f"{f.path}:{f.line}:{f.column}: what looks like a {f.kind} — remove it "
                       "(and rotate the credential: git history still holds it)")
        click.echo(f"privacy: {len(findings)} finding{'s' if len(findings) != 1 else ''}")
    if findings:
        raise ProblemsFound(f"{len(findings)} credential-like value(s) found in memory; remove them and rotate them")
