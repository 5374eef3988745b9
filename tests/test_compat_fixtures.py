"""MemoryCustodian 0.9.1 compatibility: same files, same order, byte-identical packs, same omissions."""

from __future__ import annotations

import json

import pytest
from conftest import MC_FIXTURES, run_cli

from memory_custodian import Memory

CASES = sorted(MC_FIXTURES.glob("*/expected/*.json"))
COMPARED = ("loaded", "packed", "omitted", "oversized", "missing_required", "skipped_optional")


def test_every_fixture_folder_has_expectations():
    folders = sorted(p.parent.parent.name for p in MC_FIXTURES.glob("*/docs/memory"))
    assert folders and folders == sorted({c.parent.parent.name for c in CASES})
    assert len(CASES) >= 21


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.parent.name}-{p.stem}")
def test_read_matches_memorycustodian_091(case):
    expected = json.loads(case.read_text(encoding="utf-8"))
    memory = Memory.open(case.parent.parent)
    got = memory.read(expected["task"], ledger=False).to_dict()
    for key in COMPARED:
        assert got[key] == expected[key], key
    assert got["exit_code"] == expected["exit_code"]
    # JSON key order of `packed` is sorted; the load order is `loaded`.
    assert list(got["packed"]) == got["loaded"]


def test_cli_json_matches_for_the_overflow_fixture():
    case = MC_FIXTURES / "overflow" / "expected" / "implementation.json"
    expected = json.loads(case.read_text(encoding="utf-8"))
    proc = run_cli("read", "--task", "implementation", "--format", "json", "--project-root", str(case.parent.parent))
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    for key in COMPARED:
        assert got[key] == expected[key], key
    # every omitted unit is named, by file and heading
    assert sum(1 for o in got["omissions"] if o["module"] == "decisions.md") == expected["omitted"]["decisions.md"]
    assert all(o["reason"] == "omitted-by-budget" and o["ref"] for o in got["omissions"])
