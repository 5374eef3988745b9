"""What every handler shares: opening the Memory, printing data and warnings, failing with a code."""

from __future__ import annotations

import sys


class Exit(Exception):
    """End the command with `exit_code` and one error line (the output before it stands)."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class UsageError(Exception):
    """Bad command-line input (exit 2); `command` names the command whose help explains it."""

    exit_code = 2

    def __init__(self, message: str, command: str | None = None):
        super().__init__(message)
        self.message = message
        self.command = command


def echo(text: str = "", nl: bool = True) -> None:
    sys.stdout.write(text + "\n" if nl else text)


def warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


def emit_json(obj) -> None:
    """One JSON document on stdout with stable sorted keys."""
    from ..textsafe import json_text

    echo(json_text(obj))


def open_memory(project_root, memory_dir):
    from ..memory import Memory

    return Memory.open(project_root, memory_dir)
