"""The ledger commands as users run them: real processes, exact output, exit codes."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli, run_cli_process, unfenced

LEDGER_COMMANDS = ("remember", "supersede", "revoke", "flag-stale", "reinstate", "promote", "expire", "recall",
                   "expand", "history", "reindex", "doctor")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "docs" / "memory").mkdir(parents=True)
    (tmp_path / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
    return tmp_path


def cli(project, *args, input=None):
    return run_cli(*args, "--project-root", str(project), input=input)


def test_remember_recall_expand_history(project):
    r = cli(project, "remember", "-", "--kind", "gotcha", "--priority", "high", "--tag", "lock", "--path", "src/d/",
            input="workspace lock released before daemon restart\n\nthe daemon re-acquires it\n")
    assert r.returncode == 0, r.stderr
    note_id = r.stdout.strip()
    assert len(note_id) == 8
    r = cli(project, "recall", "daemon")
    date = r.stdout[-60:]
    lines = r.stdout.splitlines()
    assert lines[0].startswith("quoted project memory") and lines[1] == "```memory" and lines[-1] == "```"
    assert lines[2].startswith(f"[#{note_id}] gotcha/high · workspace lock released before daemon restart · 20")
    assert lines[-2] == "0 more matched below the cutoff; 0 excluded"
    del date
    r = cli(project, "recall", "daemon", "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["hits"][0]["id"] == note_id and doc["excluded"]["count"] == 0
    r = cli(project, "revoke", note_id[:5], "--reason", "the daemon changed")
    assert r.returncode == 0 and r.stdout == f"#{note_id} revoked\n"
    r = cli(project, "recall", "daemon")
    assert unfenced(r.stdout).splitlines() == ["(no notes matched)",
                                     "0 more matched below the cutoff; 1 excluded (1 revoked) — --all to include"]
    r = cli(project, "expand", note_id)
    assert unfenced(r.stdout).splitlines()[1].startswith("WARNING: revoked")
    r = cli(project, "history", note_id)
    assert [line.split()[1] for line in unfenced(r.stdout).splitlines()] == ["create", "revoke"]


def test_exit_codes(project):
    note_id = cli(project, "remember", "a note").stdout.strip()
    r = cli(project, "revoke", note_id, "--reason", "x")
    r = cli(project, "revoke", note_id, "--reason", "x")
    assert r.returncode == 1 and r.stderr.startswith("error: cannot revoke note") and "nothing was written" in r.stderr
    r = cli(project, "reinstate", "zzzzzzzz" if not note_id.startswith("zz") else "yyyyyyyy", "--reason", "x")
    assert r.returncode == 2 and "no note" in r.stderr
    r = cli(project, "promote", note_id, "--to", "human", "--actor", "agent")
    assert r.returncode == 1
    r = cli(project, "remember", "key AKIAIOSFODNN7EXAMPLE")
    assert r.returncode == 2 and "AKIA" not in r.stderr


def test_doctor_reports_and_repairs_torn_tail(project):
    cli(project, "remember", "first")
    shard = next((project / "docs" / "memory" / "ledger").glob("*.jsonl"))
    with open(shard, "ab") as fh:
        fh.write(b'{"v":1,"id":"01ABC')
    r = cli(project, "doctor", "--ledger-only")
    assert r.returncode == 1 and "torn-tail" in r.stdout and "--repair" in r.stderr
    r = cli(project, "doctor", "--ledger-only", "--repair")
    assert r.returncode == 0, r.stdout + r.stderr
    assert shard.read_bytes().endswith(b"\n")
    assert list((project / "docs" / "memory" / ".cache" / "backup").iterdir())
    r = cli(project, "doctor", "--ledger-only", "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["ok"] is True


def test_reindex_without_tty_prints_no_progress(project):
    cli(project, "remember", "one")
    r = cli(project, "reindex")
    assert r.returncode == 0 and r.stdout == "indexed 1 notes from 1 events in 1 shard(s)\n" and r.stderr == ""


def test_every_ledger_command_has_help(project):
    for name in LEDGER_COMMANDS:
        r = run_cli(name, "--help")
        assert r.returncode == 0 and "--format" in r.stdout, name


def test_a_fresh_process_prints_what_the_in_process_run_prints(project):
    root = str(project)
    cli(project, "remember", "the cache lock is held too long", "--kind", "gotcha", "--tag", "cache")
    gone = cli(project, "remember", "cache warmed at boot").stdout.strip()
    cli(project, "revoke", gone, "--reason", "no longer true")
    for args in (["recall", "cache"], ["recall", "cache", "--format", "json"], ["recall", "--kind=gotcha", "--all"],
                 ["recall", "--tag", "cache", "--limit", "0"], ["recall", "x", "--state", "revoked"],
                 ["remember", "x", "--supersedes", "zzzz"], ["remember", "   "]):
        here = run_cli(*args, "--project-root", root)
        fresh = run_cli_process(*args, "--project-root", root)
        assert (here.returncode, here.stdout, here.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr), args
    fast = json.loads(run_cli("remember", "-", "--format", "json", "--project-root", root, input="from stdin\n").stdout)
    slow = json.loads(run_cli_process("remember", "-", "--format", "json", "--project-root", root,
                                      input="from stdin\n").stdout)
    assert fast.keys() == slow.keys() and fast["body"] == slow["body"] == "from stdin"
