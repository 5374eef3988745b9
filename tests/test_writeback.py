"""The write-back parts in process: checkpoint settings, the automatic checkpoint's redaction and
supersession, the rule detector, the usage log's bounds, and `stats` over a replayed week."""

from __future__ import annotations

import datetime
import json
import os
import stat
import subprocess
import sys

import pytest
from conftest import run_cli
from hypothesis import given
from hypothesis import strategies as st

from memory_custodian import Memory
from memory_custodian.agents.hooks import run_hook
from memory_custodian.session import adoption, usage_log
from memory_custodian.session.rule_prompts import standing_rule

DAY = 86_400.0
T0 = 1_795_000_000.0  # a fixed start for the replayed week


@pytest.fixture()
def root(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    Memory.open(tmp_path).init()
    return tmp_path


def call(root, event: str, session: str, now: float | None = None, host: str = "claude", **fields) -> str:
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": event, **fields}
    return run_hook(host, event, json.dumps(payload), project_root=str(root), now=now)


def edit(root, session: str, now: float | None = None) -> None:
    call(root, "PreToolUse", session, now, tool_name="Edit", tool_input={"file_path": str(root / "src" / "app.py")})


def config(root, **checkpoint) -> None:
    (root / "docs" / "memory" / "config.json").write_text(json.dumps({"checkpoint": checkpoint}))


def blocks(root, session: str, turns: int) -> list[bool]:
    out = []
    for _ in range(turns):
        edit(root, session)
        first = call(root, "Stop", session, stop_hook_active=False)
        out.append(bool(first))
        call(root, "Stop", session, stop_hook_active=bool(first))  # the host's follow-up stop
    return out


def test_once_a_session_by_default_every_turn_up_to_the_cap(root):
    call(root, "SessionStart", "a")
    assert blocks(root, "a", 3) == [True, False, False]
    config(root, stop="every", max_blocks=2)
    call(root, "SessionStart", "b")
    assert blocks(root, "b", 3) == [True, True, False]


def test_substantial_work_without_writes_counts_from_the_threshold(root):
    config(root, min_tool_calls=3)
    call(root, "SessionStart", "reads")
    for _ in range(2):
        call(root, "PreToolUse", "reads", tool_name="Read", tool_input={"file_path": str(root / "src" / "app.py")})
        assert call(root, "Stop", "reads", stop_hook_active=False) == ""
    call(root, "PreToolUse", "reads", tool_name="Read", tool_input={"file_path": str(root / "src" / "app.py")})
    assert "3 file-tool calls" in json.loads(call(root, "Stop", "reads", stop_hook_active=False))["reason"]


def test_a_bad_checkpoint_setting_is_named_and_never_blocks(root, capsys):
    config(root, stop="sometimes")
    call(root, "SessionStart", "bad")
    edit(root, "bad")
    assert call(root, "Stop", "bad", stop_hook_active=False) == ""
    assert "config.json" in capsys.readouterr().err


def test_the_automatic_checkpoint_refuses_credentials_and_is_superseded(root):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    call(root, "SessionStart", "auto")
    call(root, "UserPromptSubmit", "auto", prompt=f"deploy with token {token} and fix src/app.py")
    edit(root, "auto")
    call(root, "PreCompact", "auto", trigger="auto")
    memory = Memory.open(root)
    first = [n for n in memory.notes() if n.kind == "task"]
    assert len(first) == 1 and token not in first[0].body + first[0].title and "[redacted: GitHub token]" in first[0].body
    call(root, "UserPromptSubmit", "auto", prompt="now the docs")
    call(root, "PreCompact", "auto", trigger="auto")
    notes = {n.id: n for n in Memory.open(root).notes() if n.kind == "task"}
    assert notes[first[0].id].state == "superseded"
    (latest,) = [n for n in notes.values() if n.state == "active"]
    assert latest.supersedes == first[0].id and latest.provenance == "auto" and latest.expires
    assert token not in (root / "docs" / "memory" / ".cache" / "sessions" / "s-auto.json").read_text()


@pytest.mark.parametrize("text,rule", [
    ("From now on, run the linter before every commit.", True),
    ("We use pnpm, not npm.", True),
    ("never push directly to main", True),
    ("Don't worry about the lint job.", False),
    ("Don't push this yet.", False),
    ("Can we always retry on 503?", False),
    ("Fix the failing test.", False),
    ("Don\u2019t commit generated files.", True),
    ("Don\u2019t worry about it.", False),
])
def test_the_rule_detector(text, rule):
    assert (standing_rule(text) is not None) == rule


def test_the_usage_log_is_owner_only_and_bounded(root, monkeypatch):
    monkeypatch.setattr(usage_log, "MAX_BYTES", 4_000)
    for i in range(200):
        usage_log.record(str(root / "docs" / "memory"), {"kind": "recall", "door": "cli", "ids": [f"n{i:07d}"]})
    path = usage_log.store_path(str(root / "docs" / "memory"))
    assert os.path.getsize(path) <= 4_000 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    entries, bad = usage_log.read_store(str(root / "docs" / "memory"))
    assert bad == 0 and entries[-1]["ids"] == ["n0000199"]


def test_stats_over_a_replayed_week_raises_each_flag(root):
    memory = Memory.open(root)
    directive = memory.remember("Run migrations through the wrapper", kind="directive").id
    for day in range(6):  # six sessions that edit and record nothing; the pack injects the directive
        at = T0 + day * DAY
        call(root, "SessionStart", f"day{day}", at)
        edit(root, f"day{day}", at + 60)
        call(root, "Stop", f"day{day}", at + 120, stop_hook_active=False)
        call(root, "Stop", f"day{day}", at + 130, stop_hook_active=True)
    start = usage_log.read_store(memory.memory_dir_str)[0][0]
    for i in range(40):  # earlier sessions that only read: the directive injected each time
        usage_log.record(memory.memory_dir_str, {**start, "session": f"early{i}", "injected": [directive]},
                        T0 - DAY + i)
    report = adoption.report(memory, now=T0 + 16 * DAY)
    assert "the last 6 sessions edited files and recorded nothing in memory" in report.flags, report.flags
    assert f"directive #{directive} injected 46 times, never expanded" in report.flags
    assert any(f.startswith("no hook has fired for 10 days") for f in report.flags), report.flags
    assert report.totals["checkpoints"] == {"declined": 6, "fired": 6}
    assert report.totals["hooks"]["Stop"] == 12 and report.as_dict()["totals"] == report.totals
    out = run_cli("stats", "--project-root", str(root)).stdout
    assert "FLAG the last 6 sessions" in out
    data = json.loads(run_cli("stats", "--project-root", str(root), "--format", "json").stdout)
    assert data["totals"]["written"] == {"directive/human": 1}
    assert "adoption:" in run_cli("status", "--project-root", str(root)).stdout


def test_an_expand_clears_the_unread_flag(root):
    memory = Memory.open(root)
    note = memory.remember("Ports are fixed", kind="directive").id
    for _ in range(40):
        usage_log.record(memory.memory_dir_str, {"kind": "hook", "session": "s", "host": "claude",
                                                "event": "SessionStart", "action": "start", "injected": [note]})
    assert any("never expanded" in f for f in adoption.report(memory).flags)
    run_cli("expand", note, "--project-root", str(root))
    assert not any("never expanded" in f for f in adoption.report(memory).flags)


def test_doctor_probes_write_nothing_back(root):
    from memory_custodian.agents.host_doctor import DOCTOR_SESSION
    from memory_custodian.agents.writeback import PROBE_SESSION

    assert PROBE_SESSION == DOCTOR_SESSION
    call(root, "UserPromptSubmit", DOCTOR_SESSION, prompt="memory-custodian doctor: is the memory reachable?")
    edit(root, DOCTOR_SESSION)
    assert call(root, "Stop", DOCTOR_SESSION, stop_hook_active=False) == ""
    call(root, "SessionEnd", DOCTOR_SESSION, reason="other")
    assert Memory.open(root).notes() == [] and usage_log.read_store(str(root / "docs" / "memory")) == ([], 0)


def test_the_stop_hook_does_no_index_work(root):
    code = ("import json, sys; from memory_custodian.agents.hooks import run_hook; "
            "p = {'session_id': 's', 'cwd': sys.argv[1], 'hook_event_name': 'Stop', 'stop_hook_active': False}; "
            "run_hook('claude', 'Stop', json.dumps(p), project_root=sys.argv[1]); "
            "print(sorted(m for m in sys.modules if m in ('sqlite3', 'memory_custodian.ledger.index.index')))")
    proc = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]", proc.stdout


def test_a_rule_said_twice_is_nudged_once(root):
    call(root, "SessionStart", "twice")
    assert "standing rule" in call(root, "UserPromptSubmit", "twice", prompt="Never push directly to main.")
    assert "standing rule" not in call(root, "UserPromptSubmit", "twice", prompt="Never push directly to main.")


def test_a_ledger_with_notes_and_no_hook_ever_is_flagged(root):
    Memory.open(root).remember("Ports are fixed", kind="gotcha")
    assert any(f.startswith("no hook has fired yet") for f in adoption.report(Memory.open(root)).flags)
    assert not (root / "docs" / "memory" / ".cache" / "adoption.jsonl").exists()


@given(st.datetimes(min_value=datetime.datetime(1970, 1, 1), max_value=datetime.datetime(2400, 12, 31)))
def test_the_quiet_days_arithmetic_is_the_calendar_s(moment):
    import calendar

    from memory_custodian.ledger.storage.ids import iso_to_ms

    iso = moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert iso_to_ms(iso) // 1000 == calendar.timegm(moment.timetuple())
