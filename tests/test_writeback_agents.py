"""Checkpoints budgeted per agent, through real `memory-custodian hook` processes fed Claude Code's
recorded payloads: a subagent's stop never takes the main agent's once-a-session checkpoint, and
`stats` counts the two apart."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import run_cli_process

from memory_custodian import Memory

RECORDED = Path(__file__).parent / "fixtures" / "hosts" / "claude"
SID = "9f2c1e7a-4b1d-4c3e-9a51-0d6f3e2b7c10"


def project(tmp_path: Path, **checkpoint) -> Path:
    root = tmp_path / "shop"
    (root / "src" / "shop").mkdir(parents=True)
    for name in ("payments.py", "refunds.py", "ledger.py"):
        (root / "src" / "shop" / name).write_text("a\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    Memory.open(root).init()
    if checkpoint:
        (root / "docs" / "memory" / "config.json").write_text(json.dumps({"checkpoint": checkpoint}))
    return root


def hook(root: Path, event: str, **changes) -> str:
    data = json.loads((RECORDED / f"{event}.json").read_text().replace("__PROJECT__", str(root)))
    data.update(changes)
    data = {k: v for k, v in data.items() if v is not None}  # None: the field is left out
    proc = run_cli_process("hook", "--host", "claude", event, cwd=root, input=json.dumps(data),
                           env={"PATH": os.environ.get("PATH", "")})
    assert proc.returncode == 0 and "could not be loaded" not in proc.stderr, proc.stderr
    return proc.stdout.strip()


def edit(root: Path, name: str, agent: str | None = None) -> None:
    """An Edit of src/shop/NAME, by the main agent or (inside a subagent, as the host reports it) `agent`."""
    fields = {"agent_id": agent, "agent_type": "general-purpose"} if agent else {}
    hook(root, "PreToolUse", tool_input={"file_path": str(root / "src" / "shop" / name), "old_string": "a",
                                         "new_string": "b"}, **fields)


def stop(root: Path, agent: str | None = None, active: bool = False) -> str | None:
    """The reason a stop was kept working with, or None when it was let go."""
    if agent is None:
        out = hook(root, "Stop", stop_hook_active=active)
    else:
        out = hook(root, "SubagentStop", agent_id=agent, stop_hook_active=active)
    return json.loads(out)["reason"] if out else None


def stats(root: Path) -> dict:
    proc = run_cli_process("stats", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["totals"]


def test_a_subagent_stop_leaves_the_main_agent_its_checkpoint(tmp_path):
    root = project(tmp_path)
    hook(root, "SessionStart")
    edit(root, "payments.py")  # the main agent does the edits
    assert stop(root, "a3f9c2") is None  # an Explore subagent finishes: asks nothing, spends nothing
    reason = stop(root)
    assert reason and "src/shop/payments.py" in reason and "nothing to record" in reason
    assert stop(root, active=True) is None
    totals = stats(root)
    assert totals["checkpoints"] == {"declined": 1, "fired": 1}
    assert totals["subagent_checkpoints"] == {"off": 1}
    assert totals["hooks"]["SubagentStop"] == 1


def test_with_subagents_off_their_edits_are_the_main_agent_s_turn(tmp_path):
    root = project(tmp_path)
    hook(root, "SessionStart")
    edit(root, "refunds.py", agent="a3f9c2")
    assert stop(root, "a3f9c2") is None
    reason = stop(root)  # the main agent received the subagent's result: it is asked about its edits
    assert reason and "src/shop/refunds.py" in reason


def test_an_older_subagent_payload_without_agent_id_is_still_a_subagent(tmp_path):
    root = project(tmp_path)
    hook(root, "SessionStart")
    edit(root, "payments.py")
    assert hook(root, "SubagentStop", agent_id=None, agent_type=None, agent_transcript_path=None) == ""
    assert stop(root) is not None


def test_subagents_with_their_own_budget_are_asked_about_their_own_work(tmp_path):
    root = project(tmp_path, subagent_stop="once")
    hook(root, "SessionStart")
    edit(root, "refunds.py", agent="a3f9c2")
    edit(root, "payments.py")
    reason = stop(root, "a3f9c2")
    assert reason and "src/shop/refunds.py" in reason and "payments.py" not in reason
    assert stop(root, "a3f9c2", active=True) is None  # the host's follow-up stop
    edit(root, "refunds.py", agent="a3f9c2")
    assert stop(root, "a3f9c2") is None  # once for this subagent
    edit(root, "ledger.py", agent="b71e04")
    other = stop(root, "b71e04")  # another subagent: its own budget
    assert other and "src/shop/ledger.py" in other and "refunds.py" not in other
    assert stop(root, "b71e04", active=True) is None
    main = stop(root)  # the main agent's budget is untouched, for its own work only
    assert main and "src/shop/payments.py" in main and "refunds.py" not in main and "ledger.py" not in main
    assert stop(root, active=True) is None
    totals = stats(root)
    assert totals["checkpoints"] == {"declined": 1, "fired": 1}
    assert totals["subagent_checkpoints"] == {"declined": 2, "fired": 2}
    text = run_cli_process("stats", cwd=root).stdout
    assert "checkpoints: main agent declined 1, fired 1 · subagents declined 2, fired 2" in text


def test_a_subagent_that_records_a_note_answers_its_own_checkpoint_only(tmp_path):
    root = project(tmp_path, subagent_stop="once")
    hook(root, "SessionStart")
    edit(root, "refunds.py", agent="a3f9c2")
    assert stop(root, "a3f9c2")
    Memory.open(root).remember("Refunds round half-even", kind="gotcha", paths=["src/shop/refunds.py"],
                               actor="agent")
    assert stop(root, "a3f9c2", active=True) is None
    edit(root, "payments.py")
    # the subagent's note changed memory since the main agent's last checkpoint: this turn recorded something
    assert stop(root) is None
    edit(root, "payments.py")
    assert stop(root) is not None  # the main agent's once is still there for its own next turn
    assert stats(root)["subagent_checkpoints"] == {"answered": 1, "fired": 1}


def test_a_bad_subagent_setting_is_named_and_never_blocks(tmp_path):
    root = project(tmp_path, subagent_stop="always")
    hook(root, "SessionStart")
    edit(root, "refunds.py", agent="a3f9c2")
    data = json.loads((RECORDED / "SubagentStop.json").read_text().replace("__PROJECT__", str(root)))
    proc = run_cli_process("hook", "--host", "claude", "SubagentStop", cwd=root, input=json.dumps(data))
    assert proc.returncode == 0 and proc.stdout.strip() == ""
    assert "subagent_stop" in proc.stderr and "config.json" in proc.stderr


def test_a_codex_stop_inside_a_thread_spawned_subagent_is_the_subagent_s(tmp_path):
    """Codex names the child thread in `agent_id` on every hook fired inside it (openai/codex#22882)."""
    root = project(tmp_path)
    codex = Path(__file__).parent / "fixtures" / "hosts" / "codex"

    def call(event: str, **changes) -> str:
        data = json.loads((codex / f"{event}.json").read_text().replace("__PROJECT__", str(root)))
        data.update(changes)
        proc = run_cli_process("hook", "--host", "codex", event, cwd=root, input=json.dumps(data),
                               env={"PATH": os.environ.get("PATH", "")})
        assert proc.returncode == 0 and "could not be loaded" not in proc.stderr, proc.stderr
        return proc.stdout.strip()

    patch = "*** Begin Patch\n*** Update File: src/shop/payments.py\n@@\n-a\n+b\n*** End Patch\n"
    call("SessionStart")
    call("PreToolUse", tool_name="apply_patch", tool_input={"command": patch})
    assert call("Stop", agent_id="019d0370-child", agent_type="worker") == ""
    reason = json.loads(call("Stop"))["reason"]
    assert "src/shop/payments.py" in reason
