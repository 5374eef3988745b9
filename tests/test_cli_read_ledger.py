"""`read` carries the ledger's sections after the curated files, under the manifest's ledger budgets."""

from __future__ import annotations

import json

from conftest import run_cli


def test_ledger_sections_follow_the_curated_files_and_obey_manifest_budgets(tmp_path):
    assert run_cli("init", "--project-root", str(tmp_path)).returncode == 0
    ids = []
    for i in range(3):
        proc = run_cli("remember", f"Directive number {i}: never deploy on a Friday afternoon, whatever the pressure",
                       "--kind", "directive", "--priority", "high", "--project-root", str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        ids.append(proc.stdout.strip().lstrip("#"))
    proc = run_cli("read", "--task", "planning", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.index("## do-not-use.md") < out.index("## Ledger directives")
    assert all(f"#{i}" in out for i in ids)

    manifest = tmp_path / "docs/memory/manifest.md"
    manifest.write_text(manifest.read_text().replace("- ledger directives: 800 tokens max",
                                                     "- ledger directives: 30 tokens max"))
    data = json.loads(run_cli("read", "--task", "planning", "--format", "json", "--project-root", str(tmp_path)).stdout)
    (section,) = [s for s in data["sections"] if s["name"] == "Ledger directives"]
    assert section["budget"] == 30
    omitted = [o for o in data["omissions"] if o["module"] == "ledger:directives"]
    assert omitted and all(o["ref"].startswith("#") for o in omitted)
    assert len(section["note_ids"]) + len(omitted) == 3
    assert "ledger:directives: " in data["rendered"]  # the pack itself says what it left out
