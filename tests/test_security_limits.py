"""Every input bounded where it is read (issue 31, door 4): one limit table (`base/limits.py`),
each limit answered with a clear line, an over-size shard line skipped and named, a hook that
reads at most its limit from stdin, and errors that quote at most 40 characters of their input."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from conftest import run_cli

from memory_custodian import Memory
from memory_custodian.base import limits


@pytest.fixture
def project(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    memory = Memory.open(tmp_path)
    memory.init()
    memory.remember("The lock is released before the daemon restarts.", kind="gotcha", title="lock trap",
                    paths=("src/**",))
    return tmp_path, memory


def test_edit_checkin_holds_a_block_to_the_note_text_limit(project):
    root, _ = project
    buf = root / "buf.md"
    assert run_cli("edit", "--checkout", str(buf), cwd=root).returncode == 0
    big = "word " * (limits.NOTE_TEXT_CHARS // 5 + 10)
    buf.write_text(buf.read_text(encoding="utf-8") + f"\n### new\n- kind: finding\n\n{big}\n", encoding="utf-8")
    before = sorted(p.read_bytes() for p in (root / "docs/memory/ledger").glob("*.jsonl"))
    run = run_cli("edit", "--checkin", str(buf), "--reason", "r", cwd=root)
    assert run.returncode == 2 and f"the limit is {limits.NOTE_TEXT_CHARS}" in run.stderr, run.stderr
    assert sorted(p.read_bytes() for p in (root / "docs/memory/ledger").glob("*.jsonl")) == before


def test_an_edit_file_over_its_limit_is_refused_unread(project, monkeypatch):
    root, memory = project
    monkeypatch.setattr(limits, "EDIT_FILE_BYTES", 10_000)
    buf = root / "buf.md"
    memory.edit_checkout(buf)
    buf.write_text(buf.read_text(encoding="utf-8") + "x" * 20_000, encoding="utf-8")
    with pytest.raises(Exception, match="over 10,000 bytes"):
        memory.edit_checkin(buf, reason="r")


def test_an_over_size_shard_line_costs_only_that_line(project):
    root, _memory = project
    shard = next((root / "docs/memory/ledger").glob("*.jsonl"))
    line = json.loads(shard.read_text(encoding="utf-8").splitlines()[0])
    huge = dict(line, id="01M8KDZGDQ00VEVP0P1CMC7ZZZ", note="zzzzzzzz", body="x" * (limits.SHARD_LINE_BYTES + 10))
    with open(shard, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(huge) + "\n")
    started = time.monotonic()
    run = run_cli("read", "--path", "src/a.py", cwd=root)
    assert run.returncode == 0 and "lock trap" in run.stdout and time.monotonic() - started < 10
    assert "Ledger lines skipped: 1 line this version cannot read" in run.stdout
    assert "over the limit of 1,048,576" in run_cli("doctor", cwd=root).stdout


def test_a_hook_reads_no_more_than_its_limit_and_says_so(project):
    root, _ = project
    payload = json.dumps({"session_id": "s1", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                          "prompt": "x" * (limits.HOOK_STDIN_BYTES + 1000)})
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "memory_custodian", "hook", "UserPromptSubmit"], input=payload,
                         cwd=root, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and time.monotonic() - started < 5
    told = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"over {limits.HOOK_STDIN_BYTES:,} bytes" in told and "x" * 50 not in told


def test_a_prompt_just_under_the_stdin_limit_is_searched_by_its_head_and_the_hook_says_so(project):
    root, _ = project
    # the lock words come first; past the cut only words that match nothing
    prompt = "why is the lock released before the daemon " + "zq " * ((limits.HOOK_STDIN_BYTES - 400) // 3)
    payload = json.dumps({"session_id": "s2", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                          "prompt": prompt})
    assert len(payload.encode()) < limits.HOOK_STDIN_BYTES
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "memory_custodian", "hook", "UserPromptSubmit"], input=payload,
                         cwd=root, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - started
    told = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    assert run.returncode == 0 and "lock trap" in told, told[-400:]
    assert f"only the prompt's first {limits.PROMPT_QUERY_CHARS:,} characters were searched" in told
    assert took < 5  # it ranked every word of the 2 MB before: 2.7 s, 6 s under load


def test_a_credential_a_cut_would_split_is_redacted_whole():
    from memory_custodian.base.secrets import redact

    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = "x" * 290 + " " + token + " and more"
    assert token[:6] not in redact(text, keep=300)
    assert redact(text, keep=300) == redact(text)[:300]


def test_a_deep_file_path_still_gets_its_gotchas(project):
    root, _ = project
    deep = "src/" + "/".join(["segment" + str(i) for i in range(70)]) + "/a.py"
    assert len(deep) > 600
    payload = json.dumps({"session_id": "s1", "cwd": str(root), "hook_event_name": "PreToolUse",
                          "tool_name": "Read", "tool_input": {"file_path": str(root / deep)}})
    run = subprocess.run([sys.executable, "-m", "memory_custodian", "hook", "PreToolUse"], input=payload,
                         cwd=root, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "lock trap" in run.stdout and "limit is 512" not in run.stdout


@pytest.mark.parametrize("argv", [["expand", "k" * 5000], ["history", "k" * 5000],
                                  ["recall", "x", "--project-root", "/" + "a" * 3000]])
def test_an_error_quotes_at_most_40_characters_of_its_input(project, argv):
    root, _ = project
    run = run_cli(*argv, cwd=root)
    assert run.returncode == 2 and len(run.stderr) < 400 and ("k" * 41 not in run.stderr) and "a" * 41 not in run.stderr
