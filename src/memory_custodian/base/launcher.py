"""The command a host runs to reach this installation: absolute, so a host whose PATH lacks it still finds it.

Hosts start hooks and the MCP server with their own environment, often without the virtual
environment or `~/.local/bin` on PATH: a bare `memory-custodian` there exits 127 and the agent
gets no memory at all. So `init --agent` writes the console script of the installation it runs
from (its absolute path), or, when there is none beside the interpreter, the interpreter itself
with `-m memory_custodian`. On Windows it is always the interpreter, quoted for cmd.exe, the form
that survives a space in the path and a missing `.exe` association.
"""

from __future__ import annotations

import os
import sys

from .records import Record

SCRIPT = "memory-custodian"
MODULE = "memory_custodian"
CONSOLE_SCRIPT, INTERPRETER = "console script", "interpreter"
# Where a path means the installation will be gone soon: a temp dir, a one-off runner's cache.
TEMPORARY_PARTS = ("/tmp/", "/var/folders/", "\\temp\\", "/pip-build-env-", "/.cache/uv/", "\\cache\\uv\\",
                   "/.cache/pipx/", "/pipx/.cache/", "/_npx/", "/.local/share/uv/cache/")


class Launcher(Record):
    """`argv`: the words that start this installation (`[script]` or `[python, "-m", module]`);
    `kind`: console script or interpreter; `windows`: quote for cmd.exe rather than a POSIX shell."""

    FIELDS = ("argv", "kind", "windows")
    DEFAULTS = {"windows": False}

    @classmethod
    def for_interpreter(cls, python: str, *, windows: bool = False) -> "Launcher":
        return cls([python, "-m", MODULE], INTERPRETER, windows)

    def command(self, args: list[str]) -> str:
        """One command line for a host that runs hooks through a shell."""
        return " ".join(self.quote(word) for word in [*self.argv, *args])

    def quote(self, word: str) -> str:
        if self.windows:
            return f'"{word}"' if any(ch in word for ch in ' \t&()[]{}^=;!\'+,`~%') or "\\" in word else word
        import shlex

        return shlex.quote(word)

    def server(self, args: list[str]) -> dict:
        """The MCP server entry: a program and its arguments, no shell."""
        return {"args": [*self.argv[1:], *args], "command": self.argv[0]}

    def temporary(self) -> bool:
        """Whether the path looks like an installation that will not be there next week."""
        import tempfile

        path = self.argv[0].replace("\\", "/").casefold() if not self.windows else self.argv[0].casefold()
        temp = os.path.realpath(tempfile.gettempdir()).casefold()
        real = os.path.realpath(self.argv[0]).casefold() if not self.windows else path
        return any(part in path or part in real for part in TEMPORARY_PARTS) or real.startswith(temp + os.sep)

    def describe(self) -> str:
        what = ("the console script of the installation that ran `init`" if self.kind == CONSOLE_SCRIPT
                else "the interpreter of the installation that ran `init`, with -m memory_custodian")
        return f"{self.command([])} ({what})"


def current_launcher() -> Launcher:
    """The launcher of the running installation: its console script beside the interpreter, else the interpreter."""
    python = os.path.abspath(sys.executable)
    if os.name == "nt":
        return Launcher.for_interpreter(python, windows=True)
    script = os.path.join(os.path.dirname(python), SCRIPT)
    if os.path.isfile(script) and os.access(script, os.X_OK) and _runs_this_python(script, python):
        return Launcher([os.path.realpath(script)], CONSOLE_SCRIPT)
    return Launcher.for_interpreter(python)


def _runs_this_python(script: str, python: str) -> bool:
    """A console script whose `#!` line names this interpreter (not a stale one of another install)."""
    try:
        with open(script, "rb") as fh:
            first = fh.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return False
    if not first.startswith("#!"):
        return False
    named = first[2:].strip().split(" ")[0]
    return os.path.realpath(named) == os.path.realpath(python) or os.path.dirname(named) == os.path.dirname(python)


def is_our_command(command: str) -> bool:
    """Whether a hook command string is one `init --agent` wrote, in any form any version wrote."""
    words = command.replace('"', " ").replace("'", " ").split()
    for i, word in enumerate(words[:-1]):
        name = word.replace("\\", "/").rsplit("/", 1)[-1]
        if name in (SCRIPT, SCRIPT + ".exe", MODULE) and words[i + 1] == "hook":
            return True
    return False
