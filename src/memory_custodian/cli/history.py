"""CLI commands of memory's history: diff."""

from __future__ import annotations

from .output import echo, emit_json, open_memory


def diff(base, head, fmt, project_root, memory_dir):
    result = open_memory(project_root, memory_dir).diff(base, head)
    if fmt == "json":
        emit_json(result.to_dict())
    else:
        echo(result.markdown() if fmt == "markdown" else result.text(), nl=False)
