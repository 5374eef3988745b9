"""`memory-custodian read` as users run it: a fresh process, exit codes, stderr, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import MC_FIXTURES, run_cli, run_cli_process, unfenced


def snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if ".cache" not in p.parts}


@pytest.fixture
def project(tmp_path):
    proc = run_cli("init", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    return tmp_path


def test_read_prints_the_pack(project):
    proc = run_cli("read", "--task", "planning", cwd=project / "docs")  # root found from a sub-folder
    assert proc.returncode == 0, proc.stderr
    # fenced as data, as the hooks hand memory to an agent
    assert proc.stdout.startswith("quoted project memory from docs/memory (data recorded earlier")
    assert "\n```memory\n# Memory context pack\nTask: planning\n\n## brief.md\n\n# Project Brief" in proc.stdout
    assert "## decisions.md" in proc.stdout and "## inbox.md" not in proc.stdout
    assert proc.stderr == ""


def test_read_explain_lists_every_module(project):
    proc = run_cli("read", "--task", "recap", "--explain", "--project-root", str(project))
    assert proc.returncode == 0
    assert "## Explain\nTask: recap -> history" in proc.stdout
    assert "- inbox.md: skipped (excluded-by-policy)" in proc.stdout
    assert "- changelog.md: missing-optional — under `### Change history / recap`" in proc.stdout


def test_read_json(project):
    proc = run_cli("read", "--task", "planning", "--query", "storage", "--format", "json", "--project-root", str(project))
    data = json.loads(proc.stdout)
    assert data["canonical_task"] == "planning" and data["inputs"]["query"] == "storage"
    import hashlib

    assert data["sha256"] == hashlib.sha256(data["rendered"].encode()).hexdigest()
    assert list(data) == sorted(data)


def test_path_routing_from_the_cli(project):
    manifest = project / "docs/memory/manifest.md"
    manifest.write_text(manifest.read_text().replace(
        "### Enabled areas\n- None enabled.\n",
        "### Enabled areas\n- `areas/store.md`: storage\n  - paths: `src/store/**`\n"))
    (project / "docs/memory/areas").mkdir()
    (project / "docs/memory/areas/store.md").write_text("# Store\n\n- Journal first.\n")
    proc = run_cli("read", "--task", "implementation", "--path", "./src/store/new_file.py", "--explain",
                   "--project-root", str(project))
    assert proc.returncode == 0, proc.stderr
    assert "## areas/store.md\n\n# Store" in proc.stdout
    assert "- areas/store.md: loaded (path-glob)" in proc.stdout
    assert "src/store/new_file.py <- src/store/**" in proc.stdout


def test_unknown_task_exit_2_names_categories(project):
    before = snapshot(project)
    proc = run_cli("read", "--task", "deploy", "--project-root", str(project))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: unknown task 'deploy'; use one of: general, planning")
    assert "aliases:" in proc.stderr and proc.stderr.count("\n") == 1
    assert snapshot(project) == before


def test_missing_required_exit_1_pack_still_printed(project):
    (project / "docs/memory/constraints.md").unlink()
    before = snapshot(project)
    proc = run_cli("read", "--task", "planning", "--project-root", str(project))
    assert proc.returncode == 1
    assert "## brief.md" in proc.stdout and "- constraints.md: missing required" in proc.stdout
    assert "constraints.md" in proc.stderr and proc.stderr.startswith("error: required memory file(s) missing")
    proc = run_cli("read", "--task", "planning", "--strict", "--project-root", str(project))
    assert proc.returncode == 2 and proc.stdout == ""
    assert "constraints.md" in proc.stderr and "--strict" in proc.stderr
    assert snapshot(project) == before


def test_malformed_manifest_exit_2_names_line(project):
    manifest = project / "docs/memory/manifest.md"
    lines = manifest.read_text().splitlines(keepends=True)
    index = lines.index("- constraints.md\n")
    lines[index] = "- ../constraints.md\n"
    manifest.write_text("".join(lines))
    before = snapshot(project)
    proc = run_cli("read", "--task", "planning", "--project-root", str(project))
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"manifest.md:{index + 1}: route '../constraints.md' must not contain" in proc.stderr
    assert snapshot(project) == before


def test_non_utf8_exit_2(project):
    (project / "docs/memory/brief.md").write_bytes(b"# Brief\n\xc3\x28\n")
    before = snapshot(project)
    proc = run_cli("read", "--task", "general", "--project-root", str(project))
    assert proc.returncode == 2 and proc.stdout == ""
    assert "brief.md:2: not valid UTF-8" in proc.stderr
    assert snapshot(project) == before


def test_no_memory_folder_suggests_init(tmp_path):
    proc = run_cli("read", "--task", "planning", cwd=tmp_path)
    assert proc.returncode == 2
    assert "memory-custodian init" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_bad_path_exit_2(project):
    proc = run_cli("read", "--task", "planning", "--path", "../x.py", "--project-root", str(project))
    assert proc.returncode == 2 and "'..'" in proc.stderr


def test_fixture_pack_over_the_cli_is_byte_identical():
    case = MC_FIXTURES / "overflow"
    expected = json.loads((case / "expected" / "planning.json").read_text())
    proc = run_cli("read", "--task", "planning", "--project-root", str(case))
    assert proc.returncode == 0
    for name, packed in expected["packed"].items():
        assert f"## {name}\n\n{packed}" in proc.stdout


def test_read_in_a_fresh_process_stays_lean_and_matches_in_process(project):
    args = ["read", "--task=implementation", "--explain", "--path", "src/x.py", "-q", "storage",
            "--project-root", str(project)]
    fresh = run_cli_process(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert fresh.returncode == 0
    imported = [line.split("|")[-1].strip() for line in fresh.stderr.splitlines() if line.startswith("import time:")]
    assert "memory_custodian.curated.pack.reading" in imported
    assert not {"click", "mcp", "sqlite3", "dataclasses", "memory_custodian.cli.ledger"} & set(imported)
    assert fresh.stdout == run_cli(*args).stdout
    for fmt_args in (["--format", "json"], ["--names-only"]):
        a = run_cli("read", "--task", "planning", *fmt_args, "--project-root", str(project))
        b = run_cli("read", "-tplanning", *fmt_args, "--project-root", str(project))
        assert a.stdout == b.stdout and a.returncode == b.returncode == 0


def test_read_help_and_usage_errors(project):
    proc = run_cli("read", "--help")
    assert proc.returncode == 0 and "--path PATH" in proc.stdout and "--query Q" in proc.stdout
    assert "memory-custodian read --task" in proc.stdout  # its example
    proc = run_cli("read", "--project-root", str(project))  # no --task: the default task, as in MemoryCustodian 0.9.1
    assert proc.returncode == 0 and unfenced(proc.stdout).startswith("# Memory context pack\nTask: default (canonical: general)")
    proc = run_cli("read", "--task", "planning", "--bogus", "--project-root", str(project))
    assert proc.returncode == 2 and proc.stderr.startswith("error: unrecognized arguments: --bogus")
