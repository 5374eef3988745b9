"""`doctor` over the whole setup: healthy, then one broken piece at a time, each named with its fix."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import describe_brief, run_cli

from memory_custodian.agents.init_agents import init_with_agents
from memory_custodian.memory import Memory

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def project(git, tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    memory = Memory.open(tmp_path)
    memory.init()
    describe_brief(tmp_path)
    memory.export_enable()
    memory.remember("Always run make test before pushing.", kind="directive")
    return tmp_path, memory


def doctor(root, *args):
    return run_cli("doctor", "--project-root", str(root), *args)


def failed(proc) -> list[str]:
    return [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]


def test_a_healthy_project_with_every_host_wired(project):
    root, memory = project
    init_with_agents(memory, ["all"])
    proc = doctor(root, "--format", "json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["ok"], [f for f in report["setup"] if not f["ok"]]
    areas = {f["area"] for f in report["setup"]}
    assert {"curated files", "ledger index", "export mirror", ".gitattributes", "merge drivers", "cache folder",
            "claude hook SessionStart", "codex hook PreToolUse", "gemini hook BeforeAgent",
            "claude MCP server (.mcp.json)", "codex MCP server (.codex/config.toml)",
            "gemini MCP server (.gemini/settings.json)"} <= areas


def conflict(root, memory):
    path = memory.memory_dir / "decisions.md"
    path.write_text(path.read_text() + "<<<<<<< ours\n## a\n=======\n## b\n>>>>>>> theirs\n")


def typo(root, memory):
    path = memory.memory_dir / "manifest.md"
    path.write_text(path.read_text().replace("### Implementation / execution / debugging", "### Implementaton"))


def stale_mirror(root, memory):
    path = memory.memory_dir / "MEMORY.md"
    path.write_text(path.read_text() + "\nA hand edit.\n")


def attributes(root, memory):
    (root / ".gitattributes").write_text("docs/memory/ledger/*.jsonl merge=union\n")


def driver(root, memory):
    import subprocess

    subprocess.run(["git", "config", "--unset", "merge.memory-custodian-curated.driver"], cwd=root, check=True)


def cache_file(root, memory):
    shutil.rmtree(memory.memory_dir / ".cache")
    (memory.memory_dir / ".cache").write_text("")


def hook_command(root, memory):
    init_with_agents(memory, ["claude"])
    path = root / ".claude/settings.json"
    data = json.loads(path.read_text())
    data["hooks"]["SessionStart"][0]["hooks"][0]["command"] = "/gone/venv/bin/memory-custodian hook --host claude SessionStart"
    path.write_text(json.dumps(data))


BROKEN = {
    "conflict markers": (conflict, "curated files", "conflict-markers", "delete the marker lines"),
    "manifest typo": (typo, "curated files", "did you mean `### Implementation / execution / debugging`?", ""),
    "stale mirror": (stale_mirror, "export mirror", "differs from the ledger", "run `memory-custodian export`"),
    ".gitattributes": (attributes, ".gitattributes", "missing: docs/memory/**/*.md merge=memory-custodian-curated",
                       "run `memory-custodian init`"),
    "merge driver": (driver, "merge drivers", "memory-custodian-curated is not registered",
                     "run `memory-custodian init` in this clone"),
    ".cache a file": (cache_file, "cache folder", "is a file, not a folder", "move the file away"),
    "hook command": (hook_command, "claude hook SessionStart", "exited 127",
                     "rerun `memory-custodian init --agent claude`"),
}


@pytest.mark.parametrize("piece", list(BROKEN))
def test_one_broken_piece_is_named_with_its_fix(project, piece):
    root, memory = project
    breaker, area, detail, fix = BROKEN[piece]
    breaker(root, memory)
    proc = doctor(root)
    assert proc.returncode in (1, 2), proc.stdout + proc.stderr
    lines = [line for line in failed(proc) if line.startswith(f"FAIL  {area}: ") and detail in line]
    assert lines and fix in lines[0].split(" — fix: ", 1)[1], proc.stdout
    if piece != "hook command":
        assert len(failed(proc)) <= 2, failed(proc)  # the one piece (and what follows from it), not a cascade
