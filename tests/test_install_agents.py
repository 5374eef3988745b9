"""`install_agents`: host wiring merged into a user's own files, idempotent, removed exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_custodian.agents.install import MD_BEGIN, TOML_BEGIN, hook_command, install_agents, server_entry
from memory_custodian.base.errors import InvalidInput
from memory_custodian.memory import Memory

SERVER = server_entry(None, "codex")  # the committed command: no machine's path in it


def hook(host: str, event: str, memory=None) -> str:
    return hook_command(memory, host, event)

USER_SETTINGS = """{
    "permissions": {
        "allow": ["Bash(npm test:*)"],
        "deny": []
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]
            }
        ]
    },
    "model": "sonnet"
}"""  # no trailing newline, 4-space indent, inline lists: all must survive --remove

USER_CLAUDE_MD = "# Team notes\n\nRun `make test` before pushing.\n"
USER_MCP = '{"mcpServers": {"github": {"command": "gh-mcp", "args": []}}}\n'
USER_AGENTS_MD = "Agents: keep diffs small."  # no trailing newline
USER_CODEX_TOML = 'model = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
USER_GEMINI = '{\n  "theme": "dark",\n  "mcpServers": {}\n}\n'


def make_project(tmp_path: Path) -> Memory:
    (tmp_path / "docs" / "memory").mkdir(parents=True)
    (tmp_path / "docs" / "memory" / "manifest.md").write_text("# Memory Manifest\n", encoding="utf-8")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(USER_SETTINGS, encoding="utf-8")
    (tmp_path / "CLAUDE.md").write_text(USER_CLAUDE_MD, encoding="utf-8")
    (tmp_path / ".mcp.json").write_text(USER_MCP, encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text(USER_AGENTS_MD, encoding="utf-8")
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(USER_CODEX_TOML, encoding="utf-8")
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text(USER_GEMINI, encoding="utf-8")
    return Memory.open(tmp_path)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "docs/memory/.cache" not in p.as_posix()
    }


def test_claude_install_merges_and_keeps_user_content(tmp_path):
    memory = make_project(tmp_path)
    report = install_agents(memory, ["claude"], remove=False)
    assert report["changed"] == [".claude/settings.json", ".mcp.json", "CLAUDE.md"]

    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(npm test:*)"], "deny": []}
    assert settings["model"] == "sonnet"
    pre = settings["hooks"]["PreToolUse"]
    assert pre[0] == {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}
    assert pre[1] == {"matcher": "Edit|Write|MultiEdit|Read|NotebookEdit",
                      "hooks": [{"command": hook("claude", "PreToolUse"), "type": "command"}]}
    assert settings["hooks"]["SessionStart"] == [
        {"hooks": [{"command": hook("claude", "SessionStart"), "type": "command"}]}]
    assert set(settings["hooks"]) == {"PreToolUse", "SessionStart", "UserPromptSubmit", "PreCompact", "Stop",
                                      "SubagentStop", "SessionEnd"}
    # the user's indent is kept
    assert '\n    "permissions"' in (tmp_path / ".claude/settings.json").read_text()

    mcp = json.loads((tmp_path / ".mcp.json").read_text())
    assert mcp["mcpServers"]["github"] == {"command": "gh-mcp", "args": []}
    assert mcp["mcpServers"]["memory-custodian"] == server_entry(None, "claude")

    claude_md = (tmp_path / "CLAUDE.md").read_text()
    assert claude_md.startswith(USER_CLAUDE_MD + "\n" + MD_BEGIN)
    assert "memory-custodian read --task implementation" in claude_md
    assert claude_md.endswith("<!-- memory-custodian:end -->\n")


def test_install_is_idempotent_and_remove_restores_bytes(tmp_path):
    memory = make_project(tmp_path)
    before = snapshot(tmp_path)
    first = install_agents(memory, ["all"], remove=False)
    assert first["agents"] == ["claude", "codex", "gemini"]
    after_once = snapshot(tmp_path)
    second = install_agents(memory, ["all"], remove=False)
    assert second["changed"] == [] and second["removed"] == []
    assert snapshot(tmp_path) == after_once
    removed = install_agents(memory, ["all"], remove=True)
    assert ".codex/hooks.json" in removed["removed"]
    assert snapshot(tmp_path) == before
    # and a second remove is a no-op
    again = install_agents(memory, ["all"], remove=True)
    assert again["changed"] == [] and again["removed"] == []
    assert snapshot(tmp_path) == before


def test_remove_keeps_user_edits_made_after_install(tmp_path):
    memory = make_project(tmp_path)
    install_agents(memory, ["claude"], remove=False)
    path = tmp_path / ".claude/settings.json"
    data = json.loads(path.read_text())
    data["env"] = {"FOO": "1"}
    path.write_text(json.dumps(data, indent=4))
    md = tmp_path / "CLAUDE.md"
    md.write_text(md.read_text() + "\nAdded later by the user.\n")
    install_agents(memory, ["claude"], remove=True)
    left = json.loads(path.read_text())
    assert left["env"] == {"FOO": "1"}
    assert "memory-custodian" not in path.read_text()
    assert left["hooks"] == {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}]}
    text = md.read_text()
    assert MD_BEGIN not in text
    assert text.startswith(USER_CLAUDE_MD) and text.endswith("Added later by the user.\n")


def test_fresh_project_gets_new_files_and_remove_deletes_them(tmp_path):
    (tmp_path / "docs" / "memory").mkdir(parents=True)
    (tmp_path / "docs" / "memory" / "manifest.md").write_text("# Memory Manifest\n")
    memory = Memory.open(tmp_path)
    report = install_agents(memory, ["codex", "gemini"], remove=False)
    assert report["changed"] == [] and report["created"] == [".codex/config.toml", ".codex/hooks.json", ".gemini/settings.json",
                                 "AGENTS.md", "GEMINI.md"]
    toml = (tmp_path / ".codex/config.toml").read_text()
    assert toml.startswith(TOML_BEGIN + "\n[mcp_servers.memory-custodian]\n")
    tomllib = pytest.importorskip("tomllib")
    assert tomllib.loads(toml)["mcp_servers"]["memory-custodian"] == SERVER
    hooks = json.loads((tmp_path / ".codex/hooks.json").read_text())
    assert hooks["hooks"]["PreToolUse"][0]["matcher"] == "Bash|shell|apply_patch"
    gemini = json.loads((tmp_path / ".gemini/settings.json").read_text())
    assert gemini["hooks"]["AfterTool"][0]["hooks"][0]["command"] == hook("gemini", "AfterTool")
    assert gemini["mcpServers"]["memory-custodian"]["args"][-2:] == ["memory-custodian", "mcp"]
    install_agents(memory, ["codex", "gemini"], remove=True)
    assert snapshot(tmp_path) == {"docs/memory/manifest.md": b"# Memory Manifest\n"}
    assert not (tmp_path / ".codex").exists() and not (tmp_path / ".gemini").exists()


def test_a_second_install_into_fresh_files_changes_nothing(tmp_path):
    (tmp_path / "docs" / "memory").mkdir(parents=True)
    (tmp_path / "docs" / "memory" / "manifest.md").write_text("# Memory Manifest\n")
    memory = Memory.open(tmp_path)
    install_agents(memory, ["all"], remove=False)
    written = snapshot(tmp_path)
    assert install_agents(memory, ["all"], remove=False)["changed"] == []  # `.gemini/settings.json` holds both
    assert snapshot(tmp_path) == written


def test_codex_toml_block_appends_after_user_tables(tmp_path):
    memory = make_project(tmp_path)
    install_agents(memory, ["codex"], remove=False)
    toml = (tmp_path / ".codex/config.toml").read_text()
    assert toml.startswith(USER_CODEX_TOML + "\n" + TOML_BEGIN)
    install_agents(memory, ["codex"], remove=True)
    assert (tmp_path / ".codex/config.toml").read_text() == USER_CODEX_TOML


def test_user_defined_server_table_is_left_alone(tmp_path):
    memory = make_project(tmp_path)
    own = 'model = "o4"\n[mcp_servers.memory-custodian]\ncommand = "/opt/mc"\nargs = ["mcp"]\n'
    (tmp_path / ".codex/config.toml").write_text(own)
    report = install_agents(memory, ["codex"], remove=False)
    assert ".codex/config.toml" in report["unchanged"]
    assert (tmp_path / ".codex/config.toml").read_text() == own


def test_custom_memory_dir_is_passed_to_commands(tmp_path):
    (tmp_path / "docs" / "notes").mkdir(parents=True)
    (tmp_path / "docs" / "notes" / "manifest.md").write_text("# Memory Manifest\n")
    memory = Memory.open(tmp_path, "docs/notes")
    install_agents(memory, ["claude"], remove=False)
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == hook("claude", "SessionStart", memory)
    assert command.endswith(" memory-custodian hook --host claude --memory-dir docs/notes SessionStart")
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["memory-custodian"]["args"][-4:] == [
        "memory-custodian", "mcp", "--memory-dir", "docs/notes"]
    assert "`docs/notes/ledger/`" in (tmp_path / "CLAUDE.md").read_text()


def test_broken_user_json_is_refused_and_nothing_written(tmp_path):
    memory = make_project(tmp_path)
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {,}}')
    before = snapshot(tmp_path)
    with pytest.raises(InvalidInput, match=r"\.mcp\.json.*not valid JSON"):
        install_agents(memory, ["claude"], remove=False)
    assert snapshot(tmp_path) == before


def test_unknown_agent_is_refused(tmp_path):
    memory = make_project(tmp_path)
    with pytest.raises(InvalidInput, match="unknown agent 'cursor'"):
        install_agents(memory, ["cursor"], remove=False)


def test_remove_without_saved_originals_still_takes_out_only_ours(tmp_path):
    memory = make_project(tmp_path)
    install_agents(memory, ["claude"], remove=False)
    (tmp_path / "docs/memory/.cache/agents-originals.json").unlink()  # a cache: may vanish
    install_agents(memory, ["claude"], remove=True)
    assert (tmp_path / "CLAUDE.md").read_text() == USER_CLAUDE_MD
    assert json.loads((tmp_path / ".mcp.json").read_text()) == json.loads(USER_MCP)
    assert json.loads((tmp_path / ".claude/settings.json").read_text()) == json.loads(USER_SETTINGS)


def test_cli_init_agent_install_twice_and_remove(tmp_path):
    from conftest import run_cli

    make_project(tmp_path)
    agent_files = [".claude/settings.json", ".mcp.json", "CLAUDE.md"]
    before = {f: (tmp_path / f).read_bytes() for f in agent_files}
    first = run_cli("init", "--agent", "claude", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "CLAUDE.md" in first.stdout
    after = {f: (tmp_path / f).read_bytes() for f in agent_files}
    assert after != before
    second = run_cli("init", "--agent", "claude", "--format", "json", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["agents"]["changed"] == []
    assert {f: (tmp_path / f).read_bytes() for f in agent_files} == after
    removed = run_cli("init", "--agent", "claude", "--remove", cwd=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert {f: (tmp_path / f).read_bytes() for f in agent_files} == before


def test_crlf_and_bom_files_keep_their_form_and_come_back_exactly(tmp_path):
    memory = make_project(tmp_path)
    md = "\ufeff# Team notes\r\n\r\nUse tabs.\r\n"
    settings = '\ufeff{\r\n  "model": "opus"\r\n}\r\n'
    (tmp_path / "CLAUDE.md").write_bytes(md.encode("utf-8"))
    (tmp_path / ".claude/settings.json").write_bytes(settings.encode("utf-8"))
    install_agents(memory, ["claude"], remove=False)
    new_md = (tmp_path / "CLAUDE.md").read_bytes().decode("utf-8")
    assert new_md.startswith(md + "\r\n" + MD_BEGIN) and "\n" not in new_md.replace("\r\n", "")
    new_settings = (tmp_path / ".claude/settings.json").read_bytes().decode("utf-8")
    assert new_settings.startswith("\ufeff{\r\n") and json.loads(new_settings[1:])["model"] == "opus"
    assert install_agents(memory, ["claude"], remove=False)["changed"] == []
    install_agents(memory, ["claude"], remove=True)
    assert (tmp_path / "CLAUDE.md").read_bytes() == md.encode("utf-8")
    assert (tmp_path / ".claude/settings.json").read_bytes() == settings.encode("utf-8")
