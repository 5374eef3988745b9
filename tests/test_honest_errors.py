"""Absurd input gets one line naming file and line or the limit, and leaves nothing behind that
blocks the next write; a damaged index is rebuilt, never a traceback."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import run_cli


@pytest.fixture
def project(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    assert run_cli("remember", "hello world note", cwd=tmp_path).returncode == 0
    return tmp_path


@pytest.mark.parametrize("command", [["recall", "hello"], ["read", "--task", "general"], ["export"]])
def test_an_absurd_txn_count_is_one_skipped_line(project, command):
    assert run_cli("remember", "second note about hello", cwd=project).returncode == 0
    shard = next((project / "docs/memory/ledger").glob("*.jsonl"))
    lines = shard.read_text(encoding="utf-8").splitlines()
    ev = json.loads(lines[0])
    ev["txn_n"] = 10 ** 30
    shard.write_text(json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n" + lines[1] + "\n",
                     encoding="utf-8")
    r = run_cli(*command, cwd=project)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    doctor = run_cli("doctor", cwd=project)
    assert f"ledger/{shard.name}:1: bad-event: bad ledger event: bad txn or txn_n" in doctor.stdout


def test_an_index_missing_a_table_is_rebuilt(project):
    assert run_cli("recall", "hello", cwd=project).returncode == 0
    db = sqlite3.connect(project / "docs/memory/.cache/index.sqlite")
    db.execute("DROP TABLE notes")
    db.commit()
    db.close()
    r = run_cli("recall", "hello", cwd=project)
    assert r.returncode == 0 and "hello world note" in r.stdout, r.stderr
    assert run_cli("reindex", cwd=project).returncode == 0


def test_a_name_too_long_is_refused_before_any_write_and_blocks_nothing(project):
    before = sorted(p for p in project.rglob("*") if p.is_file())
    r = run_cli("add", "x", "--type", "rule", "--name", "n" * 240, cwd=project)
    assert r.returncode == 2 and "at most 100" in r.stderr and "n" * 60 not in r.stderr, r.stderr
    assert sorted(p for p in project.rglob("*") if p.is_file()) == before
    assert run_cli("add", "Always run the tests", "--type", "constraint", cwd=project).returncode == 0


@pytest.mark.parametrize("args,limit", [(["remember", "x" * 40_000], "32000"),
                                        (["remember", "ok", "--quote", "q" * 3_000], "2000"),
                                        (["remember", "ok", "--tag", "t" * 100], "64")])
def test_sizes_are_bounded_and_the_error_does_not_echo_the_input(project, args, limit):
    r = run_cli(*args, cwd=project)
    assert r.returncode == 2 and f"limit is {limit}" in r.stderr and len(r.stderr) < 300, r.stderr
