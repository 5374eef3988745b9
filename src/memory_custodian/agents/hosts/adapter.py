"""What a host module declares (a `Host` record), and the hook wire shape the three hosts share.

Claude Code, Codex and Gemini CLI all pass a JSON object on stdin with `session_id`, `cwd` and
`hook_event_name`, and read `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`
from stdout; they differ in event names, in how a tool names the file it touches and in the
files `init --agent` writes. A host with another wire shape subclasses `Host` and overrides
`parse_event` and `render_output`. The recorded payloads in `tests/fixtures/hosts/` pin the
shapes; `docs/hosts/*.md` say where they come from and what is assumed.
"""

from __future__ import annotations

import json

from ...base.errors import InvalidInput
from ...base.records import Record, field

# Not `typing.TYPE_CHECKING`: this module is on every hook's import path, which avoids `typing`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_PATHS = 8  # file paths taken from one tool call
START_MAX_CHARS = 9_500  # the session-start pack (Claude Code truncates hook output at 10,000)
MAX_CONTEXT_CHARS = 8_000  # per prompt/file hook output


class HookEvent(Record):
    """One hook call, reduced to what we act on: `event` is the host's own name for it, `action`
    what we do there (start | prompt | file | compact | stop | end), `source` how a session started
    (startup | resume | clear | compact), `paths` the candidate file paths as the tool named them,
    `stop_active` the host's flag that this stop follows a stop hook's block, `agent_id` the subagent
    the call came from (None: the main agent)."""

    host: str
    event: str
    action: str
    session_id: str
    cwd: str | None
    prompt: str | None = None
    source: str | None = None
    tool_name: str | None = None
    paths: list[str] = field(default_factory=list)
    stop_active: bool = False
    agent_id: str | None = None

UNNAMED_SUBAGENT = "subagent"  # a subagent stop event whose payload names no agent (older host releases)
MAX_AGENT_ID = 80


def unique(paths: list[str]) -> list[str]:
    """`paths` in order, each once."""
    return list(dict.fromkeys(paths))


def named_paths(tool_input: dict) -> list[str]:
    """The paths a file tool names in its arguments (every host's file tools use these keys)."""
    found: list[str] = []
    for key in ("file_path", "notebook_path", "absolute_path", "path"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            found.append(value)
    paths = tool_input.get("paths")
    if isinstance(paths, list):
        found.extend(p for p in paths if isinstance(p, str) and p)
    return unique(found)


class Host(Record):
    """Everything about one agent host.

    events: host event name -> what we do at it (start | prompt | file | compact | stop | end), in the
        order the installed hook configuration lists them.
    context_events: the events whose output may carry context.
    file_tools: tools whose file arguments get those files' gotchas; the installed matcher of the
        `file` event names exactly these.
    write_tools: the file tools that change files (the end-of-turn checkpoint counts their paths).
    block_decision: the `decision` value with which a stop hook keeps the agent working.
    tool_paths: tool_input -> the paths the tool touches. existing_files_only: those paths are
        guesses (words of a shell command), so only files that exist count.
    empty_output: what to print when there is nothing to add.
    start_max_chars, max_context_chars: the most the session-start pack and a prompt or file hook
        may send, in the host's unit: `measure` ("chars", code points, or "utf16", UTF-16 units).
    hook_timeout_s: how long the host waits for a hook (`doctor` holds hooks to it).
    files: what `init --agent` writes, as (path from the project root, kind); kinds: "md" (the
        entry snippet), "hooks" and "server" (JSON entries, "hooks+server" both), "toml" (the MCP
        server as a TOML table). entry_advice: the snippet's first line of advice, for this host.
    windows_command_key: the hook entry's key for a command the host runs on Windows instead
        (Codex's `commandWindows`, run by cmd.exe), or None where one command serves every system.
    subagent_events: events that only a subagent fires (Claude Code's `SubagentStop`); any other event
        is a subagent's when its payload carries `agent_id`, as the hosts add inside a subagent.
    """

    name: str
    events: dict[str, str]
    context_events: tuple[str, ...]
    file_tools: tuple[str, ...]
    files: tuple[tuple[str, ...], ...]
    entry_advice: str
    tool_paths: Callable[[dict], list[str]] = named_paths
    existing_files_only: bool = False
    empty_output: str = ""
    start_max_chars: int = START_MAX_CHARS
    max_context_chars: int = MAX_CONTEXT_CHARS
    hook_timeout_s: int = 60  # the strictest default among the hosts (Gemini CLI; Claude Code and Codex allow 600 s)
    write_tools: tuple[str, ...] = ()
    block_decision: str = "block"
    measure: str = "chars"
    windows_command_key: str | None = None
    subagent_events: tuple[str, ...] = ()

    def parse_event(self, event: str, payload: object) -> HookEvent:
        """`payload` (the host's JSON on stdin) for `event` (or the payload's own event name)."""
        if not isinstance(payload, dict):
            raise InvalidInput("hook input is not a JSON object")
        name = event or str(payload.get("hook_event_name") or "")
        action = self.events.get(name)
        if action is None:
            raise InvalidInput(f"{self.name} event {name!r} is not handled; handled: {', '.join(self.events)}")
        cwd = payload.get("cwd")
        hook = HookEvent(self.name, name, action, str(payload.get("session_id") or ""),
                         cwd if isinstance(cwd, str) and cwd else None)
        agent = payload.get("agent_id")
        if isinstance(agent, str) and agent.strip():
            hook.agent_id = agent.strip()[:MAX_AGENT_ID]
        elif name in self.subagent_events:
            hook.agent_id = UNNAMED_SUBAGENT
        if action == "prompt":
            prompt = payload.get("prompt")
            hook.prompt = prompt if isinstance(prompt, str) else ""
        elif action == "stop":
            hook.stop_active = payload.get("stop_hook_active") is True
        elif action == "start":
            source = payload.get("source") or payload.get("trigger")
            hook.source = source if isinstance(source, str) else None
        elif action == "file":
            tool_name = payload.get("tool_name")
            hook.tool_name = tool_name if isinstance(tool_name, str) else ""
            tool_input = payload.get("tool_input")
            if isinstance(tool_input, dict) and hook.tool_name in self.file_tools:
                hook.paths = self.tool_paths(tool_input)[:MAX_PATHS]
        return hook

    def render_output(self, event: str, context: str) -> str:
        """What to print on stdout: the context in the host's shape, or `empty_output`."""
        if not context or event not in self.context_events:
            return self.empty_output

        return json.dumps(
            {"hookSpecificOutput": {"additionalContext": context, "hookEventName": event}},
            sort_keys=True, ensure_ascii=False,
        )

    def render_stop(self, event: str, reason: str) -> str:
        """What to print on stdout at a stop: keep the agent working on `reason`, or let it stop."""
        if not reason:
            return self.empty_output

        return json.dumps({"decision": self.block_decision, "reason": reason}, sort_keys=True, ensure_ascii=False)

    def matcher(self, event: str) -> str | None:
        """The tool matcher the installed hook configuration gives `event`, if any."""
        return "|".join(self.file_tools) if self.events.get(event) == "file" else None
