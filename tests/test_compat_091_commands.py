"""MemoryCustodian 0.9.1 habits: its commands, options and exit codes on the folders it writes.

Each test runs on a copy of a recorded 0.9.1 folder (no `.cache/`, no `.gitattributes`, as 0.9.1
leaves a project) and checks the exit code and the bytes on disk.
"""

from __future__ import annotations

import pytest
from test_compat_091_data import folder, mc, tree

FIXTURES = ("dogfood", "nightnotes", "overflow")
BLOCK_091 = ("<!-- memory-custodian:start -->\n## MemoryCustodian\n\nThis project uses MemoryCustodian for local "
             "project memory.\n\nBefore substantial work:\n\n1. Read `docs/memory/manifest.md`.\n2. Read "
             "`docs/memory/brief.md`.\n<!-- memory-custodian:end -->\n")


# ---- nothing but a write writes ----------------------------------------------------------------

@pytest.mark.parametrize("fixture", FIXTURES)
def test_previews_read_check_and_status_leave_a_091_folder_byte_for_byte(tmp_path, fixture):
    root = folder(tmp_path, fixture)
    before = tree(root)
    for args in (("read",), ("read", "--task", "planning", "--explain"), ("check",), ("status",), ("compact",),
                 ("compact", "--target", "decisions.md"), ("compact", "--target", "changelog.md"),
                 ("forget", "Python", "--mode", "purge"), ("migrate",), ("init", "--replace-existing")):
        if fixture == "nightnotes" and "changelog.md" in args:
            continue
        proc = mc(root, *args)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        assert tree(root) == before, args


def test_an_apply_with_nothing_to_do_writes_nothing_either(tmp_path):
    root = folder(tmp_path, "dogfood")
    before = tree(root)
    assert mc(root, "compact", "--apply").returncode == 0
    assert mc(root, "migrate", "--apply").returncode == 0
    assert tree(root) == before


# ---- agent block ---------------------------------------------------------------------------------

def test_init_agent_keeps_a_091_block_and_adds_no_second_one(tmp_path):
    root = folder(tmp_path)
    agents = root / "AGENTS.md"
    agents.write_text("# Agent Instructions\n\n" + BLOCK_091 + "\n## Mine\nkeep\n", encoding="utf-8")
    before = agents.read_bytes()
    proc = mc(root, "init", "--agent", "codex")
    assert proc.returncode == 0, proc.stderr
    assert "kept      AGENTS.md (its MemoryCustodian 0.9 block" in proc.stdout
    assert agents.read_bytes() == before


def test_force_agent_replaces_the_091_block_in_place_and_remove_takes_it_out(tmp_path):
    root = folder(tmp_path)
    agents = root / "AGENTS.md"
    agents.write_text("# Agent Instructions\n\n" + BLOCK_091 + "\n## Mine\nkeep\n", encoding="utf-8")
    assert mc(root, "init", "--agent", "codex", "--force-agent").returncode == 0
    text = agents.read_text(encoding="utf-8")
    assert "memory-custodian:start" not in text and text.count("<!-- memory-custodian:begin") == 1
    assert text.startswith("# Agent Instructions\n\n<!-- memory-custodian:begin")
    assert text.endswith("<!-- memory-custodian:end -->\n\n## Mine\nkeep\n")
    again = agents.read_bytes()
    assert mc(root, "init", "--agent", "codex", "--force-agent").returncode == 0
    assert agents.read_bytes() == again  # idempotent
    assert mc(root, "init", "--agent", "codex", "--remove").returncode == 0
    assert agents.read_text(encoding="utf-8") == "# Agent Instructions\n\n## Mine\nkeep\n"


def test_remove_takes_out_a_091_block_we_never_replaced(tmp_path):
    root = folder(tmp_path)
    claude = root / "CLAUDE.md"
    claude.write_text("# Agent Instructions\n\n" + BLOCK_091, encoding="utf-8")
    assert mc(root, "init", "--agent", "claude", "--remove").returncode == 0
    assert claude.read_text(encoding="utf-8") == "# Agent Instructions\n"


@pytest.mark.parametrize("text", ["# A\n\n<!-- memory-custodian:start -->\n",
                                  "# A\n\n" + BLOCK_091 + "\n" + BLOCK_091])
def test_a_malformed_or_doubled_091_block_is_refused_with_exit_2_and_nothing_written(tmp_path, text):
    root = folder(tmp_path)
    (root / "GEMINI.md").write_text(text, encoding="utf-8")
    before = tree(root)
    proc = mc(root, "init", "--with-gemini")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "GEMINI.md" in proc.stderr and "MemoryCustodian managed block" in proc.stderr
    assert tree(root) == before


def test_with_gemini_is_agent_gemini(tmp_path):
    root = folder(tmp_path)
    proc = mc(root, "init", "--with-gemini")
    assert proc.returncode == 0, proc.stderr
    assert "<!-- memory-custodian:begin" in (root / "GEMINI.md").read_text(encoding="utf-8")
    assert not (root / "AGENTS.md").exists() and not (root / "CLAUDE.md").exists()


# ---- init --repair, --replace-existing -------------------------------------------------------

MANIFEST_NO_META = ("# Memory Manifest\n\n<!-- our own comment -->\n\n## Always load\n- brief.md\n\n"
                    "## Load by task\n\n### Planning / architecture / refactoring\nLoad:\n- decisions.md\n")


def test_init_repair_adds_the_missing_metadata_and_keeps_every_curated_file_and_comment(tmp_path):
    root = folder(tmp_path)
    mem = root / "docs/memory"
    (mem / "manifest.md").write_text(MANIFEST_NO_META, encoding="utf-8")
    curated = {p.name: p.read_bytes() for p in mem.glob("*.md") if p.name != "manifest.md"}
    proc = mc(root, "init", "--repair")
    assert proc.returncode == 0, proc.stderr
    assert "repaired docs/memory/manifest.md" in proc.stdout
    manifest = (mem / "manifest.md").read_text(encoding="utf-8")
    assert "- protocol_version: 0.5" in manifest and "<!-- our own comment -->" in manifest
    assert manifest.index("## MemoryCustodian Protocol") < manifest.index("## Always load")
    assert {p.name: p.read_bytes() for p in mem.glob("*.md") if p.name != "manifest.md"} == curated
    assert mc(root, "check").returncode == 0
    again = tree(root)
    assert mc(root, "init", "--repair").returncode == 0 and tree(root) == again


def test_init_repair_keeps_unknown_metadata(tmp_path):
    root = folder(tmp_path)
    manifest = root / "docs/memory/manifest.md"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(
        "- protocol_version: 0.5\n", "- protocol_version: 0.5\n- team_owner: storage\n"), encoding="utf-8")
    assert mc(root, "init", "--repair").returncode == 0
    assert "- team_owner: storage\n" in manifest.read_text(encoding="utf-8")


@pytest.mark.parametrize("version", ["0.7", "banana"])
def test_init_repair_refuses_a_newer_or_invalid_protocol_without_writing(tmp_path, version):
    root = folder(tmp_path)
    manifest = root / "docs/memory/manifest.md"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("protocol_version: 0.5",
                                                                     f"protocol_version: {version}"), encoding="utf-8")
    before = tree(root)
    proc = mc(root, "init", "--repair")
    assert proc.returncode == 2 and "manifest.md:" in proc.stderr
    assert tree(root) == before


def test_init_replace_existing_previews_then_applies(tmp_path):
    root = folder(tmp_path)
    before = tree(root)
    preview = mc(root, "init", "--replace-existing")
    assert preview.returncode == 0, preview.stderr
    assert "replace docs/memory/decisions.md  (has curated text that would be lost)" in preview.stdout
    assert tree(root) == before
    applied = mc(root, "init", "--replace-existing", "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "replaced docs/memory/decisions.md" in applied.stdout
    fresh = folder(tmp_path / "fresh")
    for name in ("decisions.md", "brief.md"):
        (fresh / "docs/memory" / name).unlink()
    mc(fresh, "init")
    for name in ("decisions.md", "brief.md"):
        assert (root / "docs/memory" / name).read_bytes() == (fresh / "docs/memory" / name).read_bytes()


def test_init_option_combinations_0_9_1_refuses(tmp_path):
    root = folder(tmp_path)
    before = tree(root)
    assert mc(root, "init", "--repair", "--replace-existing").returncode == 2
    assert mc(root, "init", "--apply").returncode == 2
    assert tree(root) == before


# ---- enable, read ----------------------------------------------------------------------------

@pytest.mark.parametrize("spelled,file", [("profile/git", "profiles/git.md"), ("area/frontend", "areas/frontend.md"),
                                          ("rule/output", "rules/output.md")])
def test_enable_takes_the_singular_forms_0_9_1_help_lists(tmp_path, spelled, file):
    root = folder(tmp_path)
    proc = mc(root, "enable", spelled)
    assert proc.returncode == 0, proc.stderr
    assert (root / "docs/memory" / file).is_file()
    assert f"`{file}`" in (root / "docs/memory/manifest.md").read_text(encoding="utf-8")


def test_read_without_task_is_the_default_task(tmp_path):
    root = folder(tmp_path, "dogfood")
    import json

    from conftest import MC_FIXTURES

    expected = json.loads((MC_FIXTURES / "dogfood/expected/default.json").read_text(encoding="utf-8"))
    proc = mc(root, "read", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["loaded"] == expected["loaded"] and got["packed"] == expected["packed"]


# ---- exit codes --------------------------------------------------------------------------------

def _template_brief(root):
    fresh = root / "fresh"
    fresh.mkdir()
    mc(fresh, "init")
    (root / "docs/memory/brief.md").write_bytes((fresh / "docs/memory/brief.md").read_bytes())


def test_a_template_brief_fails_check_and_status(tmp_path):
    root = folder(tmp_path / "p")
    _template_brief(tmp_path / "p")
    assert mc(root, "check").returncode == 1
    status = mc(root, "status")
    assert status.returncode == 1 and "problem: brief.md: brief.md is still the template" in status.stdout


LONG = ("## 2026-11-30 - A very long decision\nDecision:\n" + " ".join(f"word{i}" for i in range(150))
        + "\nReason:\nBecause.\n\n")


def _long_decision(root, *, overflow=False):
    decisions = root / "docs/memory/decisions.md"
    text = decisions.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n## ")
    decisions.write_text(head + "\n" + LONG + "## " + rest if sep else text + "\n" + LONG, encoding="utf-8")


def test_a_decision_over_120_tokens_fails_check_and_status_and_compact_reports_it(tmp_path):
    root = folder(tmp_path)
    _long_decision(root)
    check = mc(root, "check")
    assert check.returncode == 1 and "problem: long-entry:" in check.stdout
    assert mc(root, "status").returncode == 1
    compact = mc(root, "compact", "--target", "decisions.md")
    assert compact.returncode == 0
    assert "decisions.md: 1 decision(s) over 120 tokens" in compact.stdout
    assert "A very long decision" in compact.stdout


def test_archive_oldest_refuses_while_a_kept_decision_is_too_long(tmp_path):
    root = folder(tmp_path, "overflow")
    _long_decision(root)
    before = tree(root)
    proc = mc(root, "compact", "--target", "decisions.md", "--archive-oldest", "--apply")
    assert proc.returncode == 1 and "over 120 tokens; shorten them before archiving" in proc.stderr
    assert tree(root) == before
    # untargeted, 0.9.1 compacts only the inbox: --archive-oldest moves nothing and refuses nothing
    proc = mc(root, "compact", "--archive-oldest", "--apply")
    assert proc.returncode == 0, proc.stderr
    assert "this compact archived nothing" in proc.stdout
    assert tree(root) == before


def test_compact_target_decisions_apply_without_archive_oldest_exits_1(tmp_path):
    root = folder(tmp_path, "overflow")
    before = tree(root)
    proc = mc(root, "compact", "--target", "decisions.md", "--apply")
    assert proc.returncode == 1 and "--archive-oldest" in proc.stderr
    assert tree(root) == before


def test_compact_target_changelog_archives_on_apply(tmp_path):
    root = folder(tmp_path, "dogfood")
    mem = root / "docs/memory"
    log = mem / "changelog.md"
    log.write_text(log.read_text(encoding="utf-8") + "".join(
        f"\n## 2026-05-{d:02d}\n- Old change {d} with some words to fill the budget up.\n" for d in range(28, 0, -1)),
        encoding="utf-8")
    assert mc(root, "check").returncode == 1  # over budget
    proc = mc(root, "compact", "--target", "changelog.md", "--apply")
    assert proc.returncode == 0, proc.stderr
    assert list((mem / "archive").glob("changelog-*.md"))
    assert mc(root, "check").returncode == 0


def test_migrate_on_a_newer_protocol_exits_2_and_says_what_goes_beyond_0_9_1(tmp_path):
    root = folder(tmp_path)
    manifest = root / "docs/memory/manifest.md"
    original = manifest.read_text(encoding="utf-8")
    manifest.write_text(original.replace("protocol_version: 0.5", "protocol_version: 0.6"), encoding="utf-8")
    before = tree(root)
    assert mc(root, "migrate").returncode == 2 and mc(root, "migrate", "--apply").returncode == 2
    assert tree(root) == before
    manifest.write_text(MANIFEST_NO_META, encoding="utf-8")
    preview = mc(root, "migrate")
    assert preview.returncode == 0 and "go beyond the protocol metadata MemoryCustodian 0.9.1's migrate" in preview.stdout


@pytest.mark.parametrize("args", [("compact", "--target", "decisions.md", "--archive-oldest", "--apply"),
                                  ("enable", "archive")])
def test_archive_that_is_a_file_is_a_clean_error(tmp_path, args):
    root = folder(tmp_path, "overflow")
    mem = root / "docs/memory"
    for path in (mem / "archive").iterdir():
        path.unlink()
    (mem / "archive").rmdir()
    (mem / "archive").write_text("not a folder\n", encoding="utf-8")
    before = tree(root)
    proc = mc(root, *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "archive is a file where a folder must be" in proc.stderr and proc.stderr.count("\n") == 1
    assert tree(root) == before


@pytest.mark.parametrize("path", ["/Volumes/Work/app", "/Users/ana/src", "C:\\Users\\ana"])
def test_a_machine_specific_path_in_preferences_is_warned_about(tmp_path, path):
    root = folder(tmp_path, "dogfood")
    prefs = root / "docs/memory/preferences.md"
    prefs.write_text(prefs.read_text(encoding="utf-8") + f"- Build output goes to {path}/out.\n", encoding="utf-8")
    proc = mc(root, "check")
    assert "warning: machine-specific-path:" in proc.stdout
    assert path[:3] in proc.stdout
