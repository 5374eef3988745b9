"""`remember` and `recall` without loading click: agents and scripts run them in loops, and importing
click costs more than the write or the query itself.

`main(argv)` understands exactly the options of the click commands (`cli/ledger.py`) and returns
the exit code; for anything else (help, an unknown or malformed option, a bad choice) it returns
None and the caller falls through to the click CLI, which owns usage errors. Output, errors and
exit codes are the same on both paths (tests run both).
"""

from __future__ import annotations

import sys

from .model import KINDS, PRIORITIES, RECALL_STATES, SCOPES

_COMMON_VALUE = {"--project-root": "project_root", "--memory-dir": "memory_dir", "--format": "fmt"}
_SPEC = {
    "remember": {
        "value": {"--kind": "kind", "--priority": "priority", "--title": "title", "--quote": "quote",
                  "--scope": "scope", "--expires": "expires", "--supersedes": "supersedes", "--actor": "actor"},
        "multi": {"--tag": "tags", "--path": "paths"},
        "flags": {},
        "choices": {"kind": KINDS, "priority": PRIORITIES, "scope": SCOPES,
                    "actor": ("human", "agent")},
        "positional": (1, 1),
    },
    "recall": {
        "value": {"--limit": "limit"},
        "multi": {"--kind": "kinds", "--tag": "tags", "--path": "paths", "--state": "states"},
        "flags": {"--all": "include_all"},
        "choices": {"kinds": KINDS, "states": RECALL_STATES},
        "positional": (0, 1),
    },
}


def parse(command: str, argv: list[str]) -> dict | None:
    from ..fastargs import scan

    spec = _SPEC[command]
    scanned = scan(argv, values={**_COMMON_VALUE, **spec["value"]}, multi=spec["multi"], flags=spec["flags"],
                   positional=True)
    if scanned is None:
        return None  # help or an unknown option: click explains it
    opts = {"fmt": "text", **scanned[0], "args": scanned[1]}
    lo, hi = spec["positional"]
    if not lo <= len(opts["args"]) <= hi or opts["fmt"] not in ("text", "json"):
        return None
    for key, allowed in spec["choices"].items():
        got = opts.get(key)
        vals = got if isinstance(got, list) else ([got] if got is not None else [])
        if any(v not in allowed for v in vals):
            return None
    if "limit" in opts:
        # str.isdigit() also takes '²' and other digits int() rejects: ASCII only, the rest is click's
        if not (opts["limit"].isascii() and opts["limit"].isdigit()):
            return None
        try:
            opts["limit"] = int(opts["limit"])
        except ValueError:  # more digits than int() converts: click explains
            return None
    return opts


def _emit_json(obj) -> None:
    from ..textsafe import json_text

    sys.stdout.write(json_text(obj) + "\n")


def _remember(memory, o) -> None:
    from .inputs import read_stdin_text

    text = o["args"][0]
    if text == "-":
        text = read_stdin_text()
    note = memory.remember(text, kind=o.get("kind") or "finding", priority=o.get("priority") or "medium",
                           title=o.get("title"), tags=tuple(o["tags"]), paths=tuple(o["paths"]), quote=o.get("quote"),
                           scope=o.get("scope") or "workspace", expires=o.get("expires"),
                           supersedes=o.get("supersedes"), actor=o.get("actor") or "human")
    if note.mirror_warning:
        sys.stderr.write(f"warning: {note.mirror_warning}\n")
    if o["fmt"] == "json":
        _emit_json(note.to_dict())
    else:
        sys.stdout.write(note.id + "\n")


def _recall(memory, o) -> None:
    result = memory.recall(o["args"][0] if o["args"] else None, kinds=tuple(o["kinds"]), tags=tuple(o["tags"]),
                           paths=tuple(o["paths"]), states=tuple(o["states"]), limit=o.get("limit", 10),
                           include_all=bool(o.get("include_all")), ids=o["fmt"] == "json")
    if o["fmt"] == "json":
        _emit_json(result.to_dict())
    else:
        from ..textsafe import printable

        sys.stdout.write(printable(result.render_text()))  # note text from disk: no raw escapes


def main(argv: list[str]) -> int | None:
    if not argv or argv[0] not in _SPEC:
        return None
    opts = parse(argv[0], argv[1:])
    if opts is None:
        return None
    from ..errors import CustodianError
    from ..fastargs import CLI_TERMS
    from ..memory import Memory

    try:
        memory = Memory.open(opts.get("project_root"), opts.get("memory_dir"))
        (_remember if argv[0] == "remember" else _recall)(memory, opts)
    except CustodianError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"error: {exc.one_line(CLI_TERMS)}\n")
        return exc.exit_code
    sys.stdout.flush()
    return 0
