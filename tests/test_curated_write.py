"""The curated write path through the Python API: golden output files per command, and every refusal.

Golden files hold `{{TODAY}}` where the UTC date goes. Regenerate them after a deliberate format
change with `MEMORY_CUSTODIAN_UPDATE_GOLDEN=1 pytest tests/test_curated_write.py` and review the diff.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import MC_FIXTURES

from memory_custodian import Memory
from memory_custodian.base.errors import Conflict, InvalidInput, NotFound, Refused, SecretFound
from memory_custodian.cli.terms import CLI_TERMS
from memory_custodian.curated.write.entries import today
from memory_custodian.curated.write.write_api import PrivacyFinding

GOLDEN = Path(__file__).parent / "golden" / "curated_write"
UPDATE = os.environ.get("MEMORY_CUSTODIAN_UPDATE_GOLDEN") == "1"


def make_project(tmp_path: Path, fixture: str = "nightnotes") -> Memory:
    shutil.copytree(MC_FIXTURES / fixture / "docs", tmp_path / "docs")
    return Memory.open(tmp_path)


def snapshot(memory: Memory) -> dict[str, bytes]:
    root = Path(memory.memory_dir)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".cache" not in p.parts}


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    from memory_custodian import __version__

    normalized = text.replace(today(), "{{TODAY}}").replace(f"memory-custodian {__version__}", "memory-custodian {{VERSION}}")
    if UPDATE:
        path.write_text(normalized, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with MEMORY_CUSTODIAN_UPDATE_GOLDEN=1"
    assert normalized == path.read_text(encoding="utf-8")


def read(memory: Memory, rel: str) -> str:
    return (Path(memory.memory_dir) / rel).read_text(encoding="utf-8")


# ---- add: golden files -------------------------------------------------------------------------

def test_add_every_type_golden(tmp_path):
    m = make_project(tmp_path, "nightnotes")
    m.add("Use SQLite WAL mode for the local index.", "decision", reasons=["Readers never block the writer."],
          scope="storage layer")
    m.add("Keep notes readable.", "decision", reasons=["Users grep them.", "Backups stay small."])
    m.add("Never write outside the data folder.", "constraint")
    m.add("Prefer short commands.", "preference")
    m.add("Cloud sync for notes", "tombstone", reasons=["Local-only is a product promise."])
    m.add("Quote user-facing strings exactly.", "rule", name="output")
    m.add("Squash merge feature branches.", "profile", name="git")
    m.add("The store module owns all file IO.", "area", name="store")
    m.add("Store writes go through one function.", "constraint", area="store")
    m.add("Maybe export to Markdown too.", "inbox")
    m.add("Try a --json flag for list.", "inbox")
    for rel in ("decisions.md", "constraints.md", "preferences.md", "do-not-use.md", "inbox.md",
                "rules/output.md", "profiles/git.md", "areas/store.md", "manifest.md"):
        assert_golden("add_" + rel.replace("/", "_"), read(m, rel))


def test_add_keeps_preamble_and_puts_decisions_newest_first(tmp_path):
    m = make_project(tmp_path, "dogfood")
    before = read(m, "decisions.md")
    m.add("Adopt the ledger tier.", "decision", reasons=["Agents record many notes."])
    after = read(m, "decisions.md")
    assert after.startswith("# Decisions\n\nEntries are newest first.\n\n## " + today() + " - Adopt the ledger tier.\n")
    assert after.endswith(before[len("# Decisions\n\nEntries are newest first.\n\n"):])
    assert_golden("add_dogfood_changelog.md", read(m, "changelog.md"))


def test_add_same_entry_twice_is_a_noop(tmp_path):
    m = make_project(tmp_path)
    m.add("Never write outside the data folder.", "constraint")
    before = snapshot(m)
    result = m.add("Never write outside the data folder.", "constraint")
    assert result.duplicate and not result.applied
    assert snapshot(m) == before


def test_add_reports_budget_and_warns_near_and_over(tmp_path):
    m = make_project(tmp_path, "dogfood")
    result = m.add("Use Postgres.", "decision", reasons=["Team knows it."])
    assert result.budget["budget"] == 800 and result.budget["percent"] >= 100
    assert "over its budget" in result.warnings[0]
    m2 = make_project(tmp_path / "b", "nightnotes")
    assert m2.add("Keep it small.", "constraint").warnings == []


# ---- add: refusals, each leaving the folder untouched -------------------------------------------

@pytest.mark.parametrize("kwargs,error,fragment", [
    (dict(text="x", type="bogus"), InvalidInput, "unknown type 'bogus'"),
    (dict(text="x", type="rule", name="../x"), InvalidInput, "invalid rule name"),
    (dict(text="x", type="rule", name="/etc/passwd"), InvalidInput, "invalid rule name"),
    (dict(text="x", type="rule", name=""), InvalidInput, "--name is required"),
    (dict(text="x", type="profile"), InvalidInput, "--name is required"),
    (dict(text="x", type="constraint", area="a/b"), InvalidInput, "invalid area name"),
    (dict(text="x", type="rule", area="b"), InvalidInput, "--area applies to"),
    (dict(text="x", type="constraint", area="a", name="b"), InvalidInput, "not both"),
    (dict(text="  ", type="constraint"), InvalidInput, "empty"),
    (dict(text="x", type="constraint", reasons=["why"]), InvalidInput, "--reason and --scope apply"),
    (dict(text="x", type="decision", reasons=[" "]), InvalidInput, "--reason is empty"),
    (dict(text="x", type="constraint", name="n"), InvalidInput, "--name applies"),
    (dict(text="x", type="inbox", area="store"), InvalidInput, "do not apply"),
    (dict(text="use password = 'hunter2hunter2'", type="constraint"), SecretFound, "password assignment at line 1"),
    (dict(text="ok", type="decision", reasons=["token ghp_" + "a1B2" * 9]), SecretFound, "--reason #1 contains"),
    (dict(text=" ".join(["word"] * 130), type="decision"), Refused, "120-token entry budget"),
    (dict(text="ok\n## Injected heading", type="decision"), InvalidInput, "heading at line 2"),
    (dict(text="ok", type="decision", reasons=["# Title"]), InvalidInput, "heading at line 1"),
    (dict(text="see\n```\ncode", type="constraint"), InvalidInput, "code fence opened at line 2"),
])
def test_add_refusals(tmp_path, kwargs, error, fragment):
    m = make_project(tmp_path)
    before = snapshot(m)
    with pytest.raises(error) as exc:
        m.add(**kwargs)
    assert fragment in exc.value.one_line(CLI_TERMS)
    assert snapshot(m) == before


def test_add_long_decision_with_allow_long(tmp_path):
    m = make_project(tmp_path)
    m.add(" ".join(["word"] * 130), "decision", allow_long=True)
    assert "word word" in read(m, "decisions.md")


def test_add_refuses_non_utf8_target(tmp_path):
    m = make_project(tmp_path)
    (Path(m.memory_dir) / "constraints.md").write_bytes(b"# Constraints\n\n- caf\xe9\n")
    before = snapshot(m)
    with pytest.raises(InvalidInput) as exc:
        m.add("x", "constraint")
    assert "constraints.md:3" in exc.value.one_line() and "UTF-8" in exc.value.one_line()
    assert exc.value.exit_code == 2
    assert snapshot(m) == before


def test_missing_manifest_is_not_found(tmp_path):
    m = make_project(tmp_path)
    (Path(m.memory_dir) / "manifest.md").unlink()
    for call in (lambda: m.add("x", "constraint"), lambda: m.forget("sqlite"), lambda: m.compact(),
                 lambda: m.enable("preferences"), lambda: m.migrate()):
        with pytest.raises(NotFound) as exc:
            call()
        assert "manifest.md is missing" in exc.value.one_line() and exc.value.exit_code == 2
    assert not (Path(m.memory_dir) / "preferences.md").exists()


# ---- forget ------------------------------------------------------------------------------------

def seed_redis(m: Memory) -> None:
    m.add("Use Redis for the session cache.", "decision", reasons=["Fast enough."])
    m.add("We redistribute load across workers.", "constraint")


def test_forget_matches_on_word_boundaries_only(tmp_path):
    m = make_project(tmp_path)
    seed_redis(m)
    plan = m.forget("redis", mode="soft")
    assert [f["path"] for f in plan.files] == ["decisions.md"]
    assert plan.removed_entries == 1 and plan.loose_matches == 2 and plan.needs_allow_broad_match
    # 0.9.1 counts "redistribute" too and refuses without the flag: so does this, though it removes whole words only
    with pytest.raises(Refused, match=r"appears in 2 entries, counting parts of words .*\(1 as a whole word"):
        m.forget("REDIS", mode="soft", apply=True)
    m.forget("REDIS", mode="soft", apply=True, plan_id=m.forget("REDIS", mode="soft").plan_id, allow_broad_match=True)
    assert "redistribute" in read(m, "constraints.md")
    assert "Use Redis" not in read(m, "decisions.md")


def test_forget_preview_changes_nothing(tmp_path):
    m = make_project(tmp_path)
    seed_redis(m)
    before = snapshot(m)
    result = m.forget("redis", mode="hard")
    assert not result.applied and result.changes
    assert snapshot(m) == before


def test_forget_soft_golden(tmp_path):
    m = make_project(tmp_path, "nightnotes")
    seed_redis(m)
    m.forget("redis", mode="soft", apply=True, allow_broad_match=True)  # "redistribute" holds it too
    assert_golden("forget_soft_decisions.md", read(m, "decisions.md"))
    assert_golden("forget_soft_do-not-use.md", read(m, "do-not-use.md"))


def test_forget_hard_leaves_no_trace_anywhere(tmp_path):
    m = make_project(tmp_path, "dogfood")
    topic = "Zephyrine"
    m.add(f"Use {topic} for the session cache.", "decision", reasons=["Fast enough."])
    m.add(f"Never call {topic} from request handlers.", "constraint")
    m.add(f"Ask about {topic} pricing.", "inbox")
    m.forget(topic, mode="soft", apply=True, allow_broad_match=True)  # leaves a tombstone naming it
    m.add(f"{topic} must stay optional.", "constraint")
    preview = m.forget(topic, mode="hard")
    assert preview.removed_entries == 3 and preview.needs_allow_broad_match
    applied = m.forget(topic, mode="hard", apply=True, plan_id=preview.plan_id, allow_broad_match=True)
    assert applied.applied
    for result in (preview, applied):
        assert topic.lower() not in repr(result).lower()
    for path in Path(tmp_path).rglob("*"):
        if path.is_file():
            assert topic.lower() not in path.read_text(encoding="utf-8", errors="replace").lower(), path
    assert "- Completed hard forget operation." in read(m, "changelog.md")  # MemoryCustodian 0.9.1's words
    assert "## Tombstone: Redacted user-requested removal\n" in read(m, "do-not-use.md")
    assert_golden("forget_hard_do-not-use.md", read(m, "do-not-use.md"))


def test_forget_hard_refusal_never_names_the_topic(tmp_path):
    m = make_project(tmp_path)
    topic = "Quillfeather"
    brief = Path(m.memory_dir) / "brief.md"
    brief.write_text(f"# Project Brief\n\nPurpose:\nWe replaced {topic} last year.\n", encoding="utf-8")
    m.add(f"{topic} is gone.", "constraint")
    before = snapshot(m)
    with pytest.raises(Refused) as exc:
        m.forget(topic, mode="hard", apply=True)
    assert "brief.md:4" in exc.value.one_line() and topic not in exc.value.one_line()
    assert snapshot(m) == before


def test_forget_purge_includes_archive_and_keeps_no_tombstone(tmp_path):
    m = make_project(tmp_path, "dogfood")
    topic = "local text memory"
    hard = m.forget(topic, mode="hard")
    assert hard.removed_entries == 0 and hard.archive_mentions == 1
    preview = m.forget(topic, mode="purge")
    assert preview.removed_entries == 1 and preview.files[0]["path"] == "archive/decisions-2026-07-12.md"
    assert any("git history and backups still hold it" in n for n in preview.notes)
    before_stones = read(m, "do-not-use.md")
    m.forget(topic, mode="purge", apply=True, plan_id=preview.plan_id)
    assert read(m, "do-not-use.md") == before_stones
    for path in Path(m.memory_dir).rglob("*.md"):
        assert topic not in path.read_text(encoding="utf-8").lower()
    assert_golden("forget_purge_archive.md", read(m, "archive/decisions-2026-07-12.md"))


def test_forget_removes_bullets_from_changelog_days_not_whole_days(tmp_path):
    m = make_project(tmp_path, "dogfood")
    m.forget("Gemini adapter", mode="hard", apply=True)
    log = read(m, "changelog.md")
    assert "Gemini adapter" not in log
    assert "## 2026-07-08\n" not in log  # that day had only the one bullet
    assert "## 2026-07-05\n- Added target compaction" in log


def test_forget_broad_match_refusals(tmp_path):
    m = make_project(tmp_path, "dogfood")
    before = snapshot(m)
    with pytest.raises(Refused) as exc:
        m.forget("MVP", mode="soft", apply=True)
    assert "shorter than 4 characters" in exc.value.one_line()
    plan = m.forget("Gemini", mode="soft")
    assert plan.removed_entries >= 3 and plan.needs_allow_broad_match
    with pytest.raises(Refused) as exc:
        m.forget("Gemini", mode="soft", apply=True, plan_id=plan.plan_id)
    assert "--allow-broad-match" in exc.value.one_line(CLI_TERMS)
    assert snapshot(m) == before
    m.forget("Gemini", mode="soft", apply=True, plan_id=plan.plan_id, allow_broad_match=True)
    assert "## Tombstone: Gemini" in read(m, "do-not-use.md")


def test_forget_refuses_manifest_mentions_and_bad_input(tmp_path):
    m = make_project(tmp_path)
    before = snapshot(m)
    preview = m.forget("Context budget", mode="soft")  # a preview names the line and succeeds
    assert preview.blocked and preview.blocked[0]["path"] == "manifest.md" and preview.changes == []
    assert any(line.startswith("manifest.md:") for line in preview.plan)
    with pytest.raises(Refused) as exc:
        m.forget("Context budget", mode="soft", apply=True)
    assert "manifest.md:" in exc.value.one_line()
    assert snapshot(m) == before
    with pytest.raises(InvalidInput):
        m.forget("   ", mode="soft")
    with pytest.raises(InvalidInput):
        m.forget("sqlite", mode="erase")


def test_forget_reports_nothing_to_do(tmp_path):
    m = make_project(tmp_path)
    before = snapshot(m)
    result = m.forget("kubernetes", mode="hard", apply=True)
    assert not result.applied and result.removed_entries == 0
    assert snapshot(m) == before


# ---- plans -------------------------------------------------------------------------------------

def test_apply_refuses_a_plan_when_files_changed_since_preview(tmp_path):
    m = make_project(tmp_path)
    seed_redis(m)
    preview = m.forget("redis", mode="soft")
    m.add("Another constraint.", "constraint")
    before = snapshot(m)
    with pytest.raises(Conflict) as exc:
        m.forget("redis", mode="soft", apply=True, plan_id=preview.plan_id)
    assert f"plan {preview.plan_id} no longer matches" in exc.value.one_line()
    assert exc.value.exit_code == 1
    assert snapshot(m) == before


def test_plan_id_is_stable_and_needs_apply(tmp_path):
    m = make_project(tmp_path)
    seed_redis(m)
    assert m.forget("redis").plan_id == m.forget("redis").plan_id
    assert m.forget("redis").plan_id != m.forget("redis", mode="hard").plan_id
    with pytest.raises(InvalidInput):
        m.forget("redis", plan_id="abc")


# ---- compact -----------------------------------------------------------------------------------

def test_compact_inbox_and_bullets_golden(tmp_path):
    m = make_project(tmp_path, "nightnotes")
    mem = Path(m.memory_dir)
    (mem / "inbox.md").write_text(
        "# Memory Inbox\n\nEntries are newest first.\n\n"
        "## 2026-11-02\n- Consider SQLite for session persistence.\n- Add a --json flag.\n\n"
        "## 2026-11-01\n- Add a --json flag.\n- Encrypt exports.\n- sqlite for session persistence\n", encoding="utf-8")
    (mem / "constraints.md").write_text(
        "# Constraints\n\n- The application must work without network access.\n- Use stdlib only.\n"
        "- The application must  work without network access.\n  (repeated)\n- Use stdlib only.\n", encoding="utf-8")
    preview = m.compact()
    inbox = next(f for f in preview.files if f["path"] == "inbox.md")
    assert inbox["duplicates_dropped"] == 1 and inbox["tombstoned_dropped"] == 1
    # only an exact match of a tombstone's title goes; a mention is kept for review, flagged
    assert inbox["candidates"] == ["Consider SQLite for session persistence.", "Add a --json flag.", "Encrypt exports."]
    assert inbox["mentions_tombstone"] == ["Consider SQLite for session persistence."]
    m.compact(apply=True, plan_id=preview.plan_id)
    assert_golden("compact_inbox.md", read(m, "inbox.md"))
    assert_golden("compact_constraints.md", read(m, "constraints.md"))
    again = m.compact(apply=True)
    assert again.changes == []


def test_compact_archives_oldest_decisions_only_when_asked(tmp_path):
    m = make_project(tmp_path, "overflow")
    mem = Path(m.memory_dir)
    (mem / "decisions.md").write_text(read(m, "decisions.md").split("## 2026-07-12 - From decisions.md")[0],
                                      encoding="utf-8")
    body = read(m, "decisions.md")
    (mem / "decisions.md").write_text(body + "\n" + "\n".join(
        f"## 2026-06-{d:02d} - Old decision {d}\nDecision:\nSomething old number {d}.\nReason:\nHistory.\n"
        for d in range(20, 0, -1)), encoding="utf-8")
    before = snapshot(m)
    preview = m.compact(target="decisions.md")
    assert preview.changes == [] and preview.review
    assert snapshot(m) == before
    plan = m.compact(target="decisions.md", archive_oldest=True)
    result = m.compact(target="decisions.md", archive_oldest=True, apply=True, plan_id=plan.plan_id)
    assert {c["path"] for c in result.changes} == {"decisions.md", f"archive/decisions-{today()}.md", "changelog.md"}
    from memory_custodian.base.tokens import estimate_tokens

    assert estimate_tokens(read(m, "decisions.md")) <= 800
    assert "## 2026-06-01 - Old decision 1" in read(m, f"archive/decisions-{today()}.md")
    assert "## 2026-07-21 - Target Python" in read(m, "decisions.md")
    assert_golden("compact_archive.md", read(m, f"archive/decisions-{today()}.md"))


def test_compact_refuses_bad_targets(tmp_path):
    m = make_project(tmp_path)
    for target, fragment in (("../x.md", "must be a .md file"), ("/etc/passwd", "must be a .md file"),
                             ("manifest.md", "not a curated file"), ("nope.md", "does not exist")):
        with pytest.raises(InvalidInput) as exc:
            m.compact(target=target)
        assert fragment in exc.value.one_line()


# ---- enable ------------------------------------------------------------------------------------

def test_enable_is_idempotent_and_golden(tmp_path):
    m = make_project(tmp_path, "nightnotes")
    for module in ("preferences", "changelog", "rules", "profiles", "archive", "rules/output", "profiles/git"):
        m.enable(module)
    m.enable("areas/store", paths=["src/store/**", "tests/test_store*.py"])
    before = snapshot(m)
    for module in ("preferences", "changelog", "rules", "profiles", "archive", "rules/output", "profiles/git"):
        assert m.enable(module).changes == []
    assert m.enable("areas/store", paths=["src/store/**"]).changes == []
    assert snapshot(m) == before
    assert_golden("enable_manifest.md", read(m, "manifest.md"))
    from memory_custodian.curated.manifest.reader import parse_manifest

    entry = parse_manifest(read(m, "manifest.md")).index_entry("areas/store.md")
    assert entry.paths == ("src/store/**", "tests/test_store*.py")
    m.enable("areas/store", paths=["lib/store/**"])
    entry = parse_manifest(read(m, "manifest.md")).index_entry("areas/store.md")
    assert entry.paths == ("src/store/**", "tests/test_store*.py", "lib/store/**")


def test_enable_never_overwrites_an_existing_module(tmp_path):
    m = make_project(tmp_path)
    (Path(m.memory_dir) / "rules").mkdir()
    (Path(m.memory_dir) / "rules" / "output.md").write_text("# Mine\n\n- keep\n", encoding="utf-8")
    m.enable("rules/output")
    assert read(m, "rules/output.md") == "# Mine\n\n- keep\n"
    assert "`rules/output.md`" in read(m, "manifest.md")


@pytest.mark.parametrize("module,paths,fragment", [
    ("bogus", [], "cannot enable 'bogus'"),
    ("rules/../x", [], "invalid rule name"),
    ("areas/", [], "cannot enable"),
    ("rules/output", ["src/**"], "--path applies to areas only"),
    ("areas/store", ["/abs/**"], "must be relative"),
    ("areas/store", ["src/**x/y"], "'**' must be a whole segment"),
])
def test_enable_refusals(tmp_path, module, paths, fragment):
    m = make_project(tmp_path)
    before = snapshot(m)
    with pytest.raises(InvalidInput) as exc:
        m.enable(module, paths=paths)
    assert fragment in exc.value.one_line(CLI_TERMS)
    assert snapshot(m) == before


# ---- migrate -----------------------------------------------------------------------------------

LEGACY_MANIFEST = """# Memory Manifest

Loading map for local project memory.

## MemoryCustodian Protocol
- protocol_version: 0.4
- initialized_with: memory-custodian 0.4.0
- last_migrated_with: memory-custodian 0.4.0

## Always load
- brief.md

## Load by task

### Planning / architecture / refactoring
Load:
- decisions.md
- constraints.md
- do-not-use.md

### Implementation / execution / debugging
Load:
- constraints.md
- do-not-use.md
Load if present:
- preferences.md
"""


def test_migrate_brings_an_old_manifest_up_to_date(tmp_path):
    m = make_project(tmp_path)
    mem = Path(m.memory_dir)
    (mem / "manifest.md").write_text(LEGACY_MANIFEST, encoding="utf-8")
    (mem / "areas").mkdir()
    (mem / "areas" / "store.md").write_text("# Area: Store\n\n- Owns IO.\n", encoding="utf-8")
    preview = m.migrate()
    assert not preview.applied and "protocol_version 0.4 -> 0.5" in preview.steps
    assert read(m, "manifest.md") == LEGACY_MANIFEST
    m.migrate(apply=True, plan_id=preview.plan_id)
    assert_golden("migrate_manifest.md", read(m, "manifest.md"))
    again = m.migrate()
    assert again.changes == [] and again.steps == []


def test_migrate_refuses_to_downgrade_a_newer_protocol(tmp_path):
    m = make_project(tmp_path)
    mem = Path(m.memory_dir)
    text = read(m, "manifest.md").replace("protocol_version: 0.5", "protocol_version: 0.6")
    (mem / "manifest.md").write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInput) as exc:
        m.migrate(apply=True)
    assert "manifest.md:6: protocol 0.6 is newer" in exc.value.one_line()
    (mem / "manifest.md").write_text(text.replace("0.6", "zero.six"), encoding="utf-8")
    with pytest.raises(InvalidInput) as exc:
        m.migrate()
    assert "is not a version number" in exc.value.one_line()
    assert read(m, "manifest.md") == text.replace("0.6", "zero.six")


def test_migrate_leaves_a_current_0_9_1_manifest_alone(tmp_path):
    for fixture in ("dogfood", "nightnotes"):
        m = make_project(tmp_path / fixture, fixture)
        assert m.migrate().changes == []


# ---- check_privacy -----------------------------------------------------------------------------

def test_check_privacy_finds_existing_secrets_without_echoing_them(tmp_path):
    m = make_project(tmp_path)
    key = "AKIA" + "QWERTYUIOPASDFGH"
    (Path(m.memory_dir) / "inbox.md").write_text(f"# Memory Inbox\n\n- rotate {key}\n", encoding="utf-8")
    findings = m.check_privacy()
    assert findings == [PrivacyFinding(path="inbox.md", line=3, column=10, kind="AWS access key")]
    assert findings[0].to_dict() == {"column": 10, "kind": "AWS access key", "line": 3, "path": "inbox.md"}
    assert key not in repr(findings)
    assert make_project(tmp_path / "clean", "dogfood").check_privacy() == []


def test_soft_forget_refuses_a_credential_topic(tmp_path):
    m = make_project(tmp_path)
    key = "AKIA" + "ZXCVBNMASDFGHJKL"
    with pytest.raises(Refused) as exc:
        m.forget(key, mode="soft")
    assert "use --mode hard" in exc.value.one_line(CLI_TERMS) and key not in exc.value.one_line()
    assert m.forget(key, mode="hard").removed_entries == 0


# ---- properties --------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

WORDS = ["redis", "Redis", "redistribute", "predis", "redis_cache", "redis-cluster", "cache", "store", "index"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=1, max_size=12),
       st.booleans())
def test_forget_removes_exactly_the_matching_units(bullets, sections):
    import re

    from memory_custodian.curated.parse.units import split_units
    from memory_custodian.curated.write.forget import _forget_in_text, topic_pattern

    if sections:
        body = "".join(f"## Entry {i}\n{' '.join(ws)}\n\n" for i, ws in enumerate(bullets))
    else:
        body = "".join(f"- {' '.join(ws)}\n" for ws in bullets)
    text = "# Notes\n\nPreamble stays.\n\n" + body
    pattern = topic_pattern("redis")
    result = _forget_in_text("notes.md", text, pattern)
    assert not pattern.search(result.new_text)
    assert result.new_text.startswith("# Notes\n\nPreamble stays.\n")
    expected = [ws for ws in bullets if any(re.fullmatch(r"redis(-cluster)?", w, re.I) for w in ws)]
    assert len(result.removals) == len(expected)
    after = split_units(result.new_text)
    kept = [] if after.mode == "body" else [u.text.strip() for u in after.units]  # body: only the preamble is left
    originals = [u.text.strip() for u in split_units(text).units if not pattern.search(u.text)]
    assert kept == originals


def test_entries_insertion_rules():
    from memory_custodian.curated.write.entries import append_bullet, prepend_dated_item, prepend_entry

    # a section never swallows the bullets of a bullet-only file
    assert prepend_entry("# T\n\n- a\n- b\n", "## Tombstone: x\ny") == "# T\n\n- a\n- b\n\n## Tombstone: x\ny\n"
    assert prepend_entry("# D\n\nEntries are newest first.\n", "## 2026-01-02 - n\nDecision:\nn") == \
        "# D\n\nEntries are newest first.\n\n## 2026-01-02 - n\nDecision:\nn\n"
    # today's changelog section is reused, newest bullet first
    log = "# Memory Changelog\n\nEntries are newest first.\n\n## 2026-01-02\n- old\n\n## 2026-01-01\n- older\n"
    assert prepend_dated_item(log, "2026-01-02", "new") == \
        "# Memory Changelog\n\nEntries are newest first.\n\n## 2026-01-02\n- new\n- old\n\n## 2026-01-01\n- older\n"
    assert prepend_dated_item(log, "2026-01-03", "new").startswith(
        "# Memory Changelog\n\nEntries are newest first.\n\n## 2026-01-03\n- new\n\n## 2026-01-02\n")
    # the inbox placeholder goes away with the first item
    inbox = "# Memory Inbox\n\nEntries are newest first.\n\nNo unprocessed memory candidates.\n"
    assert prepend_dated_item(inbox, "2026-01-02", "idea", drop_line="No unprocessed memory candidates.") == \
        "# Memory Inbox\n\nEntries are newest first.\n\n## 2026-01-02\n- idea\n"
    # bullets: at the end of the list, replacing a template placeholder
    assert append_bullet("# C\n\n- a\n  more\n", "- b") == "# C\n\n- a\n  more\n- b\n"
    assert append_bullet("# C\n\nIntro.", "- b") == "# C\n\nIntro.\n\n- b\n"
    assert append_bullet("# Rule: X\n\n## Rules\n- Add rules that should apply only when this task type is relevant.\n",
                         "- real") == "# Rule: X\n\n## Rules\n- real\n"


def test_forget_refuses_a_topic_in_a_body_only_file(tmp_path):
    m = make_project(tmp_path)
    (Path(m.memory_dir) / "brief.md").write_text("# Project Brief\n\nNightNotes stores notes.\nIt uses Gluon.\n",
                                                 encoding="utf-8")
    before = snapshot(m)
    with pytest.raises(Refused) as exc:
        m.forget("Gluon", mode="purge", apply=True)
    assert exc.value.one_line().startswith("brief.md:4: the topic appears in")
    assert "Gluon" not in exc.value.one_line()
    assert snapshot(m) == before


def test_a_corrupt_journal_is_reported_not_guessed(tmp_path):
    from memory_custodian.base.errors import Corrupt

    m = make_project(tmp_path)
    cache = Path(m.memory_dir) / ".cache"
    cache.mkdir(exist_ok=True)
    (cache / "journal.json").write_text("{not json", encoding="utf-8")
    before = snapshot(m)
    with pytest.raises(Corrupt) as exc:
        m.add("x", "constraint")
    assert "journal.json" in exc.value.one_line() and exc.value.exit_code == 2
    assert snapshot(m) == before


def test_journal_rolls_forward_in_process(tmp_path):
    from memory_custodian.curated.write import journal

    m = make_project(tmp_path)
    mem = Path(m.memory_dir)
    old_a = (mem / "constraints.md").read_text()
    changes = [journal.Change("constraints.md", old_a + "- new\n", journal.digest_file(mem / "constraints.md")),
               journal.Change("rules/x.md", "# X\n", journal.ABSENT)]
    # what a crash after the journal and the first write leaves behind
    import json as _json

    (mem / ".cache").mkdir(exist_ok=True)
    (mem / ".cache" / "journal.json").write_text(_json.dumps({"v": 1, "label": "test", "changes": [
        {"path": c.path, "old": c.old_digest, "new_digest": journal.digest_text(c.new), "new": c.new} for c in changes]}))
    (mem / "constraints.md").write_text(changes[0].new)
    message = journal.recover(mem)
    assert message == "finished an interrupted `test`: 1 of 2 files had been written before it stopped; wrote the other 1"
    assert (mem / "rules" / "x.md").read_text() == "# X\n"
    assert not (mem / ".cache" / "journal.json").exists()
    assert journal.recover(mem) is None


def test_compact_archives_the_oldest_changelog_days(tmp_path):
    m = make_project(tmp_path, "dogfood")
    m.add("Pad the changelog over its budget.", "constraint")
    m.add("Once more to be sure.", "constraint")
    preview = m.compact(target="changelog.md", archive_oldest=True)
    moved = preview.files[0]["archive_candidates"]
    assert moved >= 1
    m.compact(target="changelog.md", archive_oldest=True, apply=True, plan_id=preview.plan_id)
    log = read(m, "changelog.md")
    # no line about its own compaction: it would push the changelog back over budget (as in 0.9.1)
    assert log.startswith(f"# Memory Changelog\n\nEntries are newest first.\n\n## {today()}\n")
    assert "Compacted changelog.md" not in log
    assert "## 2026-06-30" not in log
    assert "## 2026-06-30\n- Initialized MemoryCustodian dogfood memory files." in read(m, f"archive/changelog-{today()}.md")


def test_finish_interrupted_writes_api(tmp_path):
    m = make_project(tmp_path)
    assert m.finish_interrupted_writes() is None and not m.interrupted_write_pending()


def test_forget_counts_ledger_mentions_without_naming_them(tmp_path):
    m = make_project(tmp_path)
    m.remember("Quasarix leaks file handles under load.", kind="gotcha")
    m.add("Avoid Quasarix in the hot path.", "constraint")
    result = m.forget("quasarix", mode="hard")
    assert result.removed_entries == 1 and result.ledger_mentions >= 1
    assert any("forget --note ID" in n for n in result.notes)
    assert "quasarix" not in repr(result).lower()


def test_writes_never_follow_a_symlink_out_of_the_memory_folder(tmp_path):
    m = make_project(tmp_path / "p")
    outside = tmp_path / "outside"
    outside.mkdir()
    (Path(m.memory_dir) / "rules").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InvalidInput) as exc:
        m.add("Quote output.", "rule", name="output")
    assert "through a symlink" in exc.value.one_line()
    (outside / "secret.md").write_text("# Outside\n", encoding="utf-8")
    (Path(m.memory_dir) / "preferences.md").symlink_to(outside / "secret.md")
    with pytest.raises(InvalidInput):
        m.add("Prefer tabs.", "preference")
    assert list(outside.iterdir()) == [outside / "secret.md"]
    assert (outside / "secret.md").read_text() == "# Outside\n"


@pytest.mark.parametrize("bom,crlf", [(True, True), (False, True), (True, False), (False, False)])
def test_writes_keep_a_files_line_endings_and_byte_order_mark(tmp_path, bom, crlf):
    """A file saved on Windows (CRLF, a BOM) gets the new entry in its own style: the diff is the
    entry, not every line; `forget --apply --plan` still finds the plan it previewed."""
    m = make_project(tmp_path)
    path = Path(m.memory_dir) / "decisions.md"
    lf = path.read_bytes()
    styled = (b"\xef\xbb\xbf" if bom else b"") + (lf.replace(b"\n", b"\r\n") if crlf else lf)
    path.write_bytes(styled)
    m.add("Use JSON Lines for the export.", "decision", reasons=["Appends are cheap."])
    after = path.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf") == bom
    body = after[3:] if bom else after
    if crlf:
        assert b"\n" not in body.replace(b"\r\n", b"")  # every line ends in CRLF, none bare
    else:
        assert b"\r" not in body
    old_lines = set((styled[3:] if bom else styled).splitlines(keepends=True))
    new_lines = [line for line in body.splitlines(keepends=True) if line not in old_lines]
    assert any(b"Use JSON Lines for the export." in line for line in new_lines)
    assert len(new_lines) <= 6  # the new entry's heading, fields and blank lines; nothing else rewritten
    # the same entry again changes nothing (no rewrite to LF either)
    m.add("Use JSON Lines for the export.", "decision", reasons=["Appends are cheap."])
    assert path.read_bytes() == after
    preview = m.forget("JSON Lines", mode="soft")
    m.forget("JSON Lines", mode="soft", apply=True, plan_id=preview.plan_id)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf") == bom
    assert (b"\r\n" in path.read_bytes()) == crlf
