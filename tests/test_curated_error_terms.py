"""The curated write path's errors in the library's own terms, and on the command line as its flags.

Each error names the Memory argument at fault; the library says the argument's name, the CLI its
flag, word for word as the command line has always printed it.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest
from conftest import MC_FIXTURES

from memory_custodian import Memory
from memory_custodian.base.errors import CustodianError
from memory_custodian.cli.terms import CLI_TERMS

GITHUB_TOKEN = "ghp_" + "a1B2" * 9
AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"


def project(tmp_path) -> Memory:
    shutil.copytree(MC_FIXTURES / "nightnotes" / "docs", tmp_path / "docs")
    return Memory.open(tmp_path)


CASES = [
    ("add", dict(text="x", type="inbox", name="a"), "name",
     "inbox items go to inbox.md; --name and --area do not apply to them"),
    ("add", dict(text="x", type="constraint", area="a", name="b"), "area", "use --area or --name, not both"),
    ("add", dict(text="x", type="rule", area="a"), "area",
     "--area applies to constraint, decision, preference, tombstone entries, not rule"),
    ("add", dict(text="x", type="rule"), "name", "--name is required for a rule, such as --name output"),
    ("add", dict(text="x", type="constraint", name="n"), "name",
     "--name applies to rule, profile and area entries, not constraint"),
    ("add", dict(text="x", type="decision", reasons=[" "]), "reasons",
     "--reason is empty; give the reason text or leave the option out"),
    ("add", dict(text="x", type="constraint", reasons=["why"]), "reasons",
     "--reason and --scope apply to decision and tombstone entries, not constraint"),
    ("add", dict(text="x", type="decision", scope=" "), "scope",
     "--scope is empty; give the scope or leave the option out"),
    ("add", dict(text="x", type="decision", reasons=["ok", "# Heading"]), "reasons",
     "--reason #2 has a Markdown heading at line 1; an entry cannot contain headings — write it as plain text"),
    ("add", dict(text="x", type="decision", scope="```\nopen"), "scope",
     "--scope has a code fence opened at line 1 that never closes; close it with ```"),
    ("add", dict(text="ok", type="decision", reasons=[f"token {GITHUB_TOKEN}"]), "reasons",
     "--reason #1 contains what looks like a GitHub token at line 1 — remove it; secrets must not be stored in memory"),
    ("add", dict(text="ok", type="tombstone", scope=GITHUB_TOKEN), "scope",
     "--scope contains what looks like a GitHub token at line 1 — remove it; secrets must not be stored in memory"),
    ("compact", dict(target="../x.md"), "target",
     "--target '../x.md' must be a .md file inside the memory folder, such as decisions.md"),
    ("compact", dict(target="manifest.md"), "target", "--target 'manifest.md' is not a curated file compact can change"),
    ("compact", dict(target="nope.md"), "target", "--target 'nope.md' does not exist in the memory folder"),
    ("enable", dict(module="rules/output", paths=["src/**"]), "paths",
     "--path applies to areas only, such as: enable areas/store --path 'src/store/**'"),
    ("forget", dict(topic=AWS_KEY), "mode",
     "the topic looks like an AWS access key; a soft forget writes the topic into a tombstone — "
     "use --mode hard or --mode purge"),
    ("forget", dict(topic="redis", plan_id="abc"), "plan_id", "--plan is used with --apply: rerun with --apply --plan ID"),
    ("migrate", dict(plan_id="abc"), "plan_id", "--plan is used with --apply: rerun with --apply --plan ID"),
    ("forget", dict(topic="ab", apply=True), "allow_broad_match",
     "the topic is shorter than 4 characters — review the preview, then pass --allow-broad-match to apply; "
     "nothing was changed"),
]


def assert_phrased(error: CustodianError, field: str, cli_text: str) -> None:
    assert error.field == field
    assert re.search(r"--[a-z]", error.one_line()) is None, error.one_line()
    cli = error.one_line(CLI_TERMS)
    assert cli == cli_text or cli.endswith(": " + cli_text), cli


@pytest.mark.parametrize(("method", "kwargs", "field", "cli_text"), CASES)
def test_write_errors_name_arguments_and_read_as_flags_on_the_command_line(tmp_path, method, kwargs, field,
                                                                            cli_text):
    memory = project(tmp_path)
    with pytest.raises(CustodianError) as exc:
        getattr(memory, method)(**kwargs)
    assert_phrased(exc.value, field, cli_text)


def test_the_entry_budget_refusal_names_allow_long(tmp_path):
    with pytest.raises(CustodianError) as exc:
        project(tmp_path).add(" ".join(["word"] * 130), "decision")
    assert_phrased(exc.value, "allow_long", exc.value.one_line(CLI_TERMS))
    assert "(or pass --allow-long after review); nothing was written" in exc.value.one_line(CLI_TERMS)
    assert "(or pass allow_long after review)" in exc.value.one_line()


@pytest.mark.parametrize(("memory_dir", "cli_text"), [
    ("a\\b", "--memory-dir 'a\\\\b' must be a relative POSIX path under docs/, such as docs/memory"),
    ("/abs", "--memory-dir '/abs' must be a relative path under docs/ without '..', such as docs/memory"),
    ("notdocs/memory", "--memory-dir 'notdocs/memory' must stay under docs/, such as docs/memory"),
    ("docs/out", "--memory-dir 'docs/out' resolves outside docs/ (a symlink?); use a real folder under docs/"),
])
def test_memory_dir_errors(tmp_path, memory_dir, cli_text):
    (tmp_path / "docs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "docs" / "out")
    with pytest.raises(CustodianError) as exc:
        Memory.open(tmp_path, memory_dir=memory_dir)
    assert_phrased(exc.value, "memory_dir", cli_text)


def test_a_missing_memory_folder_suggests_init_and_the_project_root(tmp_path):
    with pytest.raises(CustodianError) as exc:
        Memory.open(tmp_path).add("x", "constraint")
    assert_phrased(exc.value, "project_root",
                   "no memory folder here (manifest.md is missing) — run `memory-custodian init` first, "
                   "or pass --project-root")
    assert "run `Memory.init` first, or pass project_root" in exc.value.one_line()


def test_a_memory_folder_that_is_a_file_names_memory_dir(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "memory").write_text("not a folder", encoding="utf-8")
    with pytest.raises(CustodianError) as exc:
        Memory.open(tmp_path).init()
    assert_phrased(exc.value, "memory_dir", "exists and is not a folder; move it away or choose another --memory-dir")


def test_mcp_names_how_the_server_was_started(tmp_path):
    pytest.importorskip("mcp")
    from memory_custodian.agents.mcp_server import TOOL_TERMS

    with pytest.raises(CustodianError) as exc:
        Memory.open(tmp_path).check_privacy()
    assert exc.value.one_line(TOOL_TERMS).endswith(
        "no memory folder here (manifest.md is missing) — run `memory-custodian init` first, "
        "or pass the server's --project-root")


def test_a_hook_names_its_flags(tmp_path, cli):
    proc = cli("hook", "--project-root", str(tmp_path), "--memory-dir", "/abs", "SessionStart", input="{}")
    assert proc.returncode == 0
    assert ("SessionStart: --memory-dir '/abs' must be a relative path under docs/ without '..', such as docs/memory "
            "(continuing without memory)") in proc.stderr
