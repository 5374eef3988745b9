"""Commands for agent hosts: `mcp` (the MCP server on stdio) and `hook EVENT` (lifecycle hooks)."""

from __future__ import annotations

import sys

import click

from . import handle_errors, memory_options, open_memory

@click.command("mcp")
@memory_options
@handle_errors
def mcp(project_root, memory_dir):
    """Serve the memory as MCP tools over stdio (for Claude Code, Codex, Gemini CLI).

    Tools: memory_context, memory_recall, memory_expand, memory_history (read-only);
    memory_remember, memory_supersede, memory_revoke, memory_flag_stale, memory_reinstate,
    memory_propose. The server writes as `agent`. `init --agent` registers it with each host.
    """
    from ..project import require_memory_dir

    memory = open_memory(project_root, memory_dir)
    require_memory_dir(memory.memory_dir)  # before importing the SDK: a wrong folder fails fast
    from ..agents.mcp_server import serve

    serve(memory)


@click.command("hook", context_settings={"ignore_unknown_options": False})
@click.argument("event")
@click.option("--host", type=click.Choice(["claude", "codex", "gemini"]), default="claude", show_default=True,
              help="Which agent host is calling (its payload and output shapes differ).")
@click.option("--task", default=None, metavar="TASK", help="Task category for the session-start pack (default implementation).")
@memory_options
def hook(event, host, task, project_root, memory_dir):
    """Run a lifecycle hook: read the host's JSON on stdin, print the context it should add.

    EVENT is the host's event name (claude/codex: SessionStart, UserPromptSubmit, PreToolUse,
    PreCompact; gemini: SessionStart, BeforeAgent, AfterTool, PreCompress). A hook never fails
    the host: any error is one line on stderr and exit 0. `init --agent` installs these.
    """
    from ..agents.hooks import main as hook_main

    argv = ["--host", host]
    for flag, value in (("--task", task), ("--project-root", project_root), ("--memory-dir", memory_dir)):
        if value is not None:
            argv += [flag, value]
    sys.exit(hook_main([*argv, event]))
