"""`Memory`: the one object the CLI, the MCP server and the hooks open and call.

It is a thin facade. Each tier contributes its methods as a small mixin that lives beside the
code it calls (curated read, curated write, ledger, ledger text), so no module here owns storage
and no mixin knows about click or mcp. Mixin modules import their heavy parts inside methods, so
opening a Memory stays cheap for hooks.
"""

from __future__ import annotations

import os

from .curated.read_api import CuratedReadAPI
from .curated.write_api import CuratedWriteAPI
from .fsutil import path_property
from .ledger.api import LedgerAPI
from .ledger.text_api import LedgerTextAPI
from .project import DEFAULT_MEMORY_DIR, find_project_root, resolve_memory_dir


class Memory(CuratedReadAPI, CuratedWriteAPI, LedgerAPI, LedgerTextAPI):
    """A project's memory. Open it with `Memory.open(project_root)`.

    `root` and `memory_dir` are `Path`s; inside, the two are kept as strings (`root_str`,
    `memory_dir_str`), which the hook path uses, so a prompt hook never imports `pathlib`."""

    def __init__(self, root, memory_dir):
        self.root_str = os.fspath(root)
        self.memory_dir_str = os.fspath(memory_dir)

    root = path_property("root_str", "The project root.")
    memory_dir = path_property("memory_dir_str", "The memory folder (docs/memory by default).")

    @classmethod
    def open(cls, project_root=None, memory_dir: str | None = None) -> "Memory":
        """Open the memory of the project at `project_root`.

        Without a root, the nearest ancestor of the current directory holding
        `<memory_dir>/manifest.md` is used, else the current directory (for `init`).
        """
        arg = memory_dir or DEFAULT_MEMORY_DIR
        if project_root is None:
            root = find_project_root(None, arg)
        else:
            root = os.path.realpath(os.path.expanduser(os.fspath(project_root)))
        return cls(root, resolve_memory_dir(root, arg))

    def __repr__(self) -> str:
        return f"Memory({self.root_str!r})"

    def init(self, *, extended: bool = False, agents=(), remove: bool = False):
        """Create the protocol 0.5 files (never overwriting), `.cache/`, and the ledger's merge rule.

        `agents` ("claude", "codex", "gemini", "all") also installs the agent entry points;
        with `remove=True` only those are removed (all hosts' when none is named). Returns an
        `InitResult`. Here, not in the curated tier: that tier knows nothing of agent hosts.
        """
        from .curated.initializing import InitResult, init_memory, memory_rel

        if not agents and not remove:
            return init_memory(self, extended=extended)
        from .agents.install import install_agents, wanted_hosts

        hosts = wanted_hosts(agents or ["all"])  # a bad name is refused before anything is written
        if remove:
            return InitResult(memory_rel(self), agents=install_agents(self, hosts, remove=True))
        result = init_memory(self, extended=extended)
        result.agents = install_agents(self, hosts)
        return result
