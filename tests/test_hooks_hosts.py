"""The host registry: every host is a complete adapter with recorded payloads, and a new host is one
module plus a name in the registry (a made-up fourth host goes through hooks and install unchanged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memory_custodian.agents import hosts
from memory_custodian.agents.hooks import run_hook
from memory_custodian.agents.hosts.adapter import HookEvent, Host
from memory_custodian.agents.init_agents import init_with_agents
from memory_custodian.agents.install import install_agents
from memory_custodian.memory import Memory

RECORDED = Path(__file__).parent / "fixtures" / "hosts"
ACTIONS = {"start", "prompt", "file", "compact", "stop", "end"}
OPTIONAL = {"end"}  # a host without a session-end event writes its task checkpoint at compaction only
KINDS = {"md", "hooks", "server", "hooks+server", "toml"}


@pytest.mark.parametrize("name", hosts.HOSTS)
def test_every_host_is_a_complete_adapter(name):
    host = hosts.load(name)
    assert isinstance(host, Host) and host.name == name
    assert ACTIONS - OPTIONAL <= set(host.events.values()) <= ACTIONS  # an event for each thing we do
    assert set(host.context_events) <= set(host.events)
    assert host.file_tools and all(isinstance(tool, str) for tool in host.file_tools)
    assert [kind for _, kind in host.files].count("md") == 1 and {kind for _, kind in host.files} <= KINDS
    assert any("hooks" in kind for _, kind in host.files)
    assert any(kind in ("server", "hooks+server", "toml") for _, kind in host.files)
    assert host.entry_advice.startswith("- ")
    assert host.max_context_chars > 0 and host.start_max_chars > 0


@pytest.mark.parametrize("name", hosts.HOSTS)
def test_every_host_has_a_recorded_payload_for_each_event(name, tmp_path):
    host = hosts.load(name)
    recorded = {path.stem for path in (RECORDED / name).glob("*.json")}
    assert recorded == set(host.events)
    for event, action in host.events.items():
        payload = json.loads((RECORDED / name / f"{event}.json").read_text().replace("__PROJECT__", str(tmp_path)))
        assert payload["hook_event_name"] == event
        hook = host.parse_event("", payload)  # the payload names its own event
        assert isinstance(hook, HookEvent) and (hook.event, hook.action) == (event, action)
        assert hook.session_id and hook.cwd == str(tmp_path)


def test_a_hook_imports_only_the_host_that_calls():
    code = ("import sys; from memory_custodian.agents.hooks import run_hook; "
            "run_hook('gemini', 'BeforeAgent', '{}', project_root=sys.argv[1]); "
            "print(*sorted(m for m in sys.modules if m.startswith('memory_custodian.agents.hosts.')))")
    proc = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["memory_custodian.agents.hosts.adapter", "memory_custodian.agents.hosts.gemini"]


# ---- a fourth host: one module, one name in the registry ------------------------------------------

FOURTH = '''
from memory_custodian.agents.hosts.adapter import Host

HOST = Host(
    name="fourth",
    events={"Begin": "start", "Ask": "prompt", "Touch": "file", "Squash": "compact"},
    context_events=("Begin", "Ask", "Touch"),
    file_tools=("open_file",),
    files=(("FOURTH.md", "md"), (".fourth/config.json", "hooks+server")),
    entry_advice="- Run `memory-custodian read --task implementation` first.",
    empty_output="null",
)
'''


@pytest.fixture
def fourth(tmp_path, monkeypatch):
    """The registry with a fourth host, whose module sits in a folder of its own."""
    folder = tmp_path / "more_hosts"
    folder.mkdir()
    (folder / "fourth.py").write_text(FOURTH, encoding="utf-8")
    monkeypatch.setattr(hosts, "__path__", [*hosts.__path__, str(folder)])
    monkeypatch.setattr(hosts, "HOSTS", (*hosts.HOSTS, "fourth"))
    yield
    sys.modules.pop("memory_custodian.agents.hosts.fourth", None)


def test_a_fourth_host_needs_no_other_change(fourth, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    memory = Memory.open(root)
    memory.init()
    (root / "src").mkdir()
    (root / "src/pay.py").write_text("x = 1\n", encoding="utf-8")
    gotcha = memory.remember("Refunds round with Decimal, never float.", kind="gotcha", title="Refund rounding",
                             paths=["src/pay.py"])

    def hook(event: str, **fields) -> str:
        raw = json.dumps({"session_id": "s1", "cwd": str(root), "hook_event_name": event, **fields})
        return run_hook("fourth", event, raw)

    start = json.loads(hook("Begin", source="startup"))["hookSpecificOutput"]
    assert start["hookEventName"] == "Begin" and "# Memory context pack" in start["additionalContext"]
    touched = json.loads(hook("Touch", tool_name="open_file", tool_input={"file_path": "src/pay.py"}))
    assert f"[#{gotcha.id}]" in touched["hookSpecificOutput"]["additionalContext"]
    assert hook("Touch", tool_name="shell", tool_input={"file_path": "src/pay.py"}) == "null"  # not a file tool
    assert hook("Squash") == "null"

    report = init_with_agents(memory, ["all"])
    assert report.agents["agents"] == ["claude", "codex", "gemini", "fourth"]
    config = json.loads((root / ".fourth/config.json").read_text())
    from memory_custodian.agents.install import hook_command, server_entry

    assert config["hooks"]["Touch"] == [{"hooks": [{"command": hook_command(memory, "fourth", "Touch"),
                                                    "type": "command"}], "matcher": "open_file"}]
    assert list(config["hooks"]) == ["Begin", "Ask", "Touch", "Squash"]
    assert config["mcpServers"]["memory-custodian"] == server_entry(memory, "fourth")
    assert "Run `memory-custodian read --task implementation` first." in (root / "FOURTH.md").read_text()
    assert install_agents(memory, ["fourth"])["changed"] == []
    removed = init_with_agents(memory, ["fourth"], remove=True).agents
    assert removed["removed"] == [".fourth/config.json", "FOURTH.md"]
    assert not (root / ".fourth").exists()
