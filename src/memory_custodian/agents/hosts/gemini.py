"""Gemini CLI: hooks and the MCP server in `.gemini/settings.json`, `GEMINI.md`.

BeforeTool cannot add context, AfterTool can (appended to the tool result), so a file's gotchas
arrive after the tool ran. See docs/hosts/gemini.md; payloads in tests/fixtures/hosts/gemini/.
"""

from __future__ import annotations

from .adapter import Host

HOST = Host(
    name="gemini",
    events={"SessionStart": "start", "BeforeAgent": "prompt", "AfterTool": "file", "PreCompress": "compact",
            "AfterAgent": "stop", "SessionEnd": "end"},
    context_events=("SessionStart", "BeforeAgent", "AfterTool"),
    file_tools=("read_file", "write_file", "replace", "read_many_files"),
    write_tools=("write_file", "replace"),
    block_decision="deny",  # AfterAgent: "deny" sends the agent back to work with the reason
    files=(("GEMINI.md", "md"), (".gemini/settings.json", "hooks+server")),
    entry_advice=("- Hooks inject the context pack at session start, matching notes on each prompt and "
                  "gotchas for the files\n  you read or write. If you see no memory context, run "
                  "`memory-custodian read --task implementation` first."),
    empty_output="{}",  # Gemini parses stdout as JSON on exit 0
)
