"""memory-custodian: repo-native project memory for coding agents.

Importing the package stays cheap (hooks run on every prompt); `Memory` is loaded on first use.
"""

__version__ = "0.1.0"
PROTOCOL_VERSION = "0.5"

__all__ = ["PROTOCOL_VERSION", "Memory", "__version__"]


def __getattr__(name):
    if name == "Memory":
        from .memory import Memory

        return Memory
    raise AttributeError(name)
