"""Imports sit at the top of their module, except where a fresh hook or hot command would pay for them.

Why: a hook (`memory-custodian hook ...`) and the hot commands (`read`, `recall`, `remember`) start
as fresh processes on every prompt, so they pay for every module they import, every time
(test_hook_imports, docs/performance.md); there an import inside the one function that needs it
keeps a module off the path. Everywhere else an import at the top of the module makes its
dependencies visible at a glance and fails when the module loads, not on the one call that needs it.

So a function-level import is allowed only
- in a module on the measured path (OWN of test_hook_imports, and what the fresh processes measured
  here load: every hook event, the hot commands, and `read` and the start hook before the first note),
  of a module that some measured process loading the importer does not load (else the lazy import
  keeps nothing off the path); or
- when LAZY lists the pair with its reason (an import cycle, a platform's or a Python version's
  module, a heavy module only one command needs).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_hook_imports import OWN
from test_structure import MODULES, PKG

# (importing module, imported module) -> why the import stays in the function; package modules are
# written as in OWN (".agents.hooks" is memory_custodian.agents.hooks), others by their own name
LAZY: dict[tuple[str, str], str] = {
    (".", ".memory"): "PEP 562 re-export: every submodule import runs the package root first, so at the top it would "
                      "load the facade into every process, and close the cycle memory -> ... -> memory_custodian "
                      "(`__version__`, test_structure's CYCLE_EXCEPTIONS)",
    (".base.locking", "fcntl"): "platform module: POSIX only (Windows has none and locks with msvcrt)",
    (".agents.host_doctor", "tomllib"): "Python 3.11+ only: on 3.10 the function reads the block by hand",
}

# every event of a Claude Code hook (test_hook_imports lists what SessionStart and UserPromptSubmit load:
# PreToolUse runs on every tool call, Stop on every turn) and the hot commands as test_structure runs them
HOOKS = {"SessionStart": {"source": "startup"},
         "UserPromptSubmit": {"prompt": "Why does the retry budget break the queue worker?"},
         "PreToolUse": {"tool_name": "Read", "tool_input": {"file_path": "src/queue.py"}},
         "PreCompact": {"trigger": "auto"}, "Stop": {"stop_hook_active": False}, "SessionEnd": {"reason": "exit"}}
HOT = (["read", "--task", "implementation"], ["recall", "note"], ["recall", "retry budget"], ["remember", "a note"],
       ["remember", "--actor", "agent", "--quote", "words the user never wrote", "a note"])
PROBE = ("import io, os, sys\nfrom memory_custodian.__main__ import main\n"
         "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))\nsys.stdout = open(os.devnull, 'w')\n"
         "sys.argv = ['memory-custodian', *sys.argv[2:]]\n"
         "try:\n    main()\nexcept SystemExit:\n    pass\n"
         "loaded = sorted(sys.modules)\nimport json\nsys.stderr.write(json.dumps(loaded))")


def _key(module: str) -> str:
    """`memory_custodian.agents.hooks` as OWN and LAZY write it (".agents.hooks"); other modules as they are."""
    if module == PKG:
        return "."
    return module[len(PKG):] if module.startswith(PKG + ".") else module


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules one import statement loads (`from .x import y` is module `.x.y` when that is one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    target = node.module or ""
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    return [f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target for alias in node.names]


def lazy_imports(module: str, source: str, is_package: bool = False) -> list[tuple[str, str, int]]:
    """(importing module, imported module, line) for every import inside a function of `source`."""
    found = []
    for func in ast.walk(ast.parse(source)):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(func):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found.extend((module, name, node.lineno) for name in _imported(module, is_package, node))
    return sorted(set(found))  # a nested function's imports are walked from each enclosing one


def _all_lazy_imports() -> list[tuple[str, str, int]]:
    return [found for module, path in MODULES.items()
            for found in lazy_imports(module, path.read_text(encoding="utf-8"), path.name == "__init__.py")]


def unjustified(lazy: list[tuple[str, str, int]], runs: list[set[str]], lazy_list: dict) -> list[tuple[str, str, int]]:
    """The lazy imports neither the measured path (`runs`: what each measured process loaded) nor LAZY explains."""
    path = {m for m in set().union(*runs) if m == PKG or m.startswith(PKG + ".")}
    bad = []
    for importer, imported, line in lazy:
        if (_key(importer), _key(imported)) in lazy_list:
            continue
        kept_off = any(imported not in run for run in runs if importer in run)
        if not (importer in path and kept_off):
            bad.append((_key(importer), _key(imported), line))
    return bad


def stale(lazy: list[tuple[str, str, int]], lazy_list: dict) -> list[tuple[str, str]]:
    """The LAZY entries no function-level import matches any more."""
    found = {(_key(importer), _key(imported)) for importer, imported, _ in lazy}
    return sorted(set(lazy_list) - found)


def _run(root: Path, payload: dict, *argv: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(payload), *argv], cwd=root, capture_output=True,
                          text=True)
    last = (proc.stderr.splitlines() or [""])[-1]
    assert last.startswith("["), (argv, proc.stderr[-2000:])
    return set(json.loads(last))


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> list[set[str]]:
    """What each fresh measured process loads (`sys.modules` at its end), in a project as test_hook_imports
    sets it up."""
    from memory_custodian import Memory

    root = tmp_path_factory.mktemp("measured")
    mem = Memory.open(root)
    mem.init()
    mem.remember("Never push to main directly", kind="directive")
    mem.remember("The retry budget is shared by every queue worker", kind="gotcha", paths=["src/queue.py"])
    mem.index()
    base = {"session_id": "s1", "cwd": str(root), "transcript_path": "/tmp/t.jsonl"}
    runs = [_run(root, {**base, "hook_event_name": event, **fields}, "hook", "--host", "claude", event)
            for event, fields in HOOKS.items()]
    runs += [_run(root, {}, *argv) for argv in HOT]
    # a memory folder with no note yet (`init` makes no ledger folder): the pack skips the ledger tier
    bare = tmp_path_factory.mktemp("no_notes")
    Memory.open(bare).init()
    runs += [_run(bare, {**base, "cwd": str(bare), "hook_event_name": "SessionStart", "source": "startup"}, "hook",
                  "--host", "claude", "SessionStart"), _run(bare, {}, "read", "--task", "implementation")]
    own = {m for run in runs[:2] for m in run if m == PKG or m.startswith(PKG + ".")}
    assert own == {PKG + k if k != "." else PKG for k in OWN}, "the hooks measured here are test_hook_imports' hooks"
    return runs


def test_every_function_level_import_keeps_a_module_off_the_measured_path_or_is_listed(measured):
    assert unjustified(_all_lazy_imports(), measured, LAZY) == [], (
        "move the import to the top of its module, or list it in LAZY with the reason it must stay")


def test_every_lazy_entry_still_matches_a_function_level_import():
    assert stale(_all_lazy_imports(), LAZY) == [], "this import is gone or at the top now: drop its LAZY entry"
    assert all(reason.strip() for reason in LAZY.values())
    planted = {(".base.locking", "fcntl"): "platform module", (".base.locking", "shlex"): "never imported there"}
    assert stale(_all_lazy_imports(), planted) == [(".base.locking", "shlex")]


def test_the_checker_finds_a_lazy_import_that_keeps_nothing_off_the_path():
    source = ("import os\n\n\ndef f():\n    import json\n    from .errors import InvalidInput\n"
              "    from ..ledger.storage import ids\n\n\nclass C:\n    def g(self):\n        def h():\n"
              "            import shlex\n")
    found = lazy_imports(f"{PKG}.base.example", source)
    assert found == [(f"{PKG}.base.example", "json", 5), (f"{PKG}.base.example", f"{PKG}.base.errors", 6),
                     (f"{PKG}.base.example", f"{PKG}.ledger.storage.ids", 7), (f"{PKG}.base.example", "shlex", 13)]
    hook = {PKG, f"{PKG}.base.example", f"{PKG}.base.errors", "json"}
    command = {PKG, f"{PKG}.base.example", f"{PKG}.ledger.storage.ids"}
    # on the path: json and errors are kept off the command, ids off the hook, shlex off both
    assert unjustified(found, [hook, command], {}) == []
    # errors loaded by every process that loads the module: the lazy import keeps nothing off
    assert unjustified(found, [hook, command | {f"{PKG}.base.errors"}], {}) == [(".base.example", ".base.errors", 6)]
    # off the path every one is refused, unless LAZY says why
    off = unjustified(found, [{PKG, "json"}], {(".base.example", "shlex"): "only one command needs it"})
    assert off == [(".base.example", "json", 5), (".base.example", ".base.errors", 6),
                   (".base.example", ".ledger.storage.ids", 7)]
