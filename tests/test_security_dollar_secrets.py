"""Credentials holding a `$` (issue 31, door 6): not taken for a variable reference, so every door
refuses them and `check --privacy` finds them; real references (`$DB_PASSWORD`, `${PW}`, `$(cmd)`,
a whole-value `$password`) still pass."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import run_cli

from memory_custodian.base.errors import SecretFound
from memory_custodian.base.secrets import scan
from memory_custodian.memory import Memory

CREDENTIALS = {
    "db pass": ("DB_PASS=p$ssw0rd!Xy7", "p$ssw0rd!Xy7"),
    "password": ("password=$ecretPa55w0rd", "$ecretPa55w0rd"),
    "django": ("SECRET_KEY=7h$k2!m9#qz4@w8e^r5t0y3u", "7h$k2!m9#qz4@w8e^r5t0y3u"),
}
REFERENCES = ("password=$DB_PASSWORD", "password: $password", "DB_PASS=${DB_PASS}", "password=$(cat /run/pw)",
              "PASSWORD=$HOME/.pw", "db_pass: $db_pass", "the refund costs $5 and the password is in the vault",
              "export PATH=$PATH:$HOME/bin", "secret=${{ secrets.DEPLOY_KEY }}")


@pytest.mark.parametrize("name", sorted(CREDENTIALS))
def test_the_detector_finds_a_credential_with_a_dollar(name):
    line, value = CREDENTIALS[name]
    for text in (line, f"Deploy with {line} today", f"  {line}\n"):
        found = scan(text)
        assert found and value not in str(found), (text, found)


@pytest.mark.parametrize("text", REFERENCES)
def test_a_reference_is_still_no_credential(text):
    assert not scan(text), text


def _nowhere(root, value: str) -> bool:
    return all(value.encode() not in p.read_bytes() for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("name", sorted(CREDENTIALS))
def test_every_door_refuses_it(tmp_path, name):
    line, value = CREDENTIALS[name]
    memory = Memory.open(tmp_path)
    memory.init()
    seed = memory.remember("Seed note for the doors", kind="finding").id
    doors = {
        "remember": lambda: memory.remember(f"Deploy with {line}", kind="finding"),
        "remember as agent": lambda: memory.remember(f"Deploy with {line}", kind="finding", actor="agent"),
        "add": lambda: memory.add(f"Always deploy with {line}", "constraint"),
        "add reason": lambda: memory.add("Use the vault", "decision", reasons=[f"key {line}"]),
        "supersede": lambda: memory.supersede(seed, f"Now {line}", reason="rotated"),
        "revoke reason": lambda: memory.revoke(seed, reason=f"leaked {line}"),
    }
    for door, write in doors.items():
        with pytest.raises(SecretFound):
            write()
        assert _nowhere(tmp_path, value), door
    buf = tmp_path / "buf.md"
    memory.edit_checkout(buf)
    buf.write_text(buf.read_text(encoding="utf-8") + f"\n### new\n- kind: finding\n\nlogin with {line}\n",
                   encoding="utf-8")
    with pytest.raises(SecretFound):
        memory.edit_checkin(buf, reason="r")
    buf.unlink()
    assert _nowhere(tmp_path, value)


def test_the_command_line_the_mcp_server_and_the_prompt_hook_refuse_it(tmp_path):
    from mcp.server.mcpserver.exceptions import ToolError

    from memory_custodian.agents.hooks import run_hook
    from memory_custodian.agents.mcp_server import build_server

    memory = Memory.open(tmp_path)
    memory.init()
    line, value = CREDENTIALS["db pass"]
    run = run_cli("remember", f"Deploy with {line}", cwd=tmp_path)
    assert run.returncode == 2 and "looks like" in run.stderr and value not in run.stderr
    with pytest.raises(ToolError):
        asyncio.run(build_server(memory).call_tool("memory_remember", {"text": f"the db is {line}"}))
    raw = json.dumps({"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                      "prompt": f"please deploy\nwith {CREDENTIALS['password'][0]}\nthanks"})
    run_hook("claude", "UserPromptSubmit", raw, project_root=str(tmp_path))
    assert _nowhere(tmp_path, value) and _nowhere(tmp_path, CREDENTIALS["password"][1])


def test_check_privacy_finds_it_in_a_hand_edited_file(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    constraints = tmp_path / "docs/memory/constraints.md"
    constraints.write_text(constraints.read_text(encoding="utf-8") + "".join(
        f"- Deploy with {line}\n" for line, _ in CREDENTIALS.values()), encoding="utf-8")
    run = run_cli("check", "--privacy", "--format", "json", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert all(value not in run.stdout for _, value in CREDENTIALS.values())
    assert len([f for f in json.loads(run.stdout)["findings"] if "constraints.md" in json.dumps(f)]) == 3
