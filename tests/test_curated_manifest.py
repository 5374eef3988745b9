"""The manifest parser, task aliases, budgets, module index, and path globs."""

from __future__ import annotations

import pytest
from conftest import MC_FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_custodian.base.errors import InvalidInput
from memory_custodian.curated.manifest import globs
from memory_custodian.curated.manifest.reader import parse_manifest
from memory_custodian.curated.manifest.routing import (
    CANONICAL_TASKS,
    TASK_ALIASES,
    budget_for,
    canonical_task,
    validate_route_path,
)
from memory_custodian.curated.write.templates import MANIFEST

DOGFOOD = (MC_FIXTURES / "dogfood" / "docs" / "memory" / "manifest.md").read_text(encoding="utf-8")


def names(routes):
    return [(r.module, r.required) for r in routes]


def test_dogfood_manifest_routes():
    m = parse_manifest(DOGFOOD, "manifest.md")
    assert m.metadata["protocol_version"] == "0.5"
    assert names(m.always) == [("brief.md", True)]
    assert names(m.routes_for("implementation")) == [
        ("brief.md", True), ("decisions.md", True), ("constraints.md", True), ("do-not-use.md", True),
        ("preferences.md", False)]
    assert names(m.routes_for("artifact")) == [
        ("brief.md", True), ("do-not-use.md", True), ("rules/output.md", False), ("preferences.md", False)]
    assert names(m.routes_for("default")) == [("brief.md", True)]
    assert m.explicit_only == ["archive/"]
    assert m.budget_for("decisions.md") == 800 and m.budget_for("inbox.md") is None
    assert m.budget_for("rules/x.md") == 400 and m.budget_for("manifest.md") is None


@pytest.mark.parametrize("alias", sorted(TASK_ALIASES))
def test_every_alias_is_canonical(alias):
    assert canonical_task(alias.upper()) in CANONICAL_TASKS


def test_each_memorycustodian_alias_maps_to_its_task():
    expected = {"architecture": "planning", "refactoring": "planning", "execution": "implementation",
                "debugging": "implementation", "output": "artifact", "recap": "history", "status": "history",
                "compact": "maintenance", "forget": "maintenance", "default": "general", "general": "general"}
    assert {k: canonical_task(k) for k in expected} == expected


def test_unknown_task_names_categories_and_aliases():
    with pytest.raises(InvalidInput) as err:
        canonical_task("deploy")
    message = err.value.one_line()
    assert "'deploy'" in message and "planning" in message and "recap" in message and "forget" in message


def test_dedupe_keeps_first_position_and_required_wins():
    text = "## Always load\n- brief.md\n\n## Load by task\n\n### Planning\nLoad if present:\n- x.md\nLoad:\n- brief.md\n- x.md\n"
    m = parse_manifest(text)
    assert names(m.routes_for("planning")) == [("brief.md", True), ("x.md", True)]


def test_first_matching_heading_wins_and_folders_are_skipped():
    text = "## Load by task\n### Debugging notes\nLoad:\n- a.md\n- archive/\n### Implementation\nLoad:\n- b.md\n"
    m = parse_manifest(text)
    assert names(m.routes_for("implementation")) == [("a.md", True)]


def test_bullets_before_a_load_line_are_required():
    m = parse_manifest("## Load by task\n### Recap\n- a.md\nLoad if present:\n- b.md\n")
    assert names(m.routes_for("recap")) == [("a.md", True), ("b.md", False)]


def test_template_manifest_parses_and_matches_fixture_routes():
    from memory_custodian.curated.write.templates import render

    m = parse_manifest(render("manifest.md", date="2026-01-01", memory_dir="docs/memory"))
    d = parse_manifest(DOGFOOD)
    for task in CANONICAL_TASKS:
        assert names(m.routes_for(task)) == names(d.routes_for(task))
    assert "{" not in MANIFEST.replace("{protocol_version}", "").replace("{package_version}", "")


def test_budget_overrides_globs_unbudgeted_and_ledger():
    text = (
        "## Context budget\n- decisions.md: 1200 tokens max\n- areas/*.md: 900 tokens max per file, if present\n"
        "- brief.md: unbudgeted\n- inbox.md: memory maintenance only\n- ledger directives: 600 tokens max\n"
        "- ledger recall: 150 tokens max\n"
    )
    m = parse_manifest(text)
    assert m.budget_for("decisions.md") == 1200
    assert m.budget_for("areas/store.md") == 900
    assert m.budget_for("brief.md") is None
    assert m.budget_for("inbox.md") is None
    assert m.budget_for("constraints.md") == 400
    assert m.ledger_budgets == {"directives": 600, "recall": 150}
    assert budget_for("profiles/git.md") == 500 and budget_for("areas/a.md", m) == 900


def test_module_index_with_paths_tasks_and_activation():
    text = (
        "## Optional module index\nDiscover optional memory.\n\n### Enabled rules\n"
        "- `rules/output.md`: output rules\n  - tasks: artifact, debugging\n\n### Enabled profiles\n- None enabled.\n\n"
        "### Enabled areas\n- `areas/store.md`: storage layer\n  - paths: `src/store/**`, `tests/test_store*.py`\n"
        "- areas/ui.md: the UI\n  - paths: `web/**`\n  - activation: explicit-only\n"
    )
    m = parse_manifest(text)
    out, store, ui = m.index
    assert (out.kind, out.tasks, out.auto_task) == ("rules", ("artifact", "implementation"), True)
    assert (store.module, store.paths, store.auto_path, store.line) == (
        "areas/store.md", ("src/store/**", "tests/test_store*.py"), True, 12)
    assert ui.paths == ("web/**",) and not ui.auto_path


MALFORMED = [
    ("## Load by task\n### Planning\n- /etc/passwd.md\n", 3, "relative"),
    ("## Load by task\n### Planning\n- ../secret.md\n", 3, "'..'"),
    ("## Load by task\n### Planning\n- notes.txt\n", 3, ".md"),
    ("## Load by task\n### Planning\n- a.md b.md\n", 3, "one file"),
    ("## Load by task\n- a.md\n", 2, "outside a task heading"),
    ("## Always load\n- ..\\x.md\n", 2, "relative"),
    ("## Context budget\n- decisions.md: about 800 tokens\n", 2, "N tokens max"),
    ("## Context budget\n- decisions: 800 tokens max\n", 2, "budget key"),
    ("## Context budget\n- ledger rumours: 10 tokens max\n", 2, "unknown ledger section"),
    ("## Optional module index\n### Enabled areas\n- `rules/x.md`: wrong folder\n", 3, "not a file directly in areas/"),
    ("## Optional module index\n### Enabled areas\n- `areas/x.md`: x\n  - paths: `src/**x`\n", 4, "whole segment"),
    ("## Optional module index\n### Enabled areas\n- `areas/x.md`: x\n  - colour: red\n", 4, "unknown module metadata"),
    ("## Optional module index\n### Enabled rules\n- `rules/x.md`: x\n  - tasks: deploy\n", 4, "unknown task"),
    ("## Optional module index\n### Enabled widgets\n", 2, "unknown module index subsection"),
    ("## Always load\n- brief.md\n## Always load\n- x.md\n", 3, "duplicate"),
    ("## Always load\n```\n- brief.md\n", 2, "never closed"),
]


@pytest.mark.parametrize("text,line,fragment", MALFORMED)
def test_malformed_manifest_names_the_line(text, line, fragment):
    with pytest.raises(InvalidInput) as err:
        parse_manifest(text, "docs/memory/manifest.md")
    assert err.value.line == line
    assert err.value.one_line().startswith(f"docs/memory/manifest.md:{line}: ")
    assert fragment in err.value.message


def test_fenced_lines_in_manifest_are_not_routes():
    m = parse_manifest("## Always load\n- brief.md\n```\n- not-a-route.md\n```\n")
    assert names(m.always) == [("brief.md", True)]


def test_validate_route_path():
    assert validate_route_path("rules/output.md") == "rules/output.md"
    for bad in ("", "/a.md", "a/../b.md", "C:x.md", "a\\b.md", "a.txt", "a//b.md", "./a.md"):
        with pytest.raises(InvalidInput):
            validate_route_path(bad)


@pytest.mark.parametrize("pattern,path,hit", [
    ("src/*.py", "src/store.py", True),
    ("src/*.py", "src/a/store.py", False),
    ("src/**", "src/a/b/c.py", True),
    ("src/**", "src", False),
    ("src/**/test_?.py", "src/test_a.py", True),
    ("src/**/test_?.py", "src/x/y/test_b.py", True),
    ("src/**/test_?.py", "src/x/test_bb.py", False),
    ("**/*.md", "README.md", True),
    ("docs/a.b", "docs/aXb", False),
])
def test_glob_match(pattern, path, hit):
    assert globs.glob_match(pattern, path) is hit


@pytest.mark.parametrize("bad", ["", "/abs/**", "a\\b", "a/**b", "a/[ab]", "a//b", "../x"])
def test_invalid_globs(bad):
    with pytest.raises(InvalidInput):
        globs.validate_glob(bad)


def test_normalize_path(tmp_path):
    assert globs.normalize_path("./src\\store.py", tmp_path) == "src/store.py"
    assert globs.normalize_path("src//new/file.py", tmp_path) == "src/new/file.py"  # need not exist
    assert globs.normalize_path(str(tmp_path / "a" / "b.py"), tmp_path) == "a/b.py"
    for bad in ("../x.py", "/elsewhere/x.py", "", "."):
        with pytest.raises(InvalidInput):
            globs.normalize_path(bad, tmp_path)
    (tmp_path / "link").symlink_to("/tmp")
    with pytest.raises(InvalidInput) as err:
        globs.normalize_path("link/x.py", tmp_path)
    assert "symlink" in err.value.message


def test_template_budgets_the_ledger_sections_with_the_ledger_defaults():
    from memory_custodian.curated.write.templates import render
    from memory_custodian.ledger.pack_sections import DEFAULT_BUDGETS

    m = parse_manifest(render("manifest.md", date="2026-01-01", memory_dir="docs/memory"))
    assert m.ledger_budgets == DEFAULT_BUDGETS


LINES = st.sampled_from([
    "## Always load", "## Load by task", "## Optional module index", "## Context budget", "## Explicit only",
    "### Planning", "### Implementation / debugging", "### Enabled areas", "### Enabled rules", "### Nonsense",
    "Load:", "Also load:", "Load if present:", "- brief.md", "- `rules/output.md`: x", "  - paths: `src/**`",
    "  - tasks: planning", "- decisions.md: 800 tokens max", "- ledger recall: 5 tokens max", "- archive/",
    "- ../x.md", "- a b", "```", "prose line", "", "# Title", "- None enabled.", "  - colour: red",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=25))
def test_parser_either_parses_or_raises_invalid_input_with_a_line(lines):
    text = "\n".join(lines) + "\n"
    try:
        m = parse_manifest(text, "manifest.md")
    except InvalidInput as exc:
        assert exc.line is not None and 1 <= exc.line <= len(lines)
        return
    for task in CANONICAL_TASKS:
        for route in m.routes_for(task):
            assert validate_route_path(route.module) == route.module


# The hot manifest lines are read with string operations; they must agree with the regexes they replace.
REGEX_TEXT = st.text(alphabet=st.sampled_from("- `:ab.md0129 tokenTOKENSmaxMAX_\t,"), max_size=30)


@settings(max_examples=400, deadline=None)
@given(REGEX_TEXT)
def test_string_readers_agree_with_their_regexes(text):
    import re

    from memory_custodian.curated.manifest.lines import _budget_amount, _bullet_path, _field
    from memory_custodian.curated.manifest.routing import _safe_segment

    m = re.match(r"^- `?([^`\s]+?)`?\s*$", text)
    assert _bullet_path(text) == (m.group(1) if m else None)
    m = re.match(r"^- ([^:]+?):\s*(.*)$", text)
    assert _field(text) == ((m.group(1), m.group(2)) if m else None)
    m = re.match(r"^(\d+)\s+tokens?\s+max\b", text, re.I)
    assert _budget_amount(text) == (int(m.group(1)) if m else None)
    assert _safe_segment(text) == bool(re.match(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$", text))


def test_folder_budget_applies_to_its_files():
    m = parse_manifest("## Context budget\n- rules/: 250 tokens max per file\n- archive/: explicit only\n")
    assert m.budget_for("rules/output.md") == 250
    assert m.budget_for("archive/old.md") is None


SEG = st.text(alphabet=st.sampled_from("ab.*?"), min_size=1, max_size=4).filter(lambda s: s not in (".", "..") and "**" not in s)
PSEG = st.text(alphabet=st.sampled_from("ab."), min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))


@settings(max_examples=300, deadline=None)
@given(st.lists(SEG, min_size=1, max_size=3), st.lists(PSEG, min_size=1, max_size=4), st.integers(0, 3))
def test_glob_match_agrees_with_segmentwise_fnmatch(pattern_parts, path_parts, star_at):
    from fnmatch import fnmatchcase

    path = "/".join(path_parts)
    pattern = "/".join(pattern_parts)
    expected = len(pattern_parts) == len(path_parts) and all(
        fnmatchcase(p, g) for p, g in zip(path_parts, pattern_parts))
    assert globs.glob_match(pattern, path) is expected
    # `**` as a whole segment matches any number of segments, including none — except a trailing
    # `**`, which (as in .gitignore) matches everything inside a folder but not the folder itself
    parts = list(pattern_parts)
    at = min(star_at, len(parts))
    parts.insert(at, "**")
    deep = "/".join(parts)
    if expected:
        if at == len(pattern_parts):
            assert not globs.glob_match(deep, path) and globs.glob_match(deep, path + "/x/y")
        else:
            assert globs.glob_match(deep, path)
            assert globs.glob_match(deep, "/".join(path_parts[:at] + ["x", "y"] + path_parts[at:]))
