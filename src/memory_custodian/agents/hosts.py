"""What each host sends a hook and what it expects back, reduced to one shape.

Claude Code, Codex and Gemini CLI all pass a JSON object on stdin with `session_id`, `cwd` and
`hook_event_name`, and read `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`
from stdout; they differ in event names and in how a tool names the file it touches. The
recorded payloads in `tests/fixtures/hosts/` pin the shapes below; `docs/hosts/*.md` say where
they come from and what is assumed.
"""

from __future__ import annotations

import os

from ..errors import InvalidInput

HOSTS = ("claude", "codex", "gemini")

# host event name -> what we do at it
EVENTS: dict[str, dict[str, str]] = {
    "claude": {"SessionStart": "start", "UserPromptSubmit": "prompt", "PreToolUse": "file",
               "PreCompact": "compact"},
    # Codex's hooks follow Claude Code's wire shapes; its PreToolUse sees shell commands.
    "codex": {"SessionStart": "start", "UserPromptSubmit": "prompt", "PreToolUse": "file",
              "PreCompact": "compact"},
    # Gemini CLI: BeforeTool cannot add context, AfterTool can (appended to the tool result).
    "gemini": {"SessionStart": "start", "BeforeAgent": "prompt", "AfterTool": "file",
               "PreCompress": "compact"},
}

# Events whose output may carry additionalContext.
CONTEXT_EVENTS = {
    "claude": ("SessionStart", "UserPromptSubmit", "PreToolUse"),
    "codex": ("SessionStart", "UserPromptSubmit", "PreToolUse"),
    "gemini": ("SessionStart", "BeforeAgent", "AfterTool"),
}

# Tools whose file argument gets that file's gotchas (matchers in install.py use the same names).
FILE_TOOLS = {
    "claude": ("Edit", "Write", "MultiEdit", "Read", "NotebookEdit"),
    "codex": ("Bash", "shell", "apply_patch"),
    "gemini": ("read_file", "write_file", "replace", "read_many_files"),
}

_PATCH_FILE_RE = r"^\*\*\* (?:Add|Update|Delete) File: (.+)$"  # compiled only for Codex (re's cache)
MAX_PATHS = 8


class HookEvent:
    """One hook call, reduced to what we act on. (A plain class: `dataclasses` costs a hook
    process several milliseconds of start-up for nothing.)"""

    __slots__ = ("host", "event", "action", "session_id", "cwd", "prompt", "source", "tool_name", "paths")

    def __init__(self, host: str, event: str, action: str, session_id: str, cwd: str | None):
        self.host = host
        self.event = event  # the host's own event name
        self.action = action  # start | prompt | file | compact
        self.session_id = session_id
        self.cwd = cwd
        self.prompt: str | None = None
        self.source: str | None = None  # SessionStart: startup | resume | clear | compact
        self.tool_name: str | None = None
        self.paths: list[str] = []  # candidate file paths as the tool named them


def parse_event(host: str, event: str, payload: object) -> HookEvent:
    if host not in HOSTS:
        raise InvalidInput(f"unknown host {host!r}; use one of {', '.join(HOSTS)}")
    if not isinstance(payload, dict):
        raise InvalidInput("hook input is not a JSON object")
    name = event or str(payload.get("hook_event_name") or "")
    action = EVENTS[host].get(name)
    if action is None:
        raise InvalidInput(f"{host} event {name!r} is not handled; handled: {', '.join(EVENTS[host])}")
    cwd = payload.get("cwd")
    hook = HookEvent(
        host=host, event=name, action=action,
        session_id=str(payload.get("session_id") or ""),
        cwd=cwd if isinstance(cwd, str) and cwd else None,
    )
    if action == "prompt":
        prompt = payload.get("prompt")
        hook.prompt = prompt if isinstance(prompt, str) else ""
    elif action == "start":
        source = payload.get("source") or payload.get("trigger")
        hook.source = source if isinstance(source, str) else None
    elif action == "file":
        tool_name = payload.get("tool_name")
        hook.tool_name = tool_name if isinstance(tool_name, str) else ""
        tool_input = payload.get("tool_input")
        if isinstance(tool_input, dict) and hook.tool_name in FILE_TOOLS[host]:
            hook.paths = _tool_paths(host, tool_input)[:MAX_PATHS]
    return hook


def _tool_paths(host: str, tool_input: dict) -> list[str]:
    found: list[str] = []
    for key in ("file_path", "notebook_path", "absolute_path", "path"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            found.append(value)
    paths = tool_input.get("paths")
    if isinstance(paths, list):
        found.extend(p for p in paths if isinstance(p, str) and p)
    if host == "codex":
        command = tool_input.get("command")
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        if isinstance(command, str):
            found.extend(_command_paths(command))
        patch = tool_input.get("patch") or tool_input.get("input")
        if isinstance(patch, str):
            import re

            found.extend(m.group(1).strip() for m in re.finditer(_PATCH_FILE_RE, patch, re.M))
    seen: set[str] = set()
    return [p for p in found if not (p in seen or seen.add(p))]


def _command_paths(command: str) -> list[str]:
    """Words of a shell command that look like file paths (checked against the disk later)."""
    import re
    import shlex

    found = [m.group(1).strip() for m in re.finditer(_PATCH_FILE_RE, command, re.M)]
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


def project_relative(paths: list[str], root, cwd: str | None) -> list[str]:
    """POSIX paths relative to the project root, for files inside it; others are dropped."""
    from pathlib import Path  # the file hooks only: the prompt hook never imports pathlib (see fsutil)

    root = Path(root)
    base = Path(cwd) if cwd else Path(os.getcwd())
    root = root.resolve()
    out: list[str] = []
    for raw in paths:
        candidate = Path(raw)
        if not candidate.is_absolute():
            candidate = base / candidate
        try:
            rel = Path(os.path.normpath(candidate)).relative_to(root)
        except ValueError:
            try:
                rel = candidate.resolve().relative_to(root)
            except (ValueError, OSError):
                continue
        text = rel.as_posix()
        if text and text != "." and not text.startswith("../") and text not in out:
            out.append(text)
    return out


def render_output(host: str, event: str, context: str) -> str:
    """What to print on stdout: the context in the host's shape, or nothing."""
    import json

    if not context or event not in CONTEXT_EVENTS[host]:
        # Gemini parses stdout as JSON on exit 0, so it gets an empty object.
        return "{}" if host == "gemini" else ""
    return json.dumps(
        {"hookSpecificOutput": {"additionalContext": context, "hookEventName": event}},
        sort_keys=True, ensure_ascii=False,
    )
