"""The one way into a command: parse from the table, call its handler, turn errors into one line.

Exit codes: 0 ok, 1 refused or problems found, 2 bad input (see `errors.py`). With `--format json`
an error is one JSON object on stderr: {"error": {"exit_code", "line", "message", "path"}}.
"""

from __future__ import annotations

import json
import os
import sys
from itertools import pairwise

from .. import __version__
from ..agents.hosts import running_host
from ..base.errors import CustodianError
from ..base.textsafe import json_safe
from .argv import parse
from .output import Exit, UsageError, paths_from_cwd
from .table import COMMANDS, GROUPS, PROG
from .terms import CLI_TERMS

ABOUT = ("Repo-native project memory for coding agents.\n\nCurated rules in docs/memory/*.md are routed per task and "
         "packed to a budget; the notes agents record live in an append-only ledger with ranked recall. Start with "
         "`init`, then `read --task planning`.")


def top_help() -> str:
    """The top-level help: every command under its group, each summary whole."""
    import textwrap

    width = max(len(name) for name in COMMANDS) + 4
    lines = [f"usage: {PROG} [--version] [-h] COMMAND [ARGS]...", ""]
    lines += [textwrap.fill(para, 100) + "\n" for para in ABOUT.split("\n\n")]
    for group in GROUPS:
        lines.append(f"{group}:")
        for command in COMMANDS.values():
            if command.group == group:
                lines += textwrap.wrap(command.summary, 100, initial_indent=f"  {command.name:<{width - 2}}",
                                       subsequent_indent=" " * width)
        lines.append("")
    lines.append(f"Run `{PROG} COMMAND --help` for a command's options and an example.")
    return "\n".join(lines) + "\n"


def handler_of(command):
    module, attr = command.handler.split(":")
    # __import__, not importlib: the one handler module is all a run needs (importlib costs ~0.3 ms)
    return getattr(__import__(f"{__package__}.{module}", fromlist=[attr]), attr)


def wants_json(argv: list[str]) -> bool:
    return "--format=json" in argv or any(a == "--format" and b == "json" for a, b in pairwise(argv))


def report_error(message: str, exit_code: int, as_json: bool, *, path=None, line=None) -> int:
    if as_json:
        error = {"exit_code": exit_code, "line": line, "message": message, "path": path}
        sys.stderr.write(json_safe(json.dumps({"error": error}, sort_keys=True, ensure_ascii=False)) + "\n")
    else:  # a CustodianError arrives as its one_line, place included
        sys.stderr.write(f"error: {message}".replace("\n", " ") + "\n")
    return exit_code


def run(argv: list[str]) -> int:
    """Run `memory-custodian ARGV` in this process; returns the exit code."""
    if argv[:1] in (["-h"], ["--help"]) or not argv:
        sys.stdout.write(top_help())
        return 0 if argv else 2
    if argv[:1] == ["--version"]:
        sys.stdout.write(f"{PROG}, version {__version__}\n")
        return 0

    as_json = wants_json(argv)
    try:
        command, kwargs = parse(argv)
        if "actor" in kwargs and kwargs["actor"] is None:
            kwargs["actor"] = "agent" if running_host() else "human"
        if kwargs.get("paths"):
            kwargs["paths"] = paths_from_cwd(kwargs["paths"], kwargs.get("project_root"), kwargs.get("memory_dir"))
        return handler_of(command)(**kwargs) or 0
    except UsageError as exc:
        hint = f" — for usage: {PROG} {exc.command} --help" if exc.command and not as_json else ""
        return report_error(exc.message + hint, exc.exit_code, as_json)
    except CustodianError as exc:
        sys.stdout.flush()
        if as_json:
            return report_error(exc.phrased(CLI_TERMS), exc.exit_code, True, path=exc.path, line=exc.line)
        return report_error(exc.one_line(CLI_TERMS), exc.exit_code, False)
    except Exit as exc:
        sys.stdout.flush()
        return report_error(exc.message, exc.exit_code, as_json)
    except SystemExit as exc:  # --help, or a handler that exits on its own terms
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            pass


def main(argv: list[str] | None = None) -> None:
    """The console script: `memory-custodian ARGS` (argv defaults to sys.argv[1:])."""
    try:
        code = run(sys.argv[1:] if argv is None else list(argv))
    except BrokenPipeError:
        # `read | head`: the reader left; say nothing more and exit as a SIGPIPE'd tool would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 141
    except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback; writes are atomic or journalled
        sys.stderr.write("error: interrupted\n")
        code = 130
    sys.exit(code)
