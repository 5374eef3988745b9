"""Manifest lines that used to be dropped without a word: malformed module metadata, budgets that are
not `N tokens max`, a manifest without its routing sections; and line numbers counted on `\\n` only.

Bad input is one line naming manifest.md and the line, exit 2, nothing written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from memory_custodian.base.errors import InvalidInput
from memory_custodian.cli.terms import CLI_TERMS
from memory_custodian.curated.manifest.reader import parse_manifest

INDEX_NONE = "### Enabled areas\n- None enabled.\n"
STORE_ENTRY = "### Enabled areas\n- `areas/store.md`: the storage layer\n"


@pytest.fixture
def project(tmp_path):
    proc = run_cli("init", "--extended", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    return tmp_path


def manifest_path(project: Path) -> Path:
    return project / "docs" / "memory" / "manifest.md"


def edit_manifest(project: Path, old: str, new: str) -> str:
    path = manifest_path(project)
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    text = text.replace(old, new)
    path.write_bytes(text.encode("utf-8"))
    return text


def line_of(text: str, needle: str) -> int:
    """1-based line of `needle`, counting `\\n` only (as an editor and `grep -n` do)."""
    return text[: text.index(needle)].count("\n") + 1


def snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".cache" not in p.parts}


def refused(project: Path, line: int | None, *fragments: str, args=("--task", "planning")) -> str:
    """`read` exits 2 with one error line naming manifest.md (and `line`), and writes nothing."""
    before = snapshot(project)
    proc = run_cli("read", *args, "--project-root", str(project))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    [message] = proc.stderr.splitlines()
    where = f"manifest.md:{line}: " if line is not None else "manifest.md: "
    assert message.startswith("error: ") and where in message, message
    for fragment in fragments:
        assert fragment in message, message
    assert snapshot(project) == before
    return message


# ---- metadata under a module-index entry ---------------------------------------------------------

BAD_METADATA = [
    ("\t- paths: `src/store/**`", "indented with a tab"),
    (" - paths: `src/store/**`", "indented one space"),
    ("  - Paths: `src/store/**`", "`Paths` is not lowercase"),
    ("  - paths = `src/store/**`", "`=` instead of `:`"),
    ("  + paths: `src/store/**`", "a `+` bullet"),
    ("  paths: `src/store/**`", "no `- ` bullet"),
    ("  -paths: `src/store/**`", "not one space after the bullet"),
    ("  - paths : `src/store/**`", "a space before the colon"),
    ("  - Tasks: implementation", "`Tasks` is not lowercase"),
    ("\t- activation: path", "indented with a tab"),
]


@pytest.mark.parametrize("meta,fault", BAD_METADATA, ids=[m for m, _ in BAD_METADATA])
def test_malformed_module_metadata_is_refused_naming_the_line(project, meta, fault):
    (project / "docs" / "memory" / "areas" / "store.md").write_text("- Every put appends to the journal first\n")
    edit_manifest(project, INDEX_NONE, STORE_ENTRY + "  - paths: `src/store/**`\n")
    proc = run_cli("read", "--task", "implementation", "--path", "src/store/engine.py", "--explain",
                   "--project-root", str(project))
    assert proc.returncode == 0 and "areas/store.md: loaded (path-glob)" in proc.stdout  # the form that reads

    text = edit_manifest(project, "  - paths: `src/store/**`\n", meta + "\n")
    line = line_of(text, meta + "\n")
    message = refused(project, line, fault, args=("--task", "implementation", "--path", "src/store/engine.py"))
    assert "write it as `  - " in message
    check = run_cli("check", "--project-root", str(project))
    assert check.returncode == 1  # a problem check found (0.9.1's exit code); `read` is what refuses it
    assert f"manifest.md:{line}: problem: manifest-invalid: cannot read module metadata ({fault}" in check.stdout


def test_unknown_metadata_key_in_any_case_is_refused(project):
    (project / "docs" / "memory" / "areas" / "store.md").write_text("- x\n")
    text = edit_manifest(project, INDEX_NONE, STORE_ENTRY + "  - Owner: storage team\n")
    refused(project, line_of(text, "  - Owner"), "unknown module metadata 'Owner'", "paths, tasks, activation")


def test_star_or_plus_module_entries_are_refused(project):
    (project / "docs" / "memory" / "areas" / "store.md").write_text("- x\n")
    text = edit_manifest(project, INDEX_NONE, "### Enabled areas\n+ `areas/store.md`: the storage layer\n")
    refused(project, line_of(text, "+ `areas/store.md`"), "module entries are `- ` bullets")


def test_free_text_under_an_entry_is_kept_but_check_names_it(project):
    """Prose or a link under an entry is not metadata: read still works, `check` says it is ignored."""
    (project / "docs" / "memory" / "areas" / "store.md").write_text("- Every put appends to the journal first\n")
    text = edit_manifest(project, INDEX_NONE, STORE_ENTRY + "  - paths: `src/store/**`\n"
                         "  covers the journal and the compactor\n  - see https://example.com/store\n")
    proc = run_cli("read", "--task", "implementation", "--path", "src/store/x.py", "--explain", "--project-root", str(project))
    assert proc.returncode == 0, proc.stderr
    assert "areas/store.md: loaded (path-glob)" in proc.stdout
    check = run_cli("check", "--project-root", str(project))
    for needle in ("  covers the journal", "  - see https"):
        assert f"manifest.md:{line_of(text, needle)}: warning: manifest-ignored-line: ignored text under a module entry" \
            in check.stdout, check.stdout


# ---- budgets -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["20", "2000 max", "2000 tok max", "", "tokens max", "max 300", "1,000 tokens max"])
def test_unreadable_budget_is_refused_with_the_expected_form(project, value):
    text = edit_manifest(project, "- do-not-use.md: 400 tokens max\n", f"- do-not-use.md: {value}\n".replace(": \n", ":\n"))
    refused(project, line_of(text, "- do-not-use.md:"), "cannot read budget", "for do-not-use.md", "`N tokens max`")


def test_budget_notes_without_numbers_are_still_notes(project):
    text = edit_manifest(project, "- do-not-use.md: 400 tokens max\n", "- do-not-use.md: 20\n")
    m = parse_manifest(text.replace("- do-not-use.md: 20\n", "- do-not-use.md: memory maintenance only\n"), complete=True)
    assert m.budget_for("do-not-use.md") == 400 and m.budget_for("inbox.md") is None
    assert m.budget_for("preferences.md") == 300  # `300 tokens max, if present`, as 0.9.1 writes it
    with pytest.raises(InvalidInput) as err:
        parse_manifest(text)
    assert err.value.line == line_of(text, "- do-not-use.md: 20")


# ---- a manifest that cannot route anything -------------------------------------------------------

def test_check_points_at_a_heading_that_nearly_names_a_routing_section(project):
    text = edit_manifest(project, "## Always load\n", "## Always load:\n")
    check = run_cli("check", "--project-root", str(project))
    assert check.returncode == 1  # a problem check found (0.9.1's exit code); `read` is what refuses it
    assert (f"manifest.md:{line_of(text, '## Always load:')}: problem: manifest-section-missing: "
            "this heading is not `## Always load`") in check.stdout


@pytest.mark.parametrize("case", ["empty", "no-routing", "colon", "no-task-routes"])
def test_a_whole_manifest_without_routing_sections_is_refused(project, case):
    text = manifest_path(project).read_text(encoding="utf-8")
    start, end = text.index("## Always load"), text.index("## Optional module index")
    bad = {"empty": "", "no-routing": text[:start] + text[end:], "colon": text.replace("## Always load\n", "## Always load:\n"),
           "no-task-routes": text.replace("## Load by task\n", "")}[case]
    parse_manifest(bad, "manifest.md")  # a fragment (tests, migrate) still parses
    with pytest.raises(InvalidInput) as err:
        parse_manifest(bad, "docs/memory/manifest.md", complete=True)
    message = err.value.one_line()
    if case == "colon":
        assert err.value.line == line_of(bad, "## Always load:") and "write it exactly `## Always load`" in message
    elif case == "no-task-routes":
        assert err.value.line is None and "no `## Load by task` section" in message and "migrate" in message
    else:
        assert message.startswith("docs/memory/manifest.md: no `## Always load` and no `## Load by task` section")
        # the library says its own verb; the command line says its command
        assert "`Memory.init`" in message and "`memory-custodian init`" in err.value.one_line(CLI_TERMS)


@pytest.mark.parametrize("text", ["", "# Memory\n", "# Memory\n\n## Always load:\n- brief.md\n"])
def test_a_manifest_that_routes_nothing_is_an_error(project, text):
    """An empty or truncated manifest (a bad merge) over curated files is refused, naming what is
    missing; `check` exits 1."""
    manifest_path(project).write_text(text, encoding="utf-8")
    always = ("manifest.md:3: this heading is not `## Always load`" if "Always load:" in text
              else "no `## Always load` section, so no file is loaded for every task")
    proc = run_cli("read", "--task", "planning", "--project-root", str(project))
    assert proc.returncode == 2 and proc.stdout == "" and always in proc.stderr
    check = run_cli("check", "--project-root", str(project))
    assert check.returncode == 1 and "no `## Load by task` section, so no task loads anything" in check.stdout


@pytest.mark.parametrize("text", ["", "# Memory\n"])
def test_a_ledger_only_stub_manifest_still_reads_under_a_warning(project, text):
    """With the brief as the only curated file (a ledger-only project) a manifest without routing
    sections still reads, for the ledger's sake, every missing section named on stderr and in the pack."""
    for name in ("decisions.md", "constraints.md", "do-not-use.md", "inbox.md", "preferences.md", "changelog.md"):
        (project / "docs" / "memory" / name).unlink()
    manifest_path(project).write_text(text, encoding="utf-8")
    for task in ("general", "planning"):
        proc = run_cli("read", "--task", task, "--project-root", str(project))
        assert proc.returncode == 0, proc.stderr
        assert "## Warnings" in proc.stdout
        assert "no `## Load by task` section, so no task loads anything" in proc.stdout
        assert "no `## Load by task` section" in proc.stderr
        always = "no `## Always load` section, so no file is loaded for every task"
        assert always in proc.stdout and always in proc.stderr
        assert "no `### ` heading under `## Load by task`" not in proc.stdout  # said once, not twice


# ---- line numbers --------------------------------------------------------------------------------

def test_error_lines_count_newlines_only(project):
    edit_manifest(project, "Loading map for local project memory.",
                  "Loading map for local project memory.\u2028Second part\u0085third\x0cfourth\x1cfifth.")
    text = edit_manifest(project, "Load:\n- decisions.md\n- constraints.md\n- do-not-use.md\n\n### Impl",
                         "Load:\n- decisions.md (core)\n- constraints.md\n- do-not-use.md\n\n### Impl")
    refused(project, line_of(text, "- decisions.md (core)"), "route bullet")
    crlf = text.replace("- decisions.md (core)", "- decisions.md").replace("\n", "\r\n")
    m = parse_manifest(crlf, complete=True)  # CRLF lines read as their LF twins
    assert [r.module for r in m.routes_for("planning")] == ["brief.md", "decisions.md", "constraints.md", "do-not-use.md"]
    assert m.always[0].line == line_of(text, "- brief.md")


def test_writers_keep_a_line_with_a_unicode_line_separator_whole(project):
    """`enable` and `migrate` rewrite the manifest line by line: a U+2028 inside a line stays
    there (split on it, it became a real line break in the file)."""
    text = edit_manifest(project, "Loading map for local project memory.",
                         "Loading map for local project memory.\u2028Second part\u0085third.")
    (project / "docs" / "memory" / "areas" / "store.md").write_text("- Every put appends first\n", encoding="utf-8")
    proc = run_cli("enable", "areas/store", "--path", "src/store/**", "--project-root", str(project))
    assert proc.returncode == 0, proc.stderr
    after = manifest_path(project).read_text(encoding="utf-8")
    kept = "Loading map for local project memory.\u2028Second part\u0085third. Load only"
    line = text[text.index(kept):].split("\n", 1)[0]
    assert line in after.split("\n")  # the same line, not broken in two
    proc = run_cli("migrate", "--project-root", str(project))
    assert proc.returncode == 0, proc.stderr
    assert kept in manifest_path(project).read_text(encoding="utf-8")


@pytest.mark.parametrize("old,new,said", [
    ("## Always load\n", "## Always loaded\n", "this heading is not `## Always load`"),
    ("### Implementation / execution / debugging\n", "### Implementaton\n",
     "did you mean `### Implementation / execution / debugging`?"),
])
def test_a_misspelt_heading_is_an_error_that_says_what_was_meant(project, old, new, said):
    path = manifest_path(project)
    path.write_text(path.read_text().replace(old, new), encoding="utf-8")
    check = run_cli("check", "--project-root", str(project))
    assert check.returncode == 1 and said in check.stdout
    read = run_cli("read", "--task", "implementation", "--project-root", str(project))
    assert read.returncode == 2 and read.stdout == "" and read.stderr.count("\n") == 1 and "manifest.md:" in read.stderr
