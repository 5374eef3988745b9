"""Codex CLI: hooks in `.codex/hooks.json`, the MCP server in `.codex/config.toml`, `AGENTS.md`.

Codex's hooks follow Claude Code's event names and wire shapes, but its PreToolUse sees shell
commands and patches, not file paths: the words that look like paths are taken, and only those
that are files in the project count. See docs/hosts/codex.md; payloads in tests/fixtures/hosts/codex/.
"""

from __future__ import annotations

import re
import shlex

from .adapter import Host, named_paths, unique
from .claude import CONTEXT_EVENTS

# Codex has no session-end event: the automatic task checkpoint is written at compaction only.
EVENTS = {"SessionStart": "start", "UserPromptSubmit": "prompt", "PreToolUse": "file", "PreCompact": "compact",
          "Stop": "stop"}

PATCH_FILE_RE = r"^\*\*\* (?:Add|Update|Delete) File: (.+)$"  # compiled on first use (re's cache)


def tool_paths(tool_input: dict) -> list[str]:
    """The paths a shell command or an apply_patch names, besides any file argument."""
    found = named_paths(tool_input)
    command = tool_input.get("command")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if isinstance(command, str):
        found.extend(command_paths(command))
    patch = tool_input.get("patch") or tool_input.get("input")
    if isinstance(patch, str):
        found.extend(m.group(1).strip() for m in re.finditer(PATCH_FILE_RE, patch, re.M))
    return unique(found)


def command_paths(command: str) -> list[str]:
    """Words of a shell command that look like file paths (checked against the disk later)."""
    found = [m.group(1).strip() for m in re.finditer(PATCH_FILE_RE, command, re.M)]
    try:
        words = shlex.split(command, comments=False, posix=True)
    except ValueError:
        words = command.split()
    for word in words:
        if word.startswith("-") or "=" in word or len(word) > 300:
            continue
        if "/" in word or "." in word.strip("."):
            found.append(word)
    return found


HOST = Host(
    name="codex",
    events=EVENTS,
    context_events=CONTEXT_EVENTS,
    file_tools=("Bash", "shell", "apply_patch"),
    write_tools=("apply_patch",),
    files=(("AGENTS.md", "md"), (".codex/hooks.json", "hooks"), (".codex/config.toml", "toml")),
    entry_advice=("- Before any task, run `memory-custodian read --task implementation` (or `--task planning`) "
                  "and follow\n  its directives; if hooks are enabled they inject the same pack "
                  "at session start."),
    tool_paths=tool_paths,
    existing_files_only=True,
    windows_command_key="commandWindows",  # Codex runs hook commands through cmd.exe on Windows
)
