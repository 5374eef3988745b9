"""Every door text reaches memory through refuses a credential of a kind the detector once missed:
exit 2, one line naming the kind, and no byte of the credential anywhere under the project."""

from __future__ import annotations

import asyncio
import json

import pytest
import secret_samples
from conftest import run_cli

from memory_custodian.memory import Memory

R = secret_samples.sampler(1612)
# kinds the detector once missed, one fresh credential each
FRESH = {
    "hf": "hf_" + R(secret_samples.string.ascii_letters, 34),
    "sendgrid": "SG." + R(secret_samples.URLSAFE, 22) + "." + R(secret_samples.URLSAFE, 43),
    "digitalocean": "dop_v1_" + R(secret_samples.HEX, 64),
    "vault": "hvs." + R(secret_samples.URLSAFE, 90),
    "postman": f"PMAK-{R(secret_samples.HEX, 24)}-{R(secret_samples.HEX, 34)}",
    "npm": "npm_" + R(secret_samples.ALNUM, 36),
    "databricks": "dapi" + R(secret_samples.HEX, 32),
    "linear": "lin_api_" + R(secret_samples.ALNUM, 40),
}


def _files(root) -> dict:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".cache" not in p.parts}


def _nowhere(root, token: str) -> bool:
    return all(token.encode() not in p.read_bytes() for p in root.rglob("*") if p.is_file())


@pytest.fixture
def project(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    note = run_cli("remember", "Seed note for the lifecycle doors", "--format", "json", cwd=tmp_path)
    return tmp_path, json.loads(note.stdout)["id"]


CLI_DOORS = [
    ("remember text", lambda t, n: ["remember", f"Deploy with {t} today"]),
    ("remember --tag", lambda t, n: ["remember", "harmless", "--tag", t]),
    ("remember --title", lambda t, n: ["remember", "harmless", "--title", t[:80]]),
    ("remember --path", lambda t, n: ["remember", "harmless", "--path", f"src/{t}/**"]),
    ("remember --quote", lambda t, n: ["remember", "harmless", "--quote", f"use {t}"]),
    ("add", lambda t, n: ["add", f"Always call the API with {t}", "--type", "constraint"]),
    ("add --reason", lambda t, n: ["add", "Use the vault", "--type", "decision", "--reason", f"key {t}"]),
    ("add --name", lambda t, n: ["add", "harmless rule", "--type", "rule", "--name", t[:90]]),
    ("supersede", lambda t, n: ["supersede", n, f"New key {t}", "--reason", "rotated"]),
    ("revoke --reason", lambda t, n: ["revoke", n, "--reason", f"leaked {t}"]),
    ("flag-stale --reason", lambda t, n: ["flag-stale", n, "--reason", f"old {t}"]),
    ("enable --path", lambda t, n: ["enable", "areas/x", "--path", f"src/{t}/**"]),
]


@pytest.mark.parametrize("door,args", CLI_DOORS, ids=[d for d, _ in CLI_DOORS])
@pytest.mark.parametrize("kind", sorted(FRESH)[:3])
def test_cli_door_refuses_a_fresh_credential(project, door, args, kind):
    root, note = project
    token = FRESH[kind]
    if door == "remember --tag":  # a tag holds no `_`; a Postman key is a legal tag
        token = FRESH["postman"]
    before = _files(root)
    result = run_cli(*args(token, note), cwd=root)
    assert result.returncode == 2, (door, result.stdout, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and "looks like" in result.stderr, result.stderr
    assert token not in result.stderr and token not in result.stdout
    assert _files(root) == before
    assert _nowhere(root, token)


def test_edit_checkin_refuses_a_fresh_credential(project):
    root, _note = project
    buf = root / "buf.md"
    assert run_cli("edit", "--checkout", str(buf), cwd=root).returncode == 0
    token = FRESH["vault"]
    buf.write_text(buf.read_text(encoding="utf-8") + f"\n### new\n- kind: finding\n\nlogin with {token}\n",
                   encoding="utf-8")
    before = {p: b for p, b in _files(root).items() if p != buf}
    result = run_cli("edit", "--checkin", str(buf), "--reason", "r", cwd=root)
    assert result.returncode == 2, result.stderr
    assert {p: b for p, b in _files(root).items() if p != buf} == before
    buf.unlink()
    assert _nowhere(root, token)


@pytest.mark.parametrize("tool,args", [
    ("memory_remember", lambda t: {"text": f"the key is {t}"}),
    ("memory_remember", lambda t: {"text": "fine", "tags": [t]}),
    ("memory_propose", lambda t: {"text": f"Always use {t}"}),
    ("memory_revoke", lambda t: {"id": None, "reason": f"leaked {t}"}),
])
def test_mcp_door_refuses_a_fresh_credential(tmp_path, tool, args):
    from mcp.server.mcpserver.exceptions import ToolError

    from memory_custodian.agents.mcp_server import build_server

    memory = Memory.open(tmp_path)
    memory.init()
    seed = memory.remember("Seed", kind="finding").id
    app = build_server(memory)
    token = FRESH["postman"]
    call = args(token)
    if "id" in call:
        call["id"] = seed
    before = _files(tmp_path)
    with pytest.raises(ToolError) as info:
        asyncio.run(app.call_tool(tool, call))
    assert token not in str(info.value) and "looks like" in str(info.value)
    assert _files(tmp_path) == before
    assert _nowhere(tmp_path, token)


def test_prompt_hook_keeps_a_message_only_redacted(tmp_path):
    from memory_custodian.agents.hooks import run_hook

    Memory.open(tmp_path).init()
    token = FRESH["digitalocean"]
    raw = json.dumps({"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                      "prompt": f"please deploy\nwith DO_TOKEN={token}\nthanks"})
    run_hook("claude", "UserPromptSubmit", raw, project_root=str(tmp_path))
    assert _nowhere(tmp_path, token)
