"""The commands `init --agent` writes: the same on every machine, each clone's installation found through its
per-clone setting, run as a host runs them (no installation on PATH)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from conftest import run_cli_process

from memory_custodian.agents.install import hook_command, install_agents, server_entry
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
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    memory = Memory.open(tmp_path)
    memory.init()
    memory.remember("Always run make test before pushing.", kind="directive", priority="high")
    proc = run_cli_process("init", "--agent", "all", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return tmp_path, proc


def test_init_says_which_installation_this_clone_uses(wired):
    root, proc = wired
    launcher = current_launcher()
    assert Path(launcher.argv[0]).is_absolute()
    assert (f"hooks and MCP server find this installation, {launcher.command([])} (its {launcher.kind}), through "
            "this clone's .git/config (memory-custodian.command); the committed files name no path") in proc.stdout
    assert "created   .claude/settings.json" in proc.stdout and "changed" not in proc.stdout
    setting = subprocess.run(["git", "config", "--get", "memory-custodian.command"], cwd=root, capture_output=True,
                             text=True).stdout.strip()
    assert setting == launcher.posix_command()
    committed = "".join((root / rel).read_text() for rel in (".claude/settings.json", ".mcp.json", ".codex/hooks.json",
                                                              ".codex/config.toml", ".gemini/settings.json"))
    assert launcher.argv[0] not in committed and sys.executable not in committed
    # a checkout under the temp folder (some CI machines clone there) is rightly warned about
    assert proc.stderr == "" or (launcher.temporary() and proc.stderr.startswith("warning: this clone's installation")
                                 and proc.stderr.count("\n") == 1)


def test_every_mcp_command_starts_without_path_and_lists_its_tools(wired):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root, _ = wired

    async def tools(entry: dict) -> list[str]:
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=BARE_ENV, cwd=str(root))
        with open(root / f"server-stderr-{entry['args'][-1]}-{id(entry)}.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
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

    assert len(entries) == 3 and all(entry["command"] == "git" for entry in entries)
    anyio.run(all_of)
    assert all("memory_recall" in names for names in found)


def test_the_windows_form_is_the_same_committed_command_and_a_slashed_per_clone_setting(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    python = r"C:\Program Files\Python312\python.exe"
    launcher = Launcher.for_interpreter(python, windows=True)
    report = install_agents(memory, ["claude", "codex"], launcher=launcher)
    assert report["command_kind"] == "interpreter"
    assert report["command"] == '"C:\\Program Files\\Python312\\python.exe" -m memory_custodian'  # cmd.exe quoting
    # Git's own sh runs the per-clone setting on Windows: forward slashes, POSIX quotes
    assert launcher.posix_command() == "'C:/Program Files/Python312/python.exe' -m memory_custodian"
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] == hook_command(
        memory, "claude", "SessionStart")
    assert "Python312" not in (tmp_path / ".claude/settings.json").read_text() + (tmp_path / ".mcp.json").read_text()


def test_the_committed_command_reads_the_same_in_sh_and_powershell():
    """One line for every shell a host may use: single-quoted words only, no quote inside them."""
    import shlex

    for host, event in (("claude", "SessionStart"), ("gemini", "AfterTool"), ("codex", "Stop")):
        words = shlex.split(hook_command(None, host, event))
        assert words[0] == "git" and words[-5:] == ["memory-custodian", "hook", "--host", host, event]
        assert all("'" not in w and '"' not in w for w in words)
        assert "$GEMINI_PROJECT_DIR" not in words[2] and "$CLAUDE_PROJECT_DIR" not in words[2]  # Gemini rewrites those


def test_rerunning_replaces_a_stale_or_bare_command(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    settings = tmp_path / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"command": "/old/venv/bin/memory-custodian hook --host claude SessionStart", "type": "command"}]},
        {"hooks": [{"command": "./scripts/mine.sh", "type": "command"}]}]}}))
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"memory-custodian": {
        "command": "/old/venv/bin/memory-custodian", "args": ["mcp"]}}}))
    report = install_agents(memory, ["claude"])
    assert {".claude/settings.json", ".mcp.json"} <= set(report["changed"])
    start = json.loads(settings.read_text())["hooks"]["SessionStart"]
    commands = [h["command"] for g in start for h in g["hooks"]]
    assert commands == ["./scripts/mine.sh", hook_command(memory, "claude", "SessionStart")]
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["memory-custodian"] == server_entry(
        memory, "claude")


def test_a_temporary_installation_is_warned_about(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    temporary = Launcher(["/tmp/pip-run-x1/bin/memory-custodian"], CONSOLE_SCRIPT)
    report = install_agents(memory, ["claude"], launcher=temporary)
    assert any("looks temporary" in w and "pipx install" in w for w in report["warnings"])
    assert not [w for w in install_agents(memory, ["claude"], launcher=Launcher(["/usr/local/bin/memory-custodian"],
                                                                               CONSOLE_SCRIPT))["warnings"]
                if "temporary" in w]
    assert current_launcher().argv[0] != sys.executable or current_launcher().kind == "interpreter"


def cmd_words(line: str) -> list[str]:
    """How cmd.exe hands a command line to a program (the C runtime's rules for these words: double quotes
    group, nothing inside them is special, no backslash precedes a quote here)."""
    import re

    return [m.group(1) if m.group(1) is not None else m.group(2) for m in re.finditer(r'"([^"]*)"|(\S+)', line)]


def test_codex_gets_a_cmd_exe_form_of_each_hook_with_the_same_words(tmp_path):
    from memory_custodian.base.launcher import portable_argv

    memory = Memory.open(tmp_path)
    memory.init()
    install_agents(memory, ["codex", "claude"])
    codex = json.loads((tmp_path / ".codex/hooks.json").read_text())["hooks"]
    for event, groups in codex.items():
        entry = groups[0]["hooks"][0]
        windows = entry["commandWindows"]
        assert "%" not in windows and "'" not in windows  # nothing cmd.exe would expand or keep
        words = cmd_words(windows)
        assert words[0] == "git" and words[-1] == event and words[-4:-1] == ["hook", "--host", "codex"]
        import shlex

        assert words == shlex.split(entry["command"])  # the same program and words as the sh form
        assert words[:2] == portable_argv(["hook"], "x")[:2]
    claude = json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]
    assert all("commandWindows" not in g["hooks"][0] for groups in claude.values() for g in groups)
