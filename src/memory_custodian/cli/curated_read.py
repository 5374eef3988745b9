"""CLI commands of the curated read path: init, read, check, status."""

from __future__ import annotations

import sys

from ..base.errors import ProblemsFound
from ..base.fence import as_data
from ..base.project import DEFAULT_MEMORY_DIR, init_root
from ..base.textsafe import json_text, printable
from .output import Exit, echo, emit_json, open_memory
from .terms import CLI_TERMS


def init(project_root, memory_dir, extended, agents, remove, force_agent, with_codex, with_claude, with_gemini,
         repair, replace_existing, apply_, fmt):
    note = None
    if project_root is None:
        project_root, note = init_root(None, memory_dir or DEFAULT_MEMORY_DIR)
    if note:
        sys.stderr.write(f"init: {note}\n")
    memory = open_memory(project_root, memory_dir)
    agents = list(agents or []) + [h for h, on in (("codex", with_codex), ("claude", with_claude),
                                                   ("gemini", with_gemini)) if on]
    from ..agents.init_agents import init_with_agents

    result = init_with_agents(memory, agents, remove=remove, force_agent=force_agent, extended=extended,
                              repair=repair, replace_existing=replace_existing, apply=apply_)
    if fmt == "json":
        emit_json(result.to_dict())
        return
    for path in result.replaced:
        echo(f"{'replaced' if result.applied else 'replace'} {path}"
             + ("  (has curated text that would be lost)" if path in result.overwrites and not result.applied else ""))
    if replace_existing and not result.applied:
        echo("preview; nothing changed — rerun with --replace-existing --apply to overwrite these files"
             if result.replaced else "nothing to replace: every file is a template already (ours or 0.9.1's)")
        return
    for path in result.repaired:
        echo(f"repaired {path}")
    if not remove:
        for path in result.created:
            echo(f"created {path}")
        for path in result.kept:
            echo(f"kept    {path} (already exists, left alone)")
        if result.gitattributes != "unchanged":
            echo(f"{result.gitattributes} .gitattributes (merge rules for {result.memory_dir}/)")
        if result.merge_drivers == "registered":
            echo("registered the merge drivers in .git/config (curated files entry by entry, MEMORY.md rendered again)")
    report = result.agents
    if isinstance(report, dict):
        for key in ("created", "changed", "removed", "unchanged"):
            for path in report.get(key) or ():
                echo(f"{key:<9} {path}")
        for path in report.get("kept_09_block") or ():
            echo(f"kept      {path} (its MemoryCustodian 0.9 block; --force-agent replaces it with ours)")
        if report.get("command"):
            where = ("this clone's .git/config (memory-custodian.command)"
                     if report.get("setting") in ("set", "unchanged")
                     else "PATH and the usual install places")
            echo(f"hooks and MCP server find this installation, {report['command']} (its {report['command_kind']}), "
                 f"through {where}; the committed files name no path")
        for message in report.get("warnings") or ():
            sys.stderr.write(f"warning: {message}\n")
    elif report is not None:
        echo(str(report))
    if f"{result.memory_dir}/brief.md" in result.created:
        echo(f"next: edit {result.memory_dir}/brief.md, then `memory-custodian read --task planning`")


def read(project_root, memory_dir, task, areas, profiles, rules, paths, query, names_only, explain, strict, fmt):
    memory = open_memory(project_root, memory_dir)
    result = memory.read(task, areas=areas, profiles=profiles, rules=rules, paths=paths, query=query,
                         names_only=names_only, strict=strict, terms=CLI_TERMS)

    if fmt == "json":
        echo(json_text(result.to_dict()))
    else:
        text = result.rendered
        if explain:
            text += "\n" + result.explain_text()

        echo(as_data(text), nl=False)  # files edited by hand and merged from pull requests: fenced as data
        for message in result.warnings:
            if not message.startswith("required memory file"):
                sys.stderr.write(printable(f"warning: {message}\n"))
    if result.exit_code:
        raise Exit(next((w for w in result.warnings if w.startswith("required memory file")), "read incomplete"),
                   result.exit_code)


def check(project_root, memory_dir, privacy, fmt):
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
            echo(finding.one_line())
        problems, warnings = len(result.problems), len(result.findings) - len(result.problems)
        echo(f"{result.files_checked} files checked: {problems} problem{'s' if problems != 1 else ''}, "
                   f"{warnings} warning{'s' if warnings != 1 else ''}")
    if not result.ok:
        raise ProblemsFound(f"{len(result.problems)} problem(s) found in {result.memory_dir}; fix them and run check again")


def status(project_root, memory_dir, fmt):
    memory = open_memory(project_root, memory_dir)
    result = memory.status()
    from ..session.adoption import summary_line

    adoption = summary_line(memory)
    if fmt == "json":
        emit_json({**result.to_dict(), **({"adoption": adoption} if adoption else {})})
    else:
        echo(result.text(), nl=False)
        if adoption:
            echo(adoption)
    if result.problems:
        raise ProblemsFound(f"{len(result.problems)} problem(s) in {result.memory_dir}; run check for details")
