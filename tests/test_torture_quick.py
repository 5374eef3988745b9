"""The short version of `benchmarks/torture.py`: kills, eight concurrent processes, disk trouble.

The full run (hundreds of kills, 60 s of load, real full-disk and read-only mounts) prints the
README's figures; this runs each phase briefly on every CI run, so a writer that starts losing
acknowledged data, or a failure that starts leaving half-written files, fails the suite.
"""

from __future__ import annotations

import random
import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import torture

QUICK_DISK_CASES = ["fsize-edge:remember", "fsize-tight:remember", "fsize-edge:add", "fsize-tight:add",
                    "fsize-edge:reindex", "fsize-tight:reindex"]
KNOWN: dict[str, str] = {}  # case -> a one-line description while a reported bug is open


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("torture")
    return {"crash": torture.run_crash(tmp, 10, random.Random(8)),
            "concurrency": torture.run_concurrency(tmp, 2.0, 8, 8),
            "threads": torture.run_threads(tmp, 8, 4),
            "disk": {row["case"]: row for row in torture.run_fsize(tmp, quick=True)}}


def test_crash_loses_nothing_acknowledged(report):
    c = report["crash"]
    assert c["attempted"] == 10 and c["killed"] + c["acknowledged"] + c["refused"] == 10
    assert c["lost"] == 0, c["lost_detail"]
    assert c["unparseable"] == 0 and c["failures"] == [], c["failures"]
    assert c["doctor_ok_after_repair"]


def test_a_hard_forget_after_the_kills_leaves_the_text_nowhere(report):
    scrub = report["crash"]["scrub"]
    assert scrub["copies_before"] > 0
    assert torture.scrub_ok(scrub), scrub


def test_concurrent_writers_lose_and_duplicate_nothing(report):
    k = report["concurrency"]
    assert k["acknowledged"] > 0
    assert k["lost"] == 0, k["lost_detail"]
    assert k["duplicated"] == 0, k["dup_detail"]
    assert k["half_written_seen"] == 0, k["half_written_detail"]
    assert k["unexpected_count"] == 0, k["unexpected"]


def test_threads_of_one_process_lose_nothing(report):
    t = report["threads"]
    assert t["lost"] == 0 and t["errors"] == 0, (t["lost_detail"], t["error_detail"])


def test_index_under_load_equals_a_rebuild(report):
    assert report["concurrency"]["index_equals_rebuild"], report["concurrency"]["index_detail"]


def test_mirror_follows_cli_writes(report):
    k = report["concurrency"]
    assert k["export_check_exit"] == 0, k["export_check"]


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN[c]))
                                  if c in KNOWN else c for c in QUICK_DISK_CASES])
def test_disk_trouble_fails_cleanly(report, case):
    row = report["disk"][case]
    assert row["clear_error"], row["stderr"]
    assert row["changed_after_error"] == [], row
    assert row["unparseable"] == []


def test_readers_see_an_interrupted_multi_file_write(tmp_path):
    """Killed between its file writes, a `forget` leaves a journal; `read` and `check` must not
    present the half-applied folder as if it were whole."""
    from conftest import run_cli, run_cli_process

    run_cli("init", "--extended", cwd=tmp_path)
    run_cli("add", "Use Redis for caching sessions", "--type", "decision", "--reason", "fast", cwd=tmp_path)
    killed = run_cli_process("forget", "Redis", "--mode", "soft", "--apply", cwd=tmp_path,
                             env={"MEMORY_CUSTODIAN_TEST_CRASH_AFTER_WRITES": "1"})
    assert killed.returncode != 0 and (tmp_path / "docs/memory/.cache/journal.json").exists()
    read = run_cli("read", "--task", "planning", cwd=tmp_path)
    check = run_cli("check", cwd=tmp_path)
    said = (read.stderr + check.stdout + check.stderr).lower()
    assert "interrupted" in said or "journal" in said, (read.stderr, check.stdout)
