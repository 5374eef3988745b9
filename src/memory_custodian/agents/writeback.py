"""What each hook does for writing memory back, beside what it injects: the hooks module calls `on_hook`
and `log` once per call, so the reading side and the writing side stay apart.

- file hook: counts the tool call, and the files a write tool changes;
- prompt hook: keeps the request for the automatic checkpoint, and nudges when the user states a rule;
- stop: the end-of-turn checkpoint (`checkpoint.on_stop`), on the budget of the agent that stopped;
- compaction and session end: the automatic task checkpoint (`auto_checkpoint.write_checkpoint`).
"""

from __future__ import annotations

from ..session import checkpoint
from ..session.checkpoint import session
from ..session.usage_log import hook_entry, record

# `doctor` probes every wired hook under this session id (host_doctor.DOCTOR_SESSION; a test holds the
# two equal, and importing host_doctor here would load subprocess on every hook): a probe is not work.
PROBE_SESSION = "memory-custodian-doctor"


def on_hook(memory, spec, hook, state, guard) -> tuple[str, str | None, str | None, bool]:
    """(context to add, stop instruction, checkpoint outcome, whether the call wrote files).
    `guard(part, fn, *args)` runs a part that fails open: None, with the error named for the agent."""
    memory_dir = memory.memory_dir_str
    wrote = False
    if hook.session_id == PROBE_SESSION:
        return "", None, None, False
    if hook.action == "start":
        checkpoint.session(state, memory_dir)  # the session's baseline: what a later write changes
    elif hook.action == "file":
        from .touched import project_relative

        wrote = hook.tool_name in spec.write_tools
        checkpoint.note_tool(state, memory_dir, project_relative(hook.paths, memory.root_str, hook.cwd), wrote,
                             hook.agent_id)
    elif hook.action == "prompt":
        return _on_prompt(memory_dir, state, hook.prompt or ""), None, None, False
    elif hook.action == "stop":
        outcome, reason = guard("end-of-turn checkpoint", checkpoint.on_stop, state, memory_dir,
                                hook.stop_active, hook.agent_id) or ("failed", None)
        return "", reason, outcome, False
    elif hook.action in ("compact", "end"):
        from ..session.auto_checkpoint import write_checkpoint

        written = guard("automatic task checkpoint", write_checkpoint, memory, state)
        return "", None, "auto-written" if written else None, False
    return "", None, None, wrote


def _on_prompt(memory_dir, state, prompt: str) -> str:
    from ..session.auto_checkpoint import keep_request
    from ..session.rule_prompts import nudge, standing_rule

    keep_request(state, memory_dir, prompt)
    quote = standing_rule(prompt)
    if not quote:
        return ""

    nudged = session(state, memory_dir).setdefault("nudged", [])
    if quote in nudged:
        return ""  # said again: the agent was asked once this session
    nudged[:] = (nudged + [quote])[-20:]
    return nudge(quote)


def log(memory, hook, before: dict, state, context: str, outcome: str | None, wrote: bool, guard,
        now: float | None = None) -> None:
    """One line in the adoption log: what this call injected, and what the checkpoint did."""
    if hook.session_id == PROBE_SESSION:
        return
    after = state.data.get("injected") or {}
    injected = [note_id for note_id, seen in after.items() if before.get(note_id) != seen]
    tokens = 0
    if injected:
        from ..base.tokens import estimate_tokens

        tokens = estimate_tokens(context)
    guard("usage log", record, memory.memory_dir_str, hook_entry(hook, injected, tokens, outcome, wrote), now)
