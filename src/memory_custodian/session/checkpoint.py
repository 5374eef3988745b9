"""The end-of-turn checkpoint: at a stop, ask the agent once to record what the next session needs.

Agents read memory when it is pushed to them and almost never write it back, so the harness asks:
when a turn changed files (or did a lot of tool work) and nothing reached memory through any door,
the stop hook keeps the agent working on one short instruction, which "nothing to record" answers.
The decision reads only the session file, `config.json` and a few `stat`s: no index work.

Settings, in `docs/memory/config.json`:

    {"checkpoint": {"stop": "once", "subagent_stop": "off", "min_tool_calls": 10, "max_blocks": 5}}

`stop`: "off", "once" a session (the default) or "every" qualifying turn (at most `max_blocks` a
session); `min_tool_calls`: the file-tool calls since the last checkpoint that count as substantial
work even when no file was written.

Budgets are per agent. The main agent's budget is `stop`'s. A subagent (a stop or tool call that
names an `agent_id`, or the host's subagent stop event) never touches it: with `subagent_stop` "off"
(the default) its stop asks nothing and its work counts as the main agent's turn, which receives
the subagent's result and is asked at its own stop; "once" or "every" give each subagent a budget
of its own, for its own work (docs/memory/decisions.md says why off is the default).
"""

from __future__ import annotations

import os

from ..base.errors import Corrupt

MODES = ("off", "once", "every")
DEFAULTS = {"stop": "once", "subagent_stop": "off", "min_tool_calls": 10, "max_blocks": 5}
NAMED_FILES = 5  # files the instruction names; the rest are counted
SESSION_FILES = 50  # files of the whole session kept for the automatic task checkpoint
STATE_KEY = "writeback"
MAIN = "main"  # the agent a hook call names no `agent_id` for
SUBAGENTS_KEPT = 20  # subagents whose own budget a session file keeps (the oldest are dropped)


def settings(memory_dir) -> dict:
    """The checkpoint settings, defaults filled in; a bad value is a loud error naming the file."""
    from ..ledger.storage.config import config_path, load_config

    given = load_config(memory_dir).get("checkpoint", {})
    if not isinstance(given, dict):
        raise Corrupt('"checkpoint" must be an object like {"stop": "once"}', path=config_path(memory_dir))
    out = {**DEFAULTS, **given}
    counts_ok = all(isinstance(out[k], int) and not isinstance(out[k], bool) and out[k] >= 0
                    for k in ("min_tool_calls", "max_blocks"))
    if out["stop"] not in MODES or out["subagent_stop"] not in MODES or not counts_ok:
        raise Corrupt(f'"checkpoint": "stop" and "subagent_stop" must be one of {", ".join(MODES)}, and '
                      '"min_tool_calls", "max_blocks" whole numbers ≥ 0', path=config_path(memory_dir))
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


def _budget(wb: dict, agent: str | None, memory_dir) -> dict:
    """The checkpoint state of one agent: the session's own fields for the main agent, a small record
    under "agents" for each subagent (made with the memory folder as it is now)."""
    if agent is None:
        return wb
    agents = wb.setdefault("agents", {})
    own = agents.get(agent)
    if not isinstance(own, dict):
        own = agents[agent] = {"sig": write_signature(memory_dir), "files": [], "tools": 0, "blocks": 0,
                               "pending": False}
        for old in list(agents)[:-SUBAGENTS_KEPT]:
            del agents[old]
    return own


def note_tool(state, memory_dir, paths: list[str], wrote: bool, agent: str | None = None) -> None:
    """The file hook saw a tool call touching `paths` (`wrote`: a write tool), made by `agent` (a
    subagent's id, None for the main agent)."""
    wb = session(state, memory_dir)
    own = _budget(wb, agent, memory_dir)
    own["tools"] = int(own.get("tools", 0)) + 1
    if wrote:
        for kept in (own["files"], wb["session_files"]):
            kept.extend(p for p in paths if p not in kept)
            del kept[SESSION_FILES:]


def _take_subagents_work(wb: dict) -> None:
    """Subagents without a checkpoint of their own did part of the main agent's turn: add their work
    to the main agent's count (and clear theirs, so it is counted once)."""
    for own in (wb.get("agents") or {}).values():
        if own.get("files") or own.get("tools"):
            wb["files"].extend(p for p in own["files"] if p not in wb["files"])
            del wb["files"][SESSION_FILES:]
            wb["tools"] = int(wb.get("tools", 0)) + int(own.get("tools", 0))
            own.update(files=[], tools=0)


def on_stop(state, memory_dir, stop_active: bool, agent: str | None = None) -> tuple[str, str | None]:
    """(outcome, instruction) at the stop of `agent` (a subagent's id, None for the main agent):
    outcome is one of blocked | answered | declined | wrote | quiet | off, and the instruction is set
    only when the stop is blocked."""
    wb = session(state, memory_dir)
    config = settings(memory_dir)
    mode = config["stop"] if agent is None else config["subagent_stop"]
    if agent is not None and mode == "off":
        return "off", None  # its work stays counted for the main agent's stop
    if agent is None and config["subagent_stop"] == "off":
        _take_subagents_work(wb)
    own = _budget(wb, agent, memory_dir)
    sig = write_signature(memory_dir)
    changed = sig != own["sig"]
    if own["pending"] or changed:
        outcome = ("answered" if changed else "declined") if own["pending"] else "wrote"
        own.update(sig=sig, files=[], tools=0, pending=False)  # a new checkpoint starts here
        return outcome, None  # never twice in a row
    if stop_active or state.path is None:
        # another hook is keeping the agent working, or this state will not be saved (a block could
        # then never be counted): never pile on
        return "quiet", None
    if not own["files"] and own["tools"] < max(1, config["min_tool_calls"]):
        return "quiet", None
    cap = {"off": 0, "once": 1, "every": config["max_blocks"]}[mode]
    if own["blocks"] >= cap:
        return "quiet", None
    own["blocks"] += 1
    own["pending"] = True
    return "blocked", instruction(own["files"], own["tools"])


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
