"""`memory-custodian check` and `status`: one finding a line with file and line; exit 1 on problems."""

from __future__ import annotations

import json

import pytest
from conftest import MC_FIXTURES, run_cli


@pytest.fixture
def project(tmp_path):
    assert run_cli("init", "--project-root", str(tmp_path)).returncode == 0
    return tmp_path


def check(project, *extra):
    return run_cli("check", "--project-root", str(project), *extra)


def test_fresh_init_fails_on_the_uncurated_brief_as_memorycustodian_does(project):
    proc = check(project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "docs/memory/brief.md:1: problem: uncurated-brief:" in proc.stdout
    assert "1 problem, 0 warnings" in proc.stdout


def test_problems_exit_1_with_file_and_line(project):
    memory = project / "docs/memory"
    (memory / "constraints.md").unlink()
    (memory / "decisions.md").write_text("# Decisions\n\n## A\n```\n## B\n")
    (memory / "areas").mkdir()
    (memory / "areas/store.md").write_text("# Store\n")
    before = {p: p.read_bytes() for p in memory.rglob("*.md")}
    proc = check(project)
    assert proc.returncode == 1
    out = proc.stdout
    assert "docs/memory/constraints.md: problem: core-missing:" in out
    assert "docs/memory/decisions.md:4: problem: unclosed-fence:" in out
    assert "docs/memory/areas/store.md: problem: not-indexed:" in out
    assert "problem: route-missing: required route constraints.md does not exist" in out
    assert proc.stderr.startswith("error: ") and "problem" in proc.stderr
    assert {p: p.read_bytes() for p in memory.rglob("*.md")} == before


def test_malformed_manifest_is_a_finding(project):
    manifest = project / "docs/memory/manifest.md"
    manifest.write_text(manifest.read_text().replace("- decisions.md: 800 tokens max", "- decisions.md: lots of tokens 9"))
    data = json.loads(check(project, "--format", "json").stdout)
    assert data["ok"] is False
    (finding,) = [f for f in data["findings"] if f["code"] == "manifest-invalid"]
    assert finding["line"] and "N tokens max" in finding["message"]


def test_over_budget_and_oversized(project):
    memory = project / "docs/memory"
    (memory / "constraints.md").write_text("# Constraints\n\n" + "".join(f"- rule number {i} holds\n" for i in range(200)))
    (memory / "do-not-use.md").write_text("# DNU\n\n## Huge\n" + "x " * 600 + "\n")
    out = check(project).stdout
    assert "constraints.md:" in out and "problem: over-budget:" in out and "compact --target constraints.md" in out
    assert "do-not-use.md:3: problem: oversized-entry:" in out


def test_index_missing_and_protocol(project):
    manifest = project / "docs/memory/manifest.md"
    text = manifest.read_text().replace("### Enabled rules\n- None enabled.\n", "### Enabled rules\n- `rules/output.md`: x\n")
    manifest.write_text(text.replace("- protocol_version: 0.5", "- protocol_version: 0.9"))
    out = check(project).stdout
    assert "index-missing: rules/output.md" in out
    assert "protocol-unsupported" in out


def test_fixtures_check(tmp_path):
    proc = run_cli("check", "--project-root", str(MC_FIXTURES / "dogfood"), "--format", "json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 0, data
    proc = run_cli("check", "--project-root", str(MC_FIXTURES / "overflow"))
    assert proc.returncode == 1 and "decisions.md:82: problem: over-budget" in proc.stdout


def test_status(project):
    proc = run_cli("status", "--project-root", str(project))
    assert proc.returncode == 1  # init's template brief, as MemoryCustodian 0.9.1 reports it
    assert "problem: brief.md: brief.md is still the template" in proc.stdout
    assert proc.stdout.startswith("memory: docs/memory (protocol 0.5)\nfile")
    assert "inbox: 0 candidates" in proc.stdout
    data = json.loads(run_cli("status", "--project-root", str(MC_FIXTURES / "overflow"), "--format", "json").stdout)
    files = {f["name"]: f for f in data["files"]}
    assert files["decisions.md"]["over_budget"] is True and files["decisions.md"]["budget"] == 800
    assert files["decisions.md"]["entries"] == 19  # its H2 entries
    assert data["archive_files"] == 3


def test_check_without_memory_folder(tmp_path):
    proc = run_cli("check", cwd=tmp_path)
    assert proc.returncode == 1 and "init" in proc.stderr  # as MemoryCustodian 0.9.1: a problem found, not bad input
