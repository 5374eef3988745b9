"""Commands for agent hosts: `mcp` (the MCP server on stdio) and `hook EVENT` (lifecycle hooks)."""

from __future__ import annotations

import sys

from ..agents.hooks import problem_line, run_hook
from ..agents.hosts import load
from ..base.errors import CustodianError, InvalidInput
from ..base.limits import HOOK_STDIN_BYTES
from ..base.project import require_memory_dir
from .output import echo, emit_json, open_memory
from .terms import CLI_TERMS


def mcp(project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    require_memory_dir(memory.memory_dir_str)  # before importing the SDK: a wrong folder fails fast
    from ..agents.mcp_server import serve

    serve(memory)


def _hook_input() -> str:
    """The host's payload, read up to `limits.HOOK_STDIN_BYTES` and no further: past it the hook
    answers at once, saying so, instead of spending the host's time-out on a pasted file."""
    data = sys.stdin.buffer.read(HOOK_STDIN_BYTES + 1)
    if len(data) > HOOK_STDIN_BYTES:
        raise InvalidInput(f"the host's hook input is over {HOOK_STDIN_BYTES:,} bytes, the limit; memory "
                           "skipped this call (a prompt that long is a pasted file, not a question)")
    return data.decode("utf-8", "replace")


def stats(fmt, project_root, memory_dir):
    from ..session.adoption import report

    result = report(open_memory(project_root, memory_dir))
    if fmt == "json":
        emit_json(result.to_dict())
    else:
        echo(result.text(), nl=False)


def hook(event, host, task, project_root, memory_dir) -> int:
    """Fail open: whatever goes wrong at run time is one line on stderr and exit 0."""
    try:
        # bytes, not text: how a locale decodes stdin must not decide whether a stray byte loses the output
        raw = _hook_input()
        out = run_hook(host, event, raw, project_root=project_root, memory_dir=memory_dir, task=task, terms=CLI_TERMS)
    except Exception as exc:  # the agent's session matters more than its memory, and is told it has none
        sys.stderr.write(f"memory-custodian hook {event}: {_one_line(exc)} (continuing without memory)\n")
        spec = load(host)
        told = problem_line([_one_line(exc)]) if event in spec.context_events else ""
        out = spec.render_output(event, told) if event else ""
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, CustodianError):
        return exc.one_line(CLI_TERMS)
    return f"{type(exc).__name__}: {exc}".replace("\n", " ")[:300]


def merge_driver(kind, base, ours, theirs, path) -> int:
    """What git runs for a memory file (`.git/config`, written by `init`)."""
    from ..setup.merge_drivers import run_driver

    return run_driver(kind, base, ours, theirs, path)
