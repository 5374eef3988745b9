"""The agent hosts memory-custodian wires into: one module per host, imported when that host calls.

A hook imports this registry on every prompt, so it holds names only. Each host module defines
`HOST`, an `adapter.Host` record with everything about that host (docs/hosts/README.md says how
to add one): a new host is its module, its recorded payloads and one name in `HOSTS`.
"""

from __future__ import annotations

HOSTS = ("claude", "codex", "gemini")


def load(name: str):
    """The `Host` record of host `name`; its module is imported on first use."""
    if name not in HOSTS:
        from ...errors import InvalidInput

        raise InvalidInput(f"unknown host {name!r}; use one of {', '.join(HOSTS)}")
    # __import__, not importlib: the importlib package is not loaded yet in a fresh hook process
    return __import__(f"{__name__}.{name}", fromlist=("HOST",)).HOST
