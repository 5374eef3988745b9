"""How a host reaches an installation: one committed command for every machine, each clone finding its own.

Hosts start hooks and the MCP server with their own environment, often without the virtual
environment or `~/.local/bin` on PATH, and a team commits the host files: an absolute path there
is one developer's, and a teammate gets `not found` (exit 127) and no memory. So the committed
command names no path (`portable_argv`): it is `git` running an inline alias whose `sh` body
looks for the installation — the per-clone setting `memory-custodian.command` that `init` writes
to `.git/config` (`Launcher.posix_command`), then PATH, then the usual install places
(`USUAL_LOCATIONS`) — and, when there is none, still answers the agent with one line saying memory
is not installed here and how to install it. `git` and single-quoted words read the same in sh,
bash, Git Bash and PowerShell, so the same bytes work on every machine; the alias body holds no
quote at all (it sits inside single quotes) and writes its answer through `printf` octal escapes.

The launcher of the running installation (`current_launcher`) is its console script, or the
interpreter with `-m memory_custodian` when there is none beside it; on Windows always the
interpreter, quoted for cmd.exe where a command is run by cmd.exe (`command`), and written with
forward slashes for Git's `sh` in the per-clone setting.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile

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

    argv: list[str]
    kind: str
    windows: bool = False

    @classmethod
    def for_interpreter(cls, python: str, *, windows: bool = False) -> Launcher:
        return cls([python, "-m", MODULE], INTERPRETER, windows)

    def command(self, args: list[str]) -> str:
        """One command line for a host that runs hooks through a shell."""
        return " ".join(self.quote(word) for word in [*self.argv, *args])

    def quote(self, word: str) -> str:
        if self.windows:
            return f'"{word}"' if any(ch in word for ch in ' \t&()[]{}^=;!\'+,`~%') or "\\" in word else word

        return shlex.quote(word)

    def server(self, args: list[str]) -> dict:
        """The MCP server entry: a program and its arguments, no shell."""
        return {"args": [*self.argv[1:], *args], "command": self.argv[0]}

    def posix_command(self) -> str:
        """The per-clone setting's value: the words for `sh` (Git's own `sh` on Windows, hence `/`)."""
        words = [w.replace("\\", "/") for w in self.argv] if self.windows else list(self.argv)
        return " ".join(shlex.quote(word) for word in words)

    def temporary(self) -> bool:
        """Whether the path looks like an installation that will not be there next week."""
        path = self.argv[0].replace("\\", "/").casefold() if not self.windows else self.argv[0].casefold()
        temp = os.path.realpath(tempfile.gettempdir()).casefold()
        real = os.path.realpath(self.argv[0]).casefold() if not self.windows else path
        return any(part in path or part in real for part in TEMPORARY_PARTS) or real.startswith(temp + os.sep)


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


# ---- the committed command: the same bytes on every machine -----------------------------------

CONFIG_KEY = "memory-custodian.command"  # the per-clone setting, in .git/config
ALIAS = "memory-custodian"  # the inline alias's name (`git -c alias.NAME=!body NAME ...`)
OVERRIDE_ENV = "MEMORY_CUSTODIAN_COMMAND"  # a person's own override, e.g. in .claude/settings.local.json "env"
INSTALL_COMMAND = "pipx install memory-custodian"
# Where pipx, uv and Homebrew put the console script, in the order the committed command tries them.
USUAL_LOCATIONS = ("${HOME}/.local/bin/memory-custodian", "${HOME}/.local/bin/memory-custodian.exe",
                   "${HOME}/.local/share/pipx/venvs/memory-custodian/bin/memory-custodian",
                   "${HOME}/.local/pipx/venvs/memory-custodian/bin/memory-custodian",
                   "${HOME}/.local/share/uv/tools/memory-custodian/bin/memory-custodian",
                   "/opt/homebrew/bin/memory-custodian", "/usr/local/bin/memory-custodian")


def not_installed_text(host: str) -> str:
    """The one line a hook gives the agent on a machine without the installation."""
    return (f"memory-custodian · memory is not installed here, so this session has none of the project's memory "
            f"— install it with `{INSTALL_COMMAND}`, then run `memory-custodian init --agent {host}` in this clone.")


def _octal(text: str) -> str:
    """`text` for `printf` in an unquoted shell word: every byte but letters and digits as `\\ooo`."""
    return "".join(ch if ch.isascii() and ch.isalnum() else "".join(f"\\\\{b:03o}" for b in ch.encode("utf-8"))
                   for ch in text)


def _alias_body(answer: str, to_stderr: bool) -> str:
    """The alias's `sh` body: the first installation found runs the arguments; else `answer`.

    No quote characters: with IFS empty and globbing off, unquoted expansions are never split
    (a path with spaces stays one word) and `$@` keeps each argument whole.
    """
    tail = (f"printf {_octal(answer)} >&2; exit 1" if to_stderr
            else (f"printf {_octal(answer)}" if answer else ":"))
    return ("f() { IFS=; set -f; r() { test -f $1 && test -x $1 && exec $@; }; "
            f"c=${{{OVERRIDE_ENV}:-$(git -C ${{CLAUDE_PROJECT_DIR:-.}} config {CONFIG_KEY} 2>/dev/null)}}; "
            "case $c in ?*) eval r $c \\$@;; esac; "
            "p=$(command -v memory-custodian) && r $p $@; "
            f"for p in {' '.join(USUAL_LOCATIONS)}; do r $p $@; done; {tail}; }}; f")


def portable_argv(args: list[str], answer: str, *, to_stderr: bool = False) -> list[str]:
    """The committed command for `args` (`hook ...` or `mcp ...`), as a program and its arguments.

    `answer` is what it prints where no installation is found (the host's JSON for a hook, ending in
    a newline; "" for nothing), on stderr with exit 1 when `to_stderr` (the MCP server)."""
    return ["git", "-c", f"alias.{ALIAS}=!{_alias_body(answer, to_stderr)}", ALIAS, *args]


def portable_command(args: list[str], answer: str, shell: str = "sh") -> str:
    """`portable_argv` as one shell line: single quotes, the same words in sh, bash and PowerShell; with
    `shell` "cmd", double quotes for cmd.exe (the body holds no quote and no `%`, so cmd passes it whole)."""
    argv = portable_argv(args, answer)
    if shell == "cmd":
        return " ".join(f'"{word}"' if set(word) & set(" &|<>^()") else word for word in argv)
    return " ".join(shlex.quote(word) for word in argv)
