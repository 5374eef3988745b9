"""Claude Code: hooks in `.claude/settings.json`, the MCP server in `.mcp.json`, `CLAUDE.md`.

See docs/hosts/claude.md; the payloads are recorded in tests/fixtures/hosts/claude/.
"""

from __future__ import annotations

from .adapter import Host

EVENTS = {"SessionStart": "start", "UserPromptSubmit": "prompt", "PreToolUse": "file", "PreCompact": "compact",
          "Stop": "stop", "SubagentStop": "stop", "SessionEnd": "end"}
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse")  # PreCompact takes no context

HOST = Host(
    measure="utf16",  # Claude Code caps hook output by UTF-16 units: an emoji counts two
    name="claude",
    subagent_events=("SubagentStop",),
    events=EVENTS,
    context_events=CONTEXT_EVENTS,
    file_tools=("Edit", "Write", "MultiEdit", "Read", "NotebookEdit"),
    write_tools=("Edit", "Write", "MultiEdit", "NotebookEdit"),
    files=(("CLAUDE.md", "md"), (".claude/settings.json", "hooks"), (".mcp.json", "server")),
    entry_advice=("- Hooks inject the context pack at session start, matching notes on each prompt and "
                  "gotchas for the files\n  you touch. If you see no memory context, run "
                  "`memory-custodian read --task implementation` first."),
)
