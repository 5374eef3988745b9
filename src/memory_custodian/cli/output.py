"""What every handler shares: opening the Memory, printing data and warnings, failing with a code."""

from __future__ import annotations

import os
import sys

from ..base.errors import InvalidInput
from ..base.fsutil import inside
from ..base.textsafe import json_text
from ..memory import Memory


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
    echo(json_text(obj))


def open_memory(project_root, memory_dir):
    return Memory.open(project_root, memory_dir)


def paths_from_cwd(paths, project_root, memory_dir) -> list[str]:
    """`--path` values as a person typing them means them: relative to the current directory when it
    is inside the project (from `src/app`, `db.py` is `src/app/db.py`), stored relative to the
    project root; one that leaves the project is refused. Absolute paths go to the library as they are."""
    root = open_memory(project_root, memory_dir).root_str
    here = os.path.realpath(os.getcwd())
    if here == root or not inside(here, root):
        return list(paths)
    out = []
    for value in paths:
        raw = str(value).replace("\\", "/")
        if os.path.isabs(raw) or not raw.strip():
            out.append(value)
            continue
        rel = os.path.relpath(os.path.normpath(os.path.join(here, raw)), root).replace(os.sep, "/")
        if rel == ".." or rel.startswith("../"):
            raise InvalidInput(f"{{field}} {value!r} leaves the project (from {os.path.relpath(here, root)} it is "
                               f"{rel} from the project root); pass a path inside {root}", field="paths")
        out.append(rel + ("/" if raw.endswith("/") and rel != "." else ""))
    return out
