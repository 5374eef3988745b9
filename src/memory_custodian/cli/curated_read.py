"""CLI commands of the curated read path: init, read, check, status."""

from __future__ import annotations

import sys

import click

from . import emit_json, format_option, handle_errors, memory_options, open_memory


@click.command()
@memory_options
@click.option("--extended", is_flag=True, help="Also create preferences.md, changelog.md, rules/, profiles/, areas/, archive/.")
@click.option("--agent", "agents", multiple=True, type=click.Choice(["claude", "codex", "gemini", "all"]),
              help="Also install this agent's entry points (repeatable).")
@click.option("--remove", is_flag=True, help="Remove the agent entry points instead (with --agent; default all).")
@format_option
@handle_errors
def init(project_root, memory_dir, extended, agents, remove, fmt):
    """Create docs/memory/ with the six core files (never overwriting anything).

    Also creates the private .cache/ folder and a .gitattributes rule so git merges the
    ledger by union.
    """
    memory = open_memory(project_root, memory_dir)
    result = memory.init(extended=extended, agents=agents, remove=remove)
    if fmt == "json":
        emit_json(result.to_dict())
        return
    if not remove:
        for path in result.created:
            click.echo(f"created {path}")
        for path in result.kept:
            click.echo(f"kept    {path} (already exists, left alone)")
        if result.gitattributes != "unchanged":
            click.echo(f"{result.gitattributes} .gitattributes ({result.memory_dir}/ledger/*.jsonl merge=union)")
    report = result.agents
    if isinstance(report, dict):
        for key in ("changed", "removed", "unchanged"):
            for path in report.get(key) or ():
                click.echo(f"{key:<9} {path}")
    elif report is not None:
        click.echo(str(report))
    if f"{result.memory_dir}/brief.md" in result.created:
        click.echo(f"next: edit {result.memory_dir}/brief.md, then `memory-custodian read --task planning`")


@click.command()
@memory_options
@click.option("--task", "-t", required=True, metavar="TASK",
              help="planning, implementation, artifact, preferences, history, maintenance, general — or an alias.")
@click.option("--area", "areas", multiple=True, metavar="NAME", help="Also load areas/NAME.md (repeatable).")
@click.option("--profile", "profiles", multiple=True, metavar="NAME", help="Also load profiles/NAME.md (repeatable).")
@click.option("--rule", "rules", multiple=True, metavar="NAME", help="Also load rules/NAME.md (repeatable).")
@click.option("--path", "paths", multiple=True, metavar="PATH",
              help="A file the task touches; loads every area whose globs match (repeatable).")
@click.option("--query", "-q", default=None, metavar="Q", help="What the task is about; ranks the ledger's recall lines.")
@click.option("--names-only", is_flag=True, help="List the loaded files instead of printing them.")
@click.option("--explain", is_flag=True, help="Also list every module considered, and why it was or was not loaded.")
@click.option("--strict", is_flag=True, help="A missing required file is an error (exit 2, no pack).")
@format_option
@handle_errors
def read(project_root, memory_dir, task, areas, profiles, rules, paths, query, names_only, explain, strict, fmt):
    """Print the context pack for a task: routed files packed to budget, then what was left out."""
    memory = open_memory(project_root, memory_dir)
    result = memory.read(task, areas=areas, profiles=profiles, rules=rules, paths=paths, query=query,
                         names_only=names_only, strict=strict)
    from ..curated.fastread import emit_read

    code = emit_read(result, fmt, explain)
    if code:
        sys.exit(code)


@click.command()
@memory_options
@click.option("--privacy", is_flag=True,
              help="Instead: scan every memory file (and the ledger) for credentials; names kind and place, never the value.")
@format_option
@handle_errors
def check(project_root, memory_dir, privacy, fmt):
    """Validate the memory folder: files, manifest, routes, budgets, fences, index. Exit 1 on any problem."""
    from ..errors import ProblemsFound

    memory = open_memory(project_root, memory_dir)
    if privacy:
        from .curated_write import emit_privacy

        emit_privacy(memory.check_privacy(), fmt)
        return
    result = memory.check()
    if fmt == "json":
        emit_json(result.to_dict())
    else:
        for finding in result.findings:
            click.echo(finding.one_line())
        problems, warnings = len(result.problems), len(result.findings) - len(result.problems)
        click.echo(f"{result.files_checked} files checked: {problems} problem{'s' if problems != 1 else ''}, "
                   f"{warnings} warning{'s' if warnings != 1 else ''}")
    if not result.ok:
        raise ProblemsFound(f"{len(result.problems)} problem(s) found in {result.memory_dir}; fix them and run check again")


@click.command()
@memory_options
@format_option
@handle_errors
def status(project_root, memory_dir, fmt):
    """One screen: each file's tokens against its budget, entry counts, inbox size."""
    memory = open_memory(project_root, memory_dir)
    result = memory.status()
    if fmt == "json":
        emit_json(result.to_dict())
    else:
        click.echo(result.text(), nl=False)
