"""`Memory.read`: routing by task, path globs and explicit requests; budgets; explain; failures."""

from __future__ import annotations

import pytest

from memory_custodian import Memory
from memory_custodian.base.errors import InvalidInput, NotFound

AREAS_INDEX = """
### Enabled areas
- `areas/store.md`: the storage layer
  - paths: `src/store/**`, `tests/test_store*.py`
- `areas/ui.md`: the web UI
  - paths: `web/**`
- `areas/ops.md`: operations
"""


@pytest.fixture
def project(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    return memory


def write(memory, name, text):
    path = memory.memory_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def edit_manifest(memory, old, new):
    path = memory.memory_dir / "manifest.md"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def with_areas(memory):
    edit_manifest(memory, "### Enabled areas\n- None enabled.\n", AREAS_INDEX)
    write(memory, "areas/store.md", "# Store\n\n- Writes go through the journal.\n")
    write(memory, "areas/ui.md", "# UI\n\n- No inline styles.\n")
    write(memory, "areas/ops.md", "# Ops\n\n- Deploy on Tuesdays.\n")


def by_module(result):
    return {m.module: m for m in result.modules}


def test_planning_pack_and_explain(project):
    result = project.read("architecture")
    assert result.canonical_task == "planning"
    assert result.loaded == ["brief.md", "decisions.md", "constraints.md", "do-not-use.md"]
    mods = by_module(result)
    assert mods["brief.md"].reason == "always"
    assert mods["decisions.md"].reason == "task"
    assert (mods["inbox.md"].disposition, mods["inbox.md"].reason) == ("skipped", "excluded-by-policy")
    assert mods["archive/"].reason == "excluded-by-policy"
    assert mods["preferences.md"].reason == "task-mismatch"
    assert result.rendered.startswith("# Memory context pack\nTask: architecture (canonical: planning)\n\n## brief.md\n\n")
    assert result.exit_code == 0 and len(result.sha256) == 64
    explain = result.explain_text()
    assert "inbox.md: skipped (excluded-by-policy)" in explain


def test_path_routing_says_which_glob_matched(project):
    with_areas(project)
    result = project.read("implementation", paths=["./src\\store\\engine.py", "web/app.ts"])
    mods = by_module(result)
    assert mods["areas/store.md"].reason == "path-glob"
    assert mods["areas/store.md"].detail == "src/store/engine.py <- src/store/**"
    assert mods["areas/ui.md"].detail == "web/app.ts <- web/**"
    assert (mods["areas/ops.md"].disposition, mods["areas/ops.md"].reason) == ("skipped", "not-requested")
    assert "## areas/store.md" in result.rendered and "## areas/ui.md" in result.rendered
    assert result.inputs["paths"] == ["src/store/engine.py", "web/app.ts"]


def test_no_path_match_and_no_path_given(project):
    with_areas(project)
    mods = by_module(project.read("planning", paths=["docs/readme.md"]))
    assert mods["areas/store.md"].reason == "no-path-match"
    assert "match none" in mods["areas/store.md"].detail
    mods = by_module(project.read("planning"))
    assert mods["areas/store.md"].detail == "no --path given"


def test_explicit_area_and_not_indexed_request(project):
    with_areas(project)
    write(project, "areas/extra.md", "# Extra\n\n- x\n")
    result = project.read("planning", areas=["ops", "areas/extra.md"])
    mods = by_module(result)
    assert mods["areas/ops.md"].reason == "explicit"
    assert mods["areas/extra.md"].disposition == "loaded"
    assert any("not listed in the manifest's module index" in w for w in result.warnings)


def test_rule_routed_by_task_metadata(project):
    edit_manifest(project, "### Enabled rules\n- None enabled.\n",
                  "### Enabled rules\n- `rules/review.md`: review rules\n  - tasks: implementation\n")
    write(project, "rules/review.md", "# Review\n\n- Two approvals.\n")
    assert by_module(project.read("debugging"))["rules/review.md"].reason == "task"
    assert by_module(project.read("planning"))["rules/review.md"].reason == "task-mismatch"


def test_budget_override_changes_packing(project):
    entries = "".join(f"## 2026-01-{i:02d} - Decision {i}\nDecision:\nUse option {i} everywhere.\n\n" for i in range(30, 0, -1))
    write(project, "decisions.md", "# Decisions\n\nEntries are newest first.\n\n" + entries)
    default = by_module(project.read("planning"))["decisions.md"]
    assert default.budget == 800 and not default.omitted
    edit_manifest(project, "- decisions.md: 800 tokens max", "- decisions.md: 60 tokens max")
    result = project.read("planning")
    packed = by_module(result)["decisions.md"]
    assert packed.budget == 60 and packed.tokens <= 60
    assert packed.omitted[0] == "2026-01-27 - Decision 27" and len(packed.omitted) == 27
    assert result.omitted_counts == {"decisions.md": 27}
    assert "## Not loaded" in result.rendered and "27 entries omitted by budget" in result.rendered


def test_oversized_first_entry_is_reported(project):
    write(project, "constraints.md", "# Constraints\n\n- " + "long " * 500 + "\n- short\n")
    result = project.read("planning")
    assert result.oversized == ["constraints.md"]
    assert "kept whole" in result.rendered


def test_missing_required_is_named_and_strict_refuses(project):
    (project.memory_dir / "constraints.md").unlink()
    result = project.read("planning")
    assert result.missing_required == ["constraints.md"] and result.exit_code == 1
    assert "## brief.md" in result.rendered
    with pytest.raises(InvalidInput) as err:
        project.read("planning", strict=True)
    assert "constraints.md" in err.value.message


def test_missing_optional_is_reported_not_an_error(project):
    result = project.read("artifact")
    assert result.skipped_optional == ["rules/output.md", "preferences.md"]
    assert result.exit_code == 0


def test_non_utf8_file_is_named(project):
    (project.memory_dir / "decisions.md").write_bytes(b"# Decisions\n\n## x\n\xff\xfe\n")
    with pytest.raises(InvalidInput) as err:
        project.read("planning")
    assert "decisions.md:4:" in err.value.one_line() and "UTF-8" in err.value.message


def test_route_escaping_through_symlink_is_refused(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.md"
    outside.write_text("# secret\n", encoding="utf-8")
    (project.memory_dir / "constraints.md").unlink()
    (project.memory_dir / "constraints.md").symlink_to(outside)
    with pytest.raises(InvalidInput) as err:
        project.read("planning")
    assert "symlink" in err.value.message


def test_no_memory_folder_suggests_init(tmp_path):
    with pytest.raises(NotFound) as err:
        Memory.open(tmp_path).read("planning")
    assert "init" in err.value.message


def test_bad_explicit_name_and_path(project):
    with pytest.raises(InvalidInput):
        project.read("planning", areas=["../x"])
    with pytest.raises(InvalidInput):
        project.read("planning", paths=["../outside.py"])


def test_names_only(project):
    result = project.read("planning", names_only=True)
    assert "Loaded:\n- brief.md\n- decisions.md" in result.rendered
    assert "# Decisions" not in result.rendered


def test_json_shape_is_stable(project):
    data = project.read("planning", query="storage").to_dict()
    assert data["inputs"] == {"task": "planning", "paths": [], "query": "storage", "areas": [], "profiles": [], "rules": []}
    for key in ("task", "canonical_task", "modules", "omissions", "warnings", "rendered", "sha256", "packed"):
        assert key in data
    again = project.read("planning", query="storage").to_dict()
    assert again == data


def test_explain_names_omitted_units_with_file_line_and_heading():
    from conftest import MC_FIXTURES

    result = Memory.open(MC_FIXTURES / "overflow").read("planning", ledger=False)
    decisions = by_module(result)["decisions.md"]
    source = (MC_FIXTURES / "overflow/docs/memory/decisions.md").read_text().splitlines()
    for ref, line in zip(decisions.omitted, decisions.omitted_lines):
        assert source[line - 1] == f"## {ref}"
    assert f"- decisions.md:{decisions.omitted_lines[0]}: {decisions.omitted[0]} (omitted-by-budget)" in result.explain_text()


def test_task_without_a_manifest_heading_is_an_error_for_that_task_only(project):
    edit_manifest(project, "### Preferences\nLoad if present:\n- preferences.md\n", "")
    with pytest.raises(InvalidInput, match=r"serves the preferences task.*add `### Preferences`"):
        project.read("preferences")
    served = project.read("planning")  # as MemoryCustodian 0.9.1: the routed tasks are still served, out loud
    assert "decisions.md" in served.loaded
    assert any("no `### ` heading under `## Load by task` for preferences" in w for w in served.warnings)
    assert "for preferences: this pack serves planning in full" in served.rendered
    result = project.read("preferences", fail_open=True)  # the hooks: what routes still loads, the problem named
    assert result.loaded == ["brief.md"]
    assert [p for p in result.problems if "serves the preferences task" in p]
    assert [f.code for f in project.check().problems if f.code.startswith("manifest")] == ["manifest-task-unrouted"]


def test_curated_tier_never_imports_click_and_read_path_stays_lean():
    import ast
    from pathlib import Path

    import memory_custodian.curated as curated

    heavy = {"click", "mcp", "sqlite3", "dataclasses", "typing", "json", "hashlib"}
    lean = {"units.py", "manifest.py", "globs.py", "reading.py"}
    for path in Path(curated.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            assert "click" not in names and "mcp" not in names, f"{path.name} imports {names}"
            # the read path imports heavy modules only inside functions, where they are needed
            if path.name in lean and node in tree.body:
                assert not heavy & set(names), f"{path.name} imports {names} at module level"


def test_lookalike_manifest_headings_are_named(project):
    from conftest import FIXTURES

    (project.memory_dir / "manifest.md").write_bytes((FIXTURES / "nasty" / "lookalike-headings-manifest.md").read_bytes())
    with pytest.raises(InvalidInput, match="only a look-alike heading"):
        project.read("planning")
    result = project.read("planning", fail_open=True)
    assert any("only a look-alike heading" in p for p in result.problems)
    assert any("only looks like a `## always load` heading (it contains U+0410)" in w for w in result.warnings)
    assert "## Warnings" in result.rendered
    codes = {(f.code, f.line) for f in project.check().findings}
    assert ("manifest-lookalike-heading", 10) in codes and ("manifest-lookalike-heading", 13) in codes
    assert ("manifest-section-missing", None) in codes


def test_an_interrupted_multi_file_write_is_said_out_loud(project):
    import json

    (project.memory_dir / ".cache" / "journal.json").write_text(json.dumps({"v": 1, "label": "forget (soft)", "changes": []}))
    result = project.read("planning")
    assert any("an interrupted `forget (soft)` left the memory folder half-applied" in w for w in result.warnings)
    (finding,) = [f for f in project.check().findings if f.code == "interrupted-write"]
    assert finding.severity == "problem" and "compact" in finding.message
