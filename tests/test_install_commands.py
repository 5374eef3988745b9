"""The commands `init --agent` writes run as a host runs them: absolute, without the installation on PATH."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from conftest import run_cli_process
from test_hooks import context_of, payload

from memory_custodian.agents.install import install_agents
from memory_custodian.base.launcher import CONSOLE_SCRIPT, Launcher, current_launcher
from memory_custodian.memory import Memory

BARE_ENV = {"PATH": "/usr/bin:/bin"}  # what `env -i PATH=/usr/bin:/bin` leaves a host's child


def hook_commands(root: Path) -> dict[str, list[tuple[str, str]]]:
    """host -> [(event, command)] as installed."""
    found = {}
    for host, rel in (("claude", ".claude/settings.json"), ("codex", ".codex/hooks.json"),
                      ("gemini", ".gemini/settings.json")):
        hooks = json.loads((root / rel).read_text())["hooks"]
        found[host] = [(event, h["command"]) for event, groups in hooks.items() for g in groups for h in g["hooks"]]
    return found


def server_entries(root: Path) -> list[dict]:
    tomllib = pytest.importorskip("tomllib")
    codex = tomllib.loads((root / ".codex/config.toml").read_text())["mcp_servers"]["memory-custodian"]
    return [json.loads((root / ".mcp.json").read_text())["mcpServers"]["memory-custodian"], codex,
            json.loads((root / ".gemini/settings.json").read_text())["mcpServers"]["memory-custodian"]]


@pytest.fixture
def wired(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    memory.remember("Always run make test before pushing.", kind="directive", priority="high")
    proc = run_cli_process("init", "--agent", "all", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return tmp_path, proc


def test_init_says_which_command_it_wrote(wired):
    root, proc = wired
    launcher = current_launcher()
    assert Path(launcher.argv[0]).is_absolute()
    assert f"hooks and MCP server run: {launcher.command([])} (the {launcher.kind} of this installation)" in proc.stdout
    assert "created   .claude/settings.json" in proc.stdout and "changed" not in proc.stdout
    # a checkout under the temp folder (some CI machines clone there) is rightly warned about
    assert proc.stderr == "" or (launcher.temporary() and proc.stderr.startswith("warning: the command written is ")
                                 and proc.stderr.count("\n") == 1)


def test_every_hook_command_answers_without_path(wired):
    root, _ = wired
    for host, commands in hook_commands(root).items():
        for event, command in commands:
            assert command.startswith(current_launcher().command([]) + " hook ")
            proc = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "sh", "-c", command], cwd=root, timeout=60,
                                  input=payload(host, event, root), capture_output=True, text=True)
            assert (proc.returncode, proc.stderr) == (0, ""), (host, event, proc.stderr)
            if event == "SessionStart":
                assert "Always run make test before pushing." in context_of(proc.stdout, event)


def test_every_mcp_command_starts_without_path_and_lists_its_tools(wired):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root, _ = wired

    async def tools(entry: dict) -> list[str]:
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=BARE_ENV, cwd=str(root))
        with open(root / f"server-stderr-{entry['args'][-1]}-{id(entry)}.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return [t.name for t in (await session.list_tools()).tools]

    entries = server_entries(root)
    # the hosts' files name one command: a second identical process (argv, bare environment, folder) proves nothing more
    distinct = list({(entry["command"], *entry["args"]): entry for entry in entries}.values())
    found: list = [None] * len(distinct)

    async def all_of():  # side by side: each server takes a second or more to start
        async def one(i, entry):
            found[i] = await tools(entry)

        async with anyio.create_task_group() as group:
            for i, entry in enumerate(distinct):
                group.start_soon(one, i, entry)

    assert len(entries) == 3 and all(Path(entry["command"]).is_absolute() for entry in entries)
    anyio.run(all_of)
    assert all("memory_recall" in names for names in found)


def test_the_windows_form_is_the_quoted_interpreter(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    python = r"C:\Program Files\Python312\python.exe"
    report = install_agents(memory, ["claude", "codex"], launcher=Launcher.for_interpreter(python, windows=True))
    assert report["command_kind"] == "interpreter"
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] == (
        '"C:\\Program Files\\Python312\\python.exe" -m memory_custodian hook --host claude SessionStart')
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["memory-custodian"] == {
        "command": python, "args": ["-m", "memory_custodian", "mcp"]}
    assert 'command = "C:\\\\Program Files\\\\Python312\\\\python.exe"' in (tmp_path / ".codex/config.toml").read_text()


def test_rerunning_replaces_a_stale_or_bare_command(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    settings = tmp_path / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"command": "memory-custodian hook --host claude SessionStart", "type": "command"}]},
        {"hooks": [{"command": "./scripts/mine.sh", "type": "command"}]}]}}))
    install_agents(memory, ["claude"], launcher=Launcher(["/old/venv/bin/memory-custodian"], CONSOLE_SCRIPT))
    report = install_agents(memory, ["claude"])
    assert ".claude/settings.json" in report["changed"]
    start = json.loads(settings.read_text())["hooks"]["SessionStart"]
    commands = [h["command"] for g in start for h in g["hooks"]]
    assert commands == ["./scripts/mine.sh", current_launcher().command(["hook", "--host", "claude", "SessionStart"])]
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["memory-custodian"]["command"] == \
        current_launcher().argv[0]


def test_a_temporary_installation_is_warned_about(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    report = install_agents(memory, ["claude"], launcher=Launcher(["/tmp/pip-run-x1/bin/memory-custodian"], CONSOLE_SCRIPT))
    assert report["warnings"] and "looks temporary" in report["warnings"][0] and "pipx install" in report["warnings"][0]
    assert not install_agents(memory, ["claude"], launcher=Launcher(["/usr/local/bin/memory-custodian"],
                                                                    CONSOLE_SCRIPT))["warnings"]
    assert current_launcher().argv[0] != sys.executable or current_launcher().kind == "interpreter"
