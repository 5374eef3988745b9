"""The agent hosts memory-custodian wires into: one module per host, imported when that host calls.

A hook imports this registry on every prompt, so it holds names only. Each host module defines
`HOST`, an `adapter.Host` record with everything about that host (docs/hosts/README.md says how
to add one): a new host is its module, its recorded payloads and one name in `HOSTS`.
"""

from __future__ import annotations

import os

from ...base.errors import InvalidInput

HOSTS = ("claude", "codex", "gemini")

# Variables each host sets in the processes its tools start (docs/hosts/*.md say where from): a CLI
# run there is an agent's, so it records `agent` unless told `--actor human`.
AGENT_ENV = {"claude": ("CLAUDECODE",), "codex": ("CODEX_CI", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED"),
             "gemini": ("GEMINI_CLI",)}


def running_host(environ=None) -> str | None:
    """The agent host whose tool started this process, if any (from the variables it sets)."""
    env = os.environ if environ is None else environ
    return next((host for host, names in AGENT_ENV.items() if any(env.get(n) for n in names)), None)


def load(name: str):
    """The `Host` record of host `name`; its module is imported on first use."""
    if name not in HOSTS:
        raise InvalidInput(f"unknown host {name!r}; use one of {', '.join(HOSTS)}")
    # __import__, not importlib: the importlib package is not loaded yet in a fresh hook process
    return __import__(f"{__name__}.{name}", fromlist=("HOST",)).HOST
