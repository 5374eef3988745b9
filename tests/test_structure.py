"""The shape of the source tree, checked with `ast` so it cannot drift: layers, cycles, sizes.

Every import counts, including those inside functions (the lazy ones are where layering slips).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = "memory_custodian"

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80

# Edges left out of the cycle check, each with its reason.
CYCLE_EXCEPTIONS = {
    # the package root re-exports Memory lazily (PEP 562 __getattr__) so `import memory_custodian` stays
    # cheap; modules importing `__version__` from the root are not a dependency of Memory on them
    (PKG, f"{PKG}.memory"): "lazy re-export of Memory in the package root",
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / PKG).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> list[str]:
    """The project modules one `from X import a, b` statement depends on."""
    if node.level:
        base = module.split(".") if _is_package(module) else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not target.startswith(PKG):
        return []
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.append(sub if sub in MODULES else target)
    return out


@functools.cache  # every check walks every module's tree: parse each once
def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


@functools.cache
def _imports(module: str) -> tuple[tuple[str, str, int], ...]:
    """(imported name as written or resolved, imported attribute, line) for every import in `module`."""
    found = []
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, "", node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            targets = _resolve(module, node)
            if targets:
                found.extend((t, alias.name, node.lineno) for t, alias in zip(targets, node.names))
            else:
                found.extend((node.module or "", alias.name, node.lineno) for alias in node.names)
    return tuple(found)


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module in MODULES:
        deps = {name for name, _, _ in _imports(module) if name in MODULES and name != module}
        graph[module] = {d for d in deps if (module, d) not in CYCLE_EXCEPTIONS}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_no_import_cycle():
    assert _cycles(_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def _importers_of(prefix: str) -> set[str]:
    return {m for m in MODULES for name, _, _ in _imports(m) if name == prefix or name.startswith(prefix + ".")}


def test_the_tiers_import_no_adapter():
    for tier in ("curated", "ledger"):
        for module in MODULES:
            if not module.startswith(f"{PKG}.{tier}"):
                continue
            bad = [(n, line) for n, _, line in _imports(module)
                   if n.startswith((f"{PKG}.agents", f"{PKG}.cli"))]
            assert bad == [], f"{module} imports an adapter: {bad}"


def test_only_the_cli_imports_the_argument_parser_and_nothing_imports_click():
    assert {m for m in _importers_of("argparse")} <= {m for m in MODULES if m.startswith(f"{PKG}.cli")}
    assert _importers_of("click") == set()


def test_only_the_mcp_module_imports_mcp():
    assert _importers_of("mcp") <= {f"{PKG}.agents.mcp_server"}


def test_only_the_viewer_serves_http_and_it_imports_no_other_adapter():
    web = {m for m in MODULES if m.startswith(f"{PKG}.web")}
    assert _importers_of("http.server") <= web
    assert _importers_of("starlette") | _importers_of("uvicorn") == set()  # the standard library's server is enough
    assert _importers_of(f"{PKG}.web") - web <= {f"{PKG}.cli.serve"}
    for module in web:
        bad = [(n, line) for n, _, line in _imports(module)
               if n.startswith((f"{PKG}.agents", f"{PKG}.cli", f"{PKG}.memory"))]
        assert bad == [], f"{module} imports an adapter or reaches past the Memory it is given: {bad}"


def test_no_private_name_is_imported_from_another_module():
    bad = [(m, name, attr, line) for m in MODULES for name, attr, line in _imports(m)
           if name.startswith(PKG) and attr.startswith("_") and not attr.startswith("__")]
    assert bad == []


def test_no_module_over_the_line_limit():
    long = {m: n for m in MODULES if (n := len(MODULES[m].read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_no_function_over_the_line_limit():
    long = []
    for module in MODULES:
        for node in ast.walk(_tree(module)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append((module, node.name, length))
    assert long == []


def test_the_hot_commands_load_no_pathlib_dataclasses_inspect_or_argparse(tmp_path):
    """What a fresh process imports, not only what the source says: `read`, `recall`, `remember`
    and the hooks run at every session start or prompt; their plain argv needs no argparse."""
    import json
    import subprocess
    import sys

    from memory_custodian import Memory

    Memory.open(tmp_path).init()
    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "SessionStart"})
    probe = ("import sys, io, os\nfrom memory_custodian.cli.run import run\nsys.stdin = io.TextIOWrapper(io.BytesIO("
             f"{payload.encode()!r}))\nsys.stdout = open(os.devnull, 'w')\nrun(sys.argv[1:])\n"
             "heavy = [m for m in ('pathlib', 'dataclasses', 'inspect', 'typing', 'argparse') if m in sys.modules]\n"
             "sys.stderr.write(repr(heavy))")
    for argv in (["read", "--task", "implementation"], ["remember", "a note"], ["recall", "note"],
                 ["hook", "SessionStart"], ["hook", "UserPromptSubmit"]):
        proc = subprocess.run([sys.executable, "-c", probe, *argv], cwd=tmp_path, capture_output=True, text=True)
        assert proc.stderr.splitlines()[-1] == "[]", (argv, proc.stderr[-2000:])
