"""`read` never misses a rule silently: an unclosed fence, a symlink loop, `## Explicit only`, shared headings."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from conftest import run_cli, unfenced
from mcp.server.mcpserver.exceptions import ToolError

from memory_custodian import Memory
from memory_custodian.agents.mcp_server import build_server
from memory_custodian.curated.parse.units import pack

FENCE = "`" * 3


def call(app, tool, args):
    try:
        return asyncio.run(app.call_tool(tool, args))
    except ToolError as exc:
        return exc


@pytest.fixture
def project(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init(extended=True)
    return tmp_path


def memdir(project):
    return project / "docs" / "memory"


def edit_manifest(project, old, new):
    path = memdir(project) / "manifest.md"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def read(project, *args):
    return run_cli("read", "--project-root", str(project), *args)


def decisions_with_open_fence(project):
    """Eight decisions; the second opens a fence (line 15) that never closes."""
    entries = []
    for i in range(1, 9):
        body = (f"## 2026-07-{10 + i:02d} - Decision number {i}\nDecision:\nUse approach {i} for subsystem {i}, "
                "with all the details that matter for the team.\nReason:\nMeasured and reviewed in PR "
                f"{100 + i}; the alternative was slower by a wide margin.\n")
        if i == 2:
            body = body.replace("Reason:", f"Example:\n{FENCE}python\nrun(approach=2)\nReason:")
        entries.append(body)
    (memdir(project) / "decisions.md").write_text("# Decisions\n\nEntries are newest first.\n\n" + "\n".join(entries),
                                                  encoding="utf-8")


# ---- an unclosed code fence --------------------------------------------------------------------


def test_unclosed_fence_warns_and_names_every_entry_it_hid(project):
    decisions_with_open_fence(project)
    edit_manifest(project, "- decisions.md: 800 tokens max\n", "- decisions.md: 120 tokens max\n")
    proc = read(project, "--task", "planning", "--explain")
    assert proc.returncode == 0, proc.stderr
    warning = ("decisions.md:15 opens a code fence that never closes, so everything after it is read as one entry "
               "— close the fence")
    assert f"warning: {warning}" in proc.stderr
    pack_text, explain = proc.stdout.split("\n## Explain\n")
    assert f"## Warnings\n\n- {warning}" in pack_text
    assert "- decisions.md: 7 entries omitted by budget: 2026-07-12 - Decision number 2; " in pack_text
    assert "; and 2 more" in pack_text
    assert "- decisions.md: loaded (task) 55/120 tokens, 7 omitted" in explain
    lines = [line for line in explain.splitlines() if line.endswith("(omitted-by-budget)")]
    assert lines == [f"- decisions.md:{line}: 2026-07-{10 + i:02d} - Decision number {i} (omitted-by-budget)"
                     for i, line in zip(range(2, 9), (11, 20, 26, 32, 38, 44, 50))]

    data = json.loads(read(project, "--task", "planning", "--format", "json").stdout)
    assert data["omitted"] == {"decisions.md": 7}
    module = next(m for m in data["modules"] if m["module"] == "decisions.md")
    assert module["omitted_lines"] == [11, 20, 26, 32, 38, 44, 50]
    assert [o["ref"] for o in data["omissions"]] == module["omitted"]
    assert any(w.startswith("decisions.md:15 opens a code fence") for w in data["warnings"])

    check = run_cli("check", "--project-root", str(project))
    assert "7 entries from this line on would be omitted" in check.stdout


def test_unclosed_fence_warns_even_when_everything_fits(project):
    (memdir(project) / "constraints.md").write_text(
        f"# Constraints\n\n- Keep the API stable\n- Example:\n  {FENCE}\n  call()\n- Never log tokens\n", encoding="utf-8")
    proc = read(project, "--task", "planning")
    assert proc.returncode == 0
    assert "warning: constraints.md:5 opens a code fence that never closes" in proc.stderr
    assert "- constraints.md:5 opens a code fence that never closes" in proc.stdout
    assert "Never log tokens" in proc.stdout and "## Not loaded" not in proc.stdout


def test_bullets_hidden_by_an_unclosed_fence_are_named():
    text = (f"- first rule, long enough to use the whole budget of this little file\n- second rule\n  {FENCE}\n  x\n"
            "- third rule\n- fourth rule\n")
    packed = pack(text, 16)
    assert [ref for ref, _ in packed.omitted_entries] == ["second rule", "third rule", "fourth rule"]
    assert [line for _, line in packed.omitted_entries] == [2, 5, 6]


# ---- a symlink loop ------------------------------------------------------------------------------


def loop_core_file(project):
    path = memdir(project) / "constraints.md"
    path.unlink()
    os.symlink("constraints.md", path)
    return path, "file"


def loop_unrouted_file(project):
    path = memdir(project) / "x.md"
    os.symlink("x.md", path)
    return path, "file"


def loop_folder(project):
    path = memdir(project) / "areas"
    os.rmdir(path)
    os.symlink("areas", path)
    return path, "folder"


@pytest.mark.parametrize("make", [loop_core_file, loop_unrouted_file, loop_folder])
@pytest.mark.parametrize("command", [("read", "--task", "planning"), ("read", "--task", "planning", "--format", "json"),
                                     ("check",), ("status",)], ids=lambda c: "-".join(c[::2]))
def test_symlink_loop_is_one_line_exit_2(project, make, command):
    path, what = make(project)
    proc = run_cli(*command, "--project-root", str(project))
    assert proc.returncode == 2, proc.stderr
    if "json" in command:  # with --format json the error is one JSON object
        assert json.loads(proc.stderr) == {"error": {"exit_code": 2, "line": None, "path": str(path),
                                                     "message": f"is a symlink loop; replace it with a real {what}"}}
    else:
        assert proc.stderr == f"error: {path}: is a symlink loop; replace it with a real {what}\n"
    assert proc.stdout == ""


def test_symlink_loop_in_the_mcp_tool_names_the_path(project):
    path, _ = loop_core_file(project)
    result = call(build_server(Memory.open(project)), "memory_context", {"task": "planning"})
    assert isinstance(result, ToolError)
    assert f"{path}: is a symlink loop; replace it with a real file" in str(result)


# ---- `## Explicit only` ------------------------------------------------------------------------


def test_explicit_only_index_entries_are_never_routed(project):
    (memdir(project) / "areas" / "vendor.md").write_text("- Vendor credentials rotation runbook\n", encoding="utf-8")
    (memdir(project) / "rules" / "release.md").write_text("- Tag releases from main only\n", encoding="utf-8")
    edit_manifest(project, "### Enabled areas\n- None enabled.\n",
                  "### Enabled areas\n- `areas/vendor.md`: the vendor area\n  - paths: `src/**`\n")
    edit_manifest(project, "### Enabled rules\n- None enabled.\n",
                  "### Enabled rules\n- `rules/release.md`: releasing\n  - tasks: implementation\n")
    edit_manifest(project, "## Explicit only\n- archive/\n",
                  "## Explicit only\n- archive/\n- areas/vendor.md\n- rules/release.md\n")

    proc = read(project, "--task", "implementation", "--path", "src/a.py", "--explain")
    assert proc.returncode == 0, proc.stderr
    pack_text, explain = proc.stdout.split("\n## Explain\n")
    assert "vendor" not in pack_text.casefold() and "Tag releases" not in pack_text
    assert ("- areas/vendor.md: skipped (explicit-only) — listed under `## Explicit only` (paths and tasks never "
            "load it; it would have matched src/a.py <- src/**); use --area vendor") in explain
    assert "- rules/release.md: skipped (explicit-only) — listed under `## Explicit only`; use --rule release" in explain

    asked = read(project, "--task", "implementation", "--path", "src/a.py", "--area", "vendor", "--rule", "release")
    assert "## areas/vendor.md" in asked.stdout and "## rules/release.md" in asked.stdout


# ---- omitted entries that share a heading ----------------------------------------------------


def test_omitted_entries_with_the_same_heading_keep_their_own_lines(project):
    (memdir(project) / "do-not-use.md").write_text(
        "# Do Not Use / Tombstones\n\n## Tombstone: pickle\nDo not use pickle for the cache files; they must be "
        "readable by the Go service and safe to load.\n\n## Tombstone: pickle\nDo not use pickle for IPC either; "
        "messages cross a trust boundary.\n\n## Tombstone: pickle\nDo not use pickle in the plugin API.\n",
        encoding="utf-8")
    edit_manifest(project, "- do-not-use.md: 400 tokens max\n", "- do-not-use.md: 30 tokens max\n")
    proc = read(project, "--task", "planning", "--explain")
    assert unfenced(proc.stdout).endswith("Omitted by budget:\n- do-not-use.md:6: Tombstone: pickle (omitted-by-budget)\n"
                                "- do-not-use.md:9: Tombstone: pickle (omitted-by-budget)\n")
    data = json.loads(read(project, "--task", "planning", "--format", "json").stdout)
    assert next(m for m in data["modules"] if m["module"] == "do-not-use.md")["omitted_lines"] == [6, 9]
