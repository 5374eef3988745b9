"""Paths: no name, route, glob, output path or MCP argument can reach outside the memory folder.

Memory names come from people, agents and pull requests; a `..`, an absolute path, a Windows
drive or a symlink in any of them must be refused with a clear error and nothing written — never
followed to a file outside the project, and never allowed to overwrite the ledger.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path

import pytest
from conftest import run_cli

from memory_custodian.base.errors import CustodianError
from memory_custodian.memory import Memory

ESCAPES = ["../x", "../../etc/passwd", "/etc/passwd", "/tmp/x", "C:/x", "C:\\x", "c:x", "a/../../x", "..", "\\\\server\\share"]


def tree(root: Path) -> dict:
    """Hashes of every file under `root` except the derived cache."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".cache" not in p.parts}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    memory = Memory.open(root)
    memory.init(extended=True)
    memory.add("Store module owns persistence", type="area", name="store")
    memory.remember("Seed note", kind="gotcha", paths=["src/**"])
    return memory


def refused(fn, *args, **kwargs) -> CustodianError:
    with pytest.raises(CustodianError) as info:
        fn(*args, **kwargs)
    assert "\n" not in info.value.one_line()
    return info.value


# ---- names and routes in curated memory ----------------------------------------------------------

@pytest.mark.parametrize("name", ESCAPES + ["", ".", ".hidden", "a/b", "x:y"])
def test_area_rule_profile_names_are_refused(project, name):
    before = tree(project.root.parent)
    for type_ in ("area", "rule", "profile"):
        refused(project.add, "text", type=type_, name=name)
    if name:  # an empty --area means "no area"
        refused(project.add, "Use X", type="decision", reasons=["r"], area=name)
    for module in ("areas", "rules", "profiles"):
        if name:  # `enable rules/` enables the module itself
            refused(project.enable, f"{module}/{name}")
    assert tree(project.root.parent) == before


@pytest.mark.parametrize("glob", ["../x/**", "/etc/**", "C:\\x\\*", "C:/x/*", "src/../../x", ""])
def test_area_path_globs_are_refused(project, glob):
    before = tree(project.root)
    refused(project.enable, "areas/store", paths=[glob])
    assert tree(project.root) == before


@pytest.mark.parametrize("route", ["../../../outside.md", "/OUTSIDE/outside.md", "C:\\outside.md", "C:/outside.md",
                                   "areas/../../../outside.md"])
def test_manifest_routes_outside_the_folder_never_load(project, route):
    outside = project.root.parent / "outside.md"
    outside.write_text("TOP-SECRET-OUTSIDE\n", encoding="utf-8")
    route = route.replace("/OUTSIDE", str(project.root.parent))
    manifest = Path(project.memory_dir) / "manifest.md"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("- brief.md\n", f"- brief.md\n- {route}\n", 1),
                        encoding="utf-8")
    try:
        result = project.read("planning")
        assert "TOP-SECRET-OUTSIDE" not in result.rendered
    except CustodianError as exc:
        assert "TOP-SECRET-OUTSIDE" not in exc.one_line()
    r = run_cli("read", "--task", "planning", cwd=project.root)
    assert "TOP-SECRET-OUTSIDE" not in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_symlinked_curated_file_is_not_followed_out(project):
    outside = project.root.parent / "outside.md"
    outside.write_text("# Brief\n\nTOP-SECRET-OUTSIDE\n", encoding="utf-8")
    brief = Path(project.memory_dir) / "brief.md"
    brief.unlink()
    brief.symlink_to(outside)
    r = run_cli("read", "--task", "planning", cwd=project.root)
    assert "TOP-SECRET-OUTSIDE" not in r.stdout
    assert r.returncode in (1, 2) and r.stderr.startswith("error:")
    # a writer replaces the link with a real file rather than writing through it
    area = Path(project.memory_dir) / "areas/store.md"
    target = project.root.parent / "area-outside.md"
    target.write_text("- outside area\n", encoding="utf-8")
    area.unlink()
    area.symlink_to(target)
    try:
        project.add("More store rules", type="area", name="store")
    except CustodianError:
        pass
    assert target.read_text(encoding="utf-8") == "- outside area\n"


@pytest.mark.parametrize("folder", ["ledger", ".cache"])
def test_symlinked_ledger_or_cache_is_refused(tmp_path, folder):
    root = tmp_path / "project"
    root.mkdir()
    Memory.open(root).init()
    outside = tmp_path / "outside"
    outside.mkdir()
    link = root / "docs/memory" / folder
    if link.exists():
        import shutil

        shutil.rmtree(link)
    link.symlink_to(outside)
    r = run_cli("remember", "a note that must stay inside", cwd=root)
    assert list(outside.iterdir()) == [], f"{folder} symlink followed: {sorted(p.name for p in outside.iterdir())}"
    assert r.returncode in (1, 2)


# ---- --path inputs -------------------------------------------------------------------------------

LEDGER_ESCAPES = ["../x", "/etc/passwd", "C:/x", "C:\\x", "a/../../b"]


@pytest.mark.parametrize("path", LEDGER_ESCAPES)
def test_ledger_path_anchors_refuse_escapes(project, path):
    before = tree(project.root)
    refused(project.remember, "note", paths=[path])
    refused(project.recall, None, paths=[path])
    assert tree(project.root) == before


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "C:/x", "C:\\x", "a/../../b"])
def test_read_path_refuses_escapes(project, path):
    refused(project.read, "implementation", paths=(path,))


def test_cli_path_options_refuse_with_one_line(project):
    for args in (["read", "--task", "implementation", "--path", "../../etc/passwd"],
                 ["remember", "x", "--path", "/etc/passwd"], ["recall", "--path", "../x"],
                 ["enable", "areas/store", "--path", "/etc/**"], ["add", "x", "--type", "area", "--name", "../x"],
                 ["read", "--task", "planning", "--memory-dir", "../elsewhere"],
                 ["read", "--task", "planning", "--memory-dir", "/tmp/docs/memory"],
                 ["read", "--task", "planning", "--memory-dir", "C:\\docs\\memory"]):
        before = tree(project.root)
        r = run_cli(*args, cwd=project.root)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
        assert tree(project.root) == before


# ---- output paths: export and edit check-out ----------------------------------------------------

@pytest.mark.parametrize("target", ["/ABS/outside.md", "../outside.md", "C:\\x.md", "docs/memory/ledger/SHARD",
                                    "docs/memory/decisions.md", "docs/memory/config.json"])
def test_export_path_is_confined(project, target):
    shard = sorted((Path(project.memory_dir) / "ledger").glob("*.jsonl"))[0]
    target = target.replace("/ABS", str(project.root.parent)).replace("SHARD", shard.name)
    before = tree(project.root.parent)
    refused(project.export, path=target)
    assert tree(project.root.parent) == before


def test_edit_checkout_cannot_overwrite_memory(project):
    shard = sorted((Path(project.memory_dir) / "ledger").glob("*.jsonl"))[0]
    before = shard.read_bytes()
    try:
        project.edit_checkout(shard)
    except CustodianError:
        pass
    assert shard.read_bytes() == before


def test_configured_export_path_is_confined(project):
    """A committed config.json (a pull request) must not aim the mirror at the ledger."""
    shard = sorted((Path(project.memory_dir) / "ledger").glob("*.jsonl"))[0]
    rel = shard.relative_to(project.root).as_posix()
    (Path(project.memory_dir) / "config.json").write_text(json.dumps({"export": {"enabled": True, "path": rel}}),
                                                           encoding="utf-8")
    before = shard.read_bytes()
    r = run_cli("remember", "another note", cwd=project.root)
    run_cli("export", cwd=project.root)
    assert shard.read_bytes().startswith(before), r.stderr


# ---- MCP arguments and hook payloads ------------------------------------------------------------

def _call(memory, tool, args):
    from memory_custodian.agents.mcp_server import build_server

    return asyncio.run(build_server(memory).call_tool(tool, args))


MCP_ESCAPES = ["../x", "/etc/passwd", "C:/x", "C:\\x"]


@pytest.mark.parametrize("path", MCP_ESCAPES)
def test_mcp_path_arguments_are_refused(project, path):
    from mcp.server.mcpserver.exceptions import ToolError

    before = tree(project.root)
    for tool, args in (("memory_remember", {"text": "x", "paths": [path]}),
                       ("memory_recall", {"paths": [path]}),
                       ("memory_context", {"paths": [path]}),
                       ("memory_context", {"areas": [path]})):
        with pytest.raises(ToolError) as info:
            _call(project, tool, args)
        assert type(info.value).__name__ == "ToolError", info.value
    assert tree(project.root) == before


def test_mcp_ids_cannot_name_files(project):
    from mcp.server.mcpserver.exceptions import ToolError

    for bad in ("../../etc/passwd", "/etc/passwd", "#../x", "k7m2/../x"):
        with pytest.raises(ToolError):
            _call(project, "memory_expand", {"ids": [bad]})
        with pytest.raises(ToolError):
            _call(project, "memory_history", {"id": bad})


def test_hook_file_paths_outside_the_project_are_ignored(project, tmp_path):
    from memory_custodian.agents.hooks import run_hook

    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n", encoding="utf-8")
    for file_path in (str(outside), "../outside.py", "/etc/passwd", "C:\\x.py", "\x00"):
        raw = json.dumps({"session_id": "s", "cwd": str(project.root), "hook_event_name": "PreToolUse",
                          "tool_name": "Edit", "tool_input": {"file_path": file_path}})
        try:
            out = run_hook("claude", "PreToolUse", raw, project_root=str(project.root))
        except CustodianError:
            continue
        assert "outside" not in out and "passwd" not in out


def test_session_ids_cannot_name_files(project):
    from memory_custodian.agents.hooks import run_hook

    for sid in ("../../../../tmp/evil", "/etc/passwd", "..", "a/b", "\x00"):
        raw = json.dumps({"session_id": sid, "cwd": str(project.root), "hook_event_name": "UserPromptSubmit",
                          "prompt": "hello"})
        run_hook("claude", "UserPromptSubmit", raw, project_root=str(project.root))
    sessions = Path(project.memory_dir) / ".cache" / "sessions"
    for path in sessions.iterdir():
        assert path.parent == sessions and ".." not in path.name and "evil" not in path.name
    assert not Path("/tmp/evil.json").exists()
    assert os.path.realpath(sessions).startswith(os.path.realpath(project.memory_dir))


# ---- agent entry points written by `init --agent` ------------------------------------------------

def test_init_agent_does_not_follow_symlinks_out_of_the_project(tmp_path):
    """A repository can ship `CLAUDE.md -> ~/.ssh/config` or `.claude -> ~/.claude`: installing the
    agent entry points must neither copy the outside file into the repo nor write outside it."""
    root = tmp_path / "project"
    root.mkdir()
    Memory.open(root).init()
    secret = tmp_path / "private.txt"
    secret.write_text("PRIVATE-OUTSIDE\n", encoding="utf-8")
    global_dir = tmp_path / "home-claude"
    global_dir.mkdir()
    (root / "CLAUDE.md").symlink_to(secret)
    (root / ".claude").symlink_to(global_dir)
    r = run_cli("init", "--agent", "claude", cwd=root)
    assert "Traceback" not in r.stderr
    assert r.returncode == 2 and "symlink" in r.stderr, r.stderr
    inside = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    assert not any(b"PRIVATE-OUTSIDE" in p.read_bytes() for p in inside), "outside content copied into the repo"
    assert list(global_dir.iterdir()) == [], "wrote into a folder outside the project"


@pytest.mark.parametrize("link", ["claude-dir", "in-project-file"])
def test_init_agent_refuses_any_symlinked_entry_point(tmp_path, link):
    """A symlinked host folder, or an entry file linked to another file of the project, is refused
    before anything is written (an atomic write would silently replace the link)."""
    root = tmp_path / "project"
    root.mkdir()
    Memory.open(root).init()
    (root / "CLAUDE.md").write_text("# Project\n", encoding="utf-8")
    if link == "claude-dir":
        outside = tmp_path / "outside"
        outside.mkdir()
        (root / ".claude").symlink_to(outside)
    else:
        (root / "AGENTS.md").write_text("# Agents\n", encoding="utf-8")
        (root / "CLAUDE.md").unlink()
        (root / "CLAUDE.md").symlink_to("AGENTS.md")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".cache" not in p.parts}
    from memory_custodian.agents.install import install_agents
    from memory_custodian.base.errors import InvalidInput

    with pytest.raises(InvalidInput) as err:
        install_agents(Memory.open(root), ["all"])
    assert "symlink" in err.value.one_line()
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".cache" not in p.parts} == before
    assert not (root / ".mcp.json").exists()
