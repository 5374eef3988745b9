"""Replayed sessions per host, through real `memory-custodian hook` processes: the end-of-turn
checkpoint blocks exactly when it should, in each host's documented output shape; the automatic
task checkpoint is written, superseded and shown at the next session start."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest
from conftest import run_cli_process

from memory_custodian import Memory
from memory_custodian.agents import hosts

RECORDED = Path(__file__).parent / "fixtures" / "hosts"
STOP = {"claude": "Stop", "codex": "Stop", "gemini": "AfterAgent"}
PROMPT = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}
FILE = {"claude": "PreToolUse", "codex": "PreToolUse", "gemini": "AfterTool"}
COMPACT = {"claude": "PreCompact", "codex": "PreCompact", "gemini": "PreCompress"}
END = {"claude": "SessionEnd", "gemini": "SessionEnd"}  # Codex has no session-end event
WRITE_INPUT = {
    "claude": ("Edit", {"file_path": "__PROJECT__/src/shop/payments.py", "old_string": "a", "new_string": "b"}),
    "codex": ("apply_patch", {"command": "*** Begin Patch\n*** Update File: src/shop/payments.py\n@@\n-a\n+b\n"
                                         "*** End Patch\n"}),
    "gemini": ("write_file", {"file_path": "__PROJECT__/src/shop/payments.py", "content": "b\n"}),
}
RULE_PROMPT = "From now on, never call the payment API without an idempotency key. Fix the refund rounding."


def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "src" / "shop").mkdir(parents=True)
    (root / "src" / "shop" / "payments.py").write_text("a\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    Memory.open(root).init()
    return root


def payload(host: str, event: str, root: Path, **changes) -> str:
    data = json.loads((RECORDED / host / f"{event}.json").read_text().replace("__PROJECT__", str(root)))
    data.update(changes)
    return json.dumps(data)


def hook(host: str, event: str, root: Path, **changes) -> str:
    proc = run_cli_process("hook", "--host", host, event, cwd=root, input=payload(host, event, root, **changes),
                           env={"PATH": os.environ.get("PATH", "")}, timeout=hosts.load(host).hook_timeout_s)
    assert proc.returncode == 0, proc.stderr
    assert "could not be loaded" not in proc.stderr, proc.stderr
    return proc.stdout.strip()


def stop(host: str, root: Path, session: str, active: bool = False) -> dict | None:
    out = hook(host, STOP[host], root, session_id=session, stop_hook_active=active)
    data = json.loads(out) if out else {}
    if data:
        schema = json.loads((RECORDED / host / "schemas" / "stop-output.json").read_text())
        jsonschema.validate(data, schema)
    return data if data.get("decision") else None


def edit(host: str, root: Path, session: str) -> None:
    tool, tool_input = WRITE_INPUT[host]
    tool_input = json.loads(json.dumps(tool_input).replace("__PROJECT__", str(root)))
    hook(host, FILE[host], root, session_id=session, tool_name=tool, tool_input=tool_input)


@pytest.mark.parametrize("host", hosts.HOSTS)
def test_a_replayed_session(tmp_path, host):
    root = project(tmp_path)
    sid = f"{host}-one"
    hook(host, "SessionStart", root, session_id=sid)
    nudge = hook(host, PROMPT[host], root, session_id=sid, prompt=RULE_PROMPT)
    assert "standing rule" in nudge and "idempotency key" in nudge
    assert stop(host, root, sid) is None  # nothing done yet: no block
    edit(host, root, sid)
    blocked = stop(host, root, sid)
    assert blocked and blocked["decision"] == hosts.load(host).block_decision
    assert "src/shop/payments.py" in blocked["reason"] and "nothing to record" in blocked["reason"]
    assert stop(host, root, sid, active=True) is None  # the host's own flag: never twice in a row
    edit(host, root, sid)
    assert stop(host, root, sid) is None  # once a session, the default
    hook(host, COMPACT[host], root, session_id=sid)
    memory = Memory.open(root)
    tasks = [n for n in memory.notes() if n.kind == "task"]
    assert len(tasks) == 1 and tasks[0].provenance == "auto" and tasks[0].title.startswith("Last session:")
    assert "idempotency key" in tasks[0].body and "src/shop/payments.py" in tasks[0].body
    assert "Branch: main" in tasks[0].body
    if host in END:
        hook(host, END[host], root, session_id=sid)  # nothing new since the compaction: no second note
        assert len([n for n in Memory.open(root).notes() if n.kind == "task"]) == 1
    start = hook(host, "SessionStart", root, session_id=f"{host}-two")
    assert f"#{tasks[0].id}" in start and "Last session:" in start


@pytest.mark.parametrize("host", hosts.HOSTS)
def test_a_write_during_the_turn_means_no_block(tmp_path, host):
    root = project(tmp_path)
    sid = f"{host}-writer"
    hook(host, "SessionStart", root, session_id=sid)
    edit(host, root, sid)
    Memory.open(root).remember("Refunds round half-even", kind="gotcha", paths=["src/shop/payments.py"],
                               actor="agent")
    assert stop(host, root, sid) is None


def test_checkpoint_off_in_config_never_blocks(tmp_path):
    root = project(tmp_path)
    (root / "docs" / "memory" / "config.json").write_text('{"checkpoint": {"stop": "off"}}\n')
    hook("claude", "SessionStart", root, session_id="off")
    edit("claude", root, "off")
    assert stop("claude", root, "off") is None
