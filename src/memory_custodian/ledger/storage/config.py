"""The memory folder's committed settings: `docs/memory/config.json`.

Settings that a whole team must share (is the export mirror on, and where) live in a small
committed JSON file beside the manifest, not in `.cache/`, so a clone behaves like the checkout
it came from. Unknown keys are kept as they are, so other parts of the tool can add theirs.

    {"export": {"enabled": true, "path": "docs/memory/MEMORY.md"}}
"""

from __future__ import annotations

import json
import os

from ...base import fsutil
from ...base.errors import Corrupt

CONFIG_FILE = "config.json"


def config_path(memory_dir) -> str:
    return os.path.join(os.fspath(memory_dir), CONFIG_FILE)


def parse_config(raw: bytes, path) -> dict:
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Corrupt(f"not valid JSON ({exc}); fix it or delete it to return to the defaults", path=str(path)) from exc
    if not isinstance(data, dict):
        raise Corrupt("must hold a JSON object; fix it or delete it to return to the defaults", path=str(path))
    export = data.get("export", {})
    if not isinstance(export, dict) or not isinstance(export.get("enabled", False), bool) or \
            not isinstance(export.get("path", ""), str):
        raise Corrupt('"export" must look like {"enabled": true, "path": "docs/memory/MEMORY.md"}', path=str(path))
    return data


def load_config(memory_dir) -> dict:
    """The settings, or {} when there is no config file."""
    path = config_path(memory_dir)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return {}
    return parse_config(raw, path)


def update_config(memory_dir, section: str, values: dict) -> dict:
    """Merge `values` into `section` and write the file atomically under the project lock."""
    with fsutil.project_lock(memory_dir):
        data = load_config(memory_dir)
        merged = dict(data.get(section) or {})
        merged.update(values)
        data[section] = merged
        fsutil.atomic_write(config_path(memory_dir), json.dumps(data, sort_keys=True, indent=2) + "\n")
    return data
