"""`init --agent HOST|all`: the library's `Memory.init`, then each host's entry points.

The library knows no agent host, so the one command that writes both lives here, above it. A bad
host name, or a MemoryCustodian 0.9 block with broken markers, is refused before anything is
written; a preview (`--replace-existing` without `--apply`) writes no host file either.
"""

from __future__ import annotations

from ..curated.write.initializing import InitResult, memory_rel
from . import hosts as host_modules
from . import install, managed_block


def init_with_agents(memory, agents=(), *, remove: bool = False, force_agent: bool = False, extended: bool = False,
                     repair: bool = False, replace_existing: bool = False, apply: bool = False) -> InitResult:
    """`Memory.init` and, for `agents` ("claude", "codex", "gemini", "all"), their entry points; with
    `remove=True` only those are taken out (every host's when none is named). `force_agent` replaces
    a MemoryCustodian 0.9 block in the hosts' Markdown files (`repair` implies it, as in 0.9.1)."""
    options = {"extended": extended, "repair": repair, "replace_existing": replace_existing, "apply": apply}
    if not agents and not remove:
        return memory.init(**options)
    wanted = install.wanted_hosts(agents or ["all"])  # a bad name is refused before anything is written
    if remove:
        return InitResult(memory_rel(memory), agents=install.install_agents(memory, wanted, remove=True))
    managed_block.refuse_bad_markers(memory.root_str, [host_modules.load(h) for h in wanted], install.MD_BEGIN)
    result = memory.init(**options)
    if result.applied:  # a preview writes nothing, agent files included
        result.agents = install.install_agents(memory, wanted, force=force_agent or repair)
    return result
