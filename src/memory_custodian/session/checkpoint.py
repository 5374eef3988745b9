"""The end-of-turn checkpoint: at a stop, ask the agent once to record what the next session needs.

Agents read memory when it is pushed to them and almost never write it back, so the harness asks:
when a turn changed files (or did a lot of tool work) and nothing reached memory through any door,
the stop hook keeps the agent working on one short instruction, which "nothing to record" answers.
The decision reads only the session file, `config.json` and a few `stat`s: no index work.

Settings, in `docs/memory/config.json`:

    {"checkpoint": {"stop": "once", "min_tool_calls": 10, "max_blocks": 5}}

`stop`: "off", "once" a session (the default) or "every" qualifying turn (at most `max_blocks` a
session); `min_tool_calls`: the file-tool calls since the last checkpoint that count as substantial
work even when no file was written.
"""

from __future__ import annotations

import os

MODES = ("off", "once", "every")
DEFAULTS = {"stop": "once", "min_tool_calls": 10, "max_blocks": 5}
NAMED_FILES = 5  # files the instruction names; the rest are counted
SESSION_FILES = 50  # files of the whole session kept for the automatic task checkpoint
STATE_KEY = "writeback"


def settings(memory_dir) -> dict:
    """The checkpoint settings, defaults filled in; a bad value is a loud error naming the file."""
    from ..base.errors import Corrupt
    from ..ledger.storage.config import config_path, load_config

    given = load_config(memory_dir).get("checkpoint", {})
    if not isinstance(given, dict):
        raise Corrupt('"checkpoint" must be an object like {"stop": "once"}', path=config_path(memory_dir))
    out = {**DEFAULTS, **given}
    counts_ok = all(isinstance(out[k], int) and not isinstance(out[k], bool) and out[k] >= 0
                    for k in ("min_tool_calls", "max_blocks"))
    if out["stop"] not in MODES or not counts_ok:
        raise Corrupt(f'"checkpoint": "stop" must be one of {", ".join(MODES)} and "min_tool_calls", '
                      '"max_blocks" whole numbers ≥ 0', path=config_path(memory_dir))
    return out


def write_signature(memory_dir) -> str:
    """Names, sizes and mtimes of the ledger shards and the curated files: any write through any door
    (remember, supersede, propose, add, edit) changes it."""
    parts: list[str] = []
    for folder, suffix in (("ledger", ".jsonl"), ("", ".md")):
        try:
            with os.scandir(os.path.join(os.fspath(memory_dir), folder)) as entries:
                found = sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries
                               if e.name.endswith(suffix) and e.name != "MEMORY.md" and e.is_file())
        except FileNotFoundError:
            continue
        parts.extend(f"{folder}/{name}:{size}:{mtime}" for name, size, mtime in found)
    return ";".join(parts)


def shard_sizes(memory_dir) -> dict:
    """Each ledger shard's size now: what a session appends later starts there."""
    folder = os.path.join(os.fspath(memory_dir), "ledger")
    try:
        with os.scandir(folder) as entries:
            return {e.name: e.stat().st_size for e in entries if e.name.endswith(".jsonl")}
    except FileNotFoundError:
        return {}


def session(state, memory_dir) -> dict:
    """This session's write-back state, created on first use with the memory folder as it is now."""
    wb = state.data.get(STATE_KEY)
    if not isinstance(wb, dict) or wb.get("v") != 1:
        wb = {"v": 1, "sig": write_signature(memory_dir), "offsets": shard_sizes(memory_dir), "files": [],
              "tools": 0, "blocks": 0, "pending": False, "session_files": [], "request": None, "auto_note": None,
              "auto_body": None}
        state.data[STATE_KEY] = wb
    return wb


def note_tool(state, memory_dir, paths: list[str], wrote: bool) -> None:
    """The file hook saw a tool call touching `paths` (`wrote`: a write tool)."""
    wb = session(state, memory_dir)
    wb["tools"] = int(wb.get("tools", 0)) + 1
    if wrote:
        for key, cap in (("files", SESSION_FILES), ("session_files", SESSION_FILES)):
            kept = wb[key]
            kept.extend(p for p in paths if p not in kept)
            del kept[cap:]


def on_stop(state, memory_dir, stop_active: bool) -> tuple[str, str | None]:
    """(outcome, instruction): outcome is one of blocked | answered | declined | wrote | quiet, and the
    instruction is set only when the stop is blocked."""
    wb = session(state, memory_dir)
    sig = write_signature(memory_dir)
    changed = sig != wb["sig"]
    if wb["pending"] or changed:
        outcome = ("answered" if changed else "declined") if wb["pending"] else "wrote"
        wb.update(sig=sig, files=[], tools=0, pending=False)  # a new checkpoint starts here
        return outcome, None  # never twice in a row
    if stop_active or state.path is None:
        # another hook is keeping the agent working, or this state will not be saved (a block could
        # then never be counted): never pile on
        return "quiet", None
    config = settings(memory_dir)
    if not wb["files"] and wb["tools"] < max(1, config["min_tool_calls"]):
        return "quiet", None
    cap = {"off": 0, "once": 1, "every": config["max_blocks"]}[config["stop"]]
    if wb["blocks"] >= cap:
        return "quiet", None
    wb["blocks"] += 1
    wb["pending"] = True
    return "blocked", instruction(wb["files"], wb["tools"])


def instruction(files: list[str], tools: int) -> str:
    """The one instruction a blocked stop gives the agent."""
    if files:
        named = ", ".join(files[:NAMED_FILES]) + (f" and {len(files) - NAMED_FILES} more"
                                                  if len(files) > NAMED_FILES else "")
        did = f"this turn changed {named}"
        anchor = f"a gotcha tied to {files[0] if len(files) == 1 else 'those files'} (give its path)"
    else:
        did = f"this turn made {tools} file-tool calls"
        anchor = "a gotcha tied to the files involved (give their paths)"
    return (f"memory-custodian · before you stop: {did} and recorded nothing in project memory. "
            f"If the next session should know something, record it now — {anchor}, a decision and its reason, "
            "a finding, or a task checkpoint of what is left: `memory_remember` (MCP) or "
            "`memory-custodian remember --actor agent --kind gotcha --path FILE \"TEXT\"`. "
            "If nothing is worth keeping, answer \"nothing to record\" and stop; you will not be asked again "
            "for this turn.")
