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


# Layers, top to bottom (DESIGN.md "Layers"): a module imports only modules of its own layer or below.
# Each entry is a package (with everything under it) or a module; every module of the package is in one.
LAYERS = (
    ("entry", (f"{PKG}.__main__",)),
    ("command line", (f"{PKG}.cli",)),
    ("adapters", (f"{PKG}.agents", f"{PKG}.web")),
    ("facade", (f"{PKG}.memory",)),
    ("history", (f"{PKG}.history",)),  # memory's history from git: reads both tiers and the setup's git
    ("session and setup", (f"{PKG}.session", f"{PKG}.setup")),
    ("pack and check", (f"{PKG}.curated.pack", f"{PKG}.curated.checking")),  # both read the tiers as a whole
    ("tiers", (f"{PKG}.curated", f"{PKG}.ledger")),
    ("base", (f"{PKG}.base", PKG)),
)

# The rooms of each package: what changes together sits together; a module outside them is loose.
ROOMS = {
    PKG: {"__init__", "__main__", "memory", "base", "cli", "web", "agents", "session", "setup", "curated", "ledger",
          "history"},
    f"{PKG}.curated": {"parse", "manifest", "pack", "write", "checking"},
    # params: the inputs of a note and a recall, declared once below the adapters that build on them (CLI, MCP)
    f"{PKG}.ledger": {"storage", "index", "recall", "text", "api", "pack_sections", "frames", "results", "params"},
    f"{PKG}.agents": {"hosts", "hooks", "writeback", "mcp_server", "recall_view", "touched", "cold_index", "install",
                      "init_agents", "managed_block", "host_doctor", "file_form"},
}

# Within a layer, the one direction an arrow may run between siblings (the other is refused).
SIBLING_ORDER = {
    "command line": (),
    "adapters": (),  # the hooks, the MCP server and the viewer never import each other's packages
    "session and setup": (),
    "pack and check": ((f"{PKG}.curated.checking", f"{PKG}.curated.pack"),),  # check reads what the pack reads
    "tiers": ((f"{PKG}.curated", f"{PKG}.ledger"),),  # the ledger knows nothing of the curated files
}


def _owner(module: str) -> tuple[int, str]:
    """The layer of `module` and the declared entry holding it (the longest that matches)."""
    best = None
    for rank, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            if (module == entry or module.startswith(entry + ".")) and (best is None or len(entry) > len(best[1])):
                best = (rank, entry)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return best


def _layer_violations(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    bad = []
    for module, deps in graph.items():
        rank, entry = _owner(module)
        for dep in sorted(deps):
            dep_rank, dep_entry = _owner(dep)
            if dep_rank < rank:
                bad.append((module, dep))
            elif dep_rank == rank and dep_entry != entry and entry != PKG and dep_entry != PKG:
                layer = LAYERS[rank][0]
                if (entry, dep_entry) not in SIBLING_ORDER.get(layer, ()):
                    bad.append((module, dep))
    return bad


def _full_graph() -> dict[str, set[str]]:
    return {m: {name for name, _, _ in _imports(m) if name in MODULES and name != m} for m in MODULES}


def test_every_import_runs_down_the_layers():
    graph = _full_graph()
    graph[PKG] = graph[PKG] - {f"{PKG}.memory"}  # the lazy re-export (CYCLE_EXCEPTIONS)
    assert _layer_violations(graph) == []


def test_the_layer_check_finds_an_arrow_that_runs_up():
    memory, hooks, store = f"{PKG}.memory", f"{PKG}.agents.hooks", f"{PKG}.ledger.storage.store"
    curated = f"{PKG}.curated.write.add"
    assert _layer_violations({memory: {hooks}, hooks: {memory}, store: {curated}, curated: {store}}) == [
        (memory, hooks), (store, curated)]
    web, mcp = f"{PKG}.web.pages", f"{PKG}.agents.mcp_server"
    assert _layer_violations({web: {mcp}}) == [(web, mcp)]


def test_memory_imports_no_adapter():
    adapters = (f"{PKG}.agents", f"{PKG}.cli", f"{PKG}.web")
    bad = [(n, line) for n, _, line in _imports(f"{PKG}.memory") if n.startswith(adapters)]
    assert bad == []


def _loose(modules) -> list[str]:
    out = []
    for module in modules:
        for package, rooms in ROOMS.items():
            if module.startswith(package + ".") and module.count(".") >= package.count(".") + 1:
                room = module[len(package) + 1:].split(".")[0]
                if room not in rooms:
                    out.append(module)
    return sorted(set(out))


def test_every_module_is_in_a_declared_room():
    assert _loose(MODULES) == []


def test_the_room_check_finds_a_loose_module():
    assert _loose([f"{PKG}.ledger.recall.ranking", f"{PKG}.ledger.ranking", f"{PKG}.helpers"]) == [
        f"{PKG}.helpers", f"{PKG}.ledger.ranking"]


def test_one_doctor_module_per_thing_it_checks():
    doctors = sorted(m for m in MODULES if "doctor" in m.rsplit(".", 1)[-1])
    assert doctors == [f"{PKG}.agents.host_doctor", f"{PKG}.ledger.storage.shard_doctor",
                       f"{PKG}.setup.setup_doctor"]


def test_the_tiers_import_no_adapter():
    for tier in ("curated", "ledger"):
        for module in MODULES:
            if not module.startswith(f"{PKG}.{tier}"):
                continue
            bad = [(n, line) for n, _, line in _imports(module)
                   if n.startswith((f"{PKG}.agents", f"{PKG}.cli"))]
            assert bad == [], f"{module} imports an adapter: {bad}"


def test_only_the_cli_imports_the_argument_parser_and_nothing_imports_click():
    assert set(_importers_of("argparse")) <= {m for m in MODULES if m.startswith(f"{PKG}.cli")}
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
                 ["remember", "--actor", "agent", "--quote", "words the user never wrote", "a note"],
                 ["hook", "SessionStart"], ["hook", "UserPromptSubmit"]):
        proc = subprocess.run([sys.executable, "-c", probe, *argv], cwd=tmp_path, capture_output=True, text=True)
        assert proc.stderr.splitlines()[-1] == "[]", (argv, proc.stderr[-2000:])
