"""`memory-custodian read` without loading click: the pack is fetched on every agent session start,
and importing click alone costs more than the whole read on a slow machine.

`main(argv)` understands exactly the options of the click command (`cli/curated_read.py`) and
returns the exit code; for anything else (help, an unknown or malformed option) it returns None
and the caller falls through to the click CLI, which owns usage errors. Both paths print through
`emit_read`, so their output is identical.
"""

from __future__ import annotations

import sys

_VALUE = {"--project-root": "project_root", "--memory-dir": "memory_dir", "--task": "task", "-t": "task",
          "--query": "query", "-q": "query", "--format": "fmt"}
_MULTI = {"--area": "areas", "--profile": "profiles", "--rule": "rules", "--path": "paths"}
_FLAGS = {"--names-only": "names_only", "--explain": "explain", "--strict": "strict"}


def parse(argv: list[str]) -> dict | None:
    from ..fastargs import scan

    scanned = scan(argv, values=_VALUE, multi=_MULTI, flags=_FLAGS, positional=False)
    if scanned is None:
        return None  # help, an unknown option or a stray argument: click explains it
    opts = {"project_root": None, "memory_dir": None, "task": None, "query": None, "fmt": "text",
            "names_only": False, "explain": False, "strict": False, **scanned[0]}
    if opts["task"] is None or opts["fmt"] not in ("text", "json"):
        return None
    return opts


def emit_read(result, fmt: str, explain: bool, out=None, err=None) -> int:
    """Print a ReadResult as the `read` command does; returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    from ..textsafe import json_text, printable

    if fmt == "json":
        out.write(json_text(result.to_dict()) + "\n")
    else:
        text = result.rendered
        if explain:
            text += "\n" + result.explain_text()
        out.write(printable(text))  # curated files are edited by hand and merged from pull requests
        for message in result.warnings:
            if not message.startswith("required memory file"):
                err.write(printable(f"warning: {message}\n"))
    out.flush()
    if result.exit_code:
        reason = next((w for w in result.warnings if w.startswith("required memory file")), "read incomplete")
        err.write(f"error: {reason}\n")
        err.flush()
    return result.exit_code


def main(argv: list[str]) -> int | None:
    opts = parse(argv)
    if opts is None:
        return None
    from ..errors import CustodianError

    try:
        from ..memory import Memory

        memory = Memory.open(opts["project_root"], opts["memory_dir"])
        result = memory.read(opts["task"], areas=opts["areas"], profiles=opts["profiles"], rules=opts["rules"],
                             paths=opts["paths"], query=opts["query"], names_only=opts["names_only"],
                             strict=opts["strict"])
    except CustodianError as exc:
        from ..fastargs import CLI_TERMS

        sys.stderr.write(f"error: {exc.one_line(CLI_TERMS)}\n")
        return exc.exit_code
    try:
        return emit_read(result, opts["fmt"], opts["explain"])
    except BrokenPipeError:
        # `read | head`: the reader left; say nothing more and exit as a SIGPIPE'd tool would
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
