"""The curated write commands as users and agents run them: real processes, exit codes, JSON,
20 parallel writers, and a SIGKILL between the writes of a multi-file command."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MC_FIXTURES, run_cli, run_cli_process

from memory_custodian.base.fsutil import TEMP_RE
from memory_custodian.curated.parse.units import split_units
from memory_custodian.curated.write.journal import CRASH_ENV


def project(tmp_path: Path, fixture: str = "nightnotes") -> Path:
    shutil.copytree(MC_FIXTURES / fixture / "docs", tmp_path / "docs")
    return tmp_path


def tree(root: Path) -> dict[str, bytes]:
    mem = root / "docs" / "memory"
    return {p.relative_to(mem).as_posix(): p.read_bytes() for p in sorted(mem.rglob("*"))
            if p.is_file() and ".cache" not in p.parts}


def cli(root: Path, *args: str):
    return run_cli(*args, "--project-root", str(root))


def crash_cli(root: Path, *args: str, writes: int):
    """A real process that SIGKILLs itself after `writes` file writes."""
    return run_cli_process(*args, "--project-root", str(root), env={CRASH_ENV: str(writes)})


def test_every_write_command_has_help():
    for command in ("add", "forget", "compact", "enable", "migrate"):
        result = run_cli(command, "--help")
        assert result.returncode == 0 and "usage:" in result.stdout and "--format" in result.stdout


def test_add_prints_plan_and_budget_and_json(tmp_path):
    root = project(tmp_path)
    result = cli(root, "add", "Keep exports plain text.", "--type", "constraint")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "constraints.md: add a constraint entry",
        "applied: 1 file(s) written",
        "budget: constraints.md 38/400 tokens (9%)",
    ]
    result = cli(root, "add", "Use JSON files.", "--type", "decision", "--reason", "Portable.", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["applied"] and doc["path"] == "decisions.md" and doc["command"] == "add"
    assert list(doc) == sorted(doc)


@pytest.mark.parametrize("args,code,fragment", [
    (["add", "x", "--type", "bogus"], 2, "unknown type 'bogus'"),
    (["add", "x", "--type", "rule", "--name", "../x"], 2, "invalid rule name"),
    (["add", "x", "--type", "rule", "--name", "/abs"], 2, "invalid rule name"),
    (["add", "x", "--type", "rule", "--name", ""], 2, "--name is required"),
    (["add", "mongodb://admin:Sup3rS3cret9@db.example.com/app", "--type", "constraint"], 2,
     "contains what looks like a connection string with a password at line 1"),
    (["add", " ".join(["long"] * 125), "--type", "decision"], 1, "120-token entry budget"),
    (["forget", "sqlite", "--plan", "abc"], 2, "--plan is used with --apply"),
    (["forget", "sqlite", "--apply", "--plan", "000000000000"], 1, "no longer matches"),
    (["forget"], 2, "exactly one of TOPIC or --note"),
    (["forget", "sqlite", "--note", "abcd"], 2, "exactly one of TOPIC or --note"),
    (["forget", "--note", "abcd"], 1, "pass --yes to confirm"),
    (["compact", "--target", "../../etc/passwd"], 2, "must be a .md file inside the memory folder"),
    (["enable", "rules/../../x"], 2, "invalid rule name"),
    (["enable", "areas/x", "--path", "/abs/**"], 2, "must be relative"),
])
def test_refusals_exit_codes_one_line_and_nothing_changed(tmp_path, args, code, fragment):
    root = project(tmp_path)
    before = tree(root)
    result = cli(root, *args)
    assert result.returncode == code, (result.stdout, result.stderr)
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error: ")
    assert tree(root) == before


def test_secret_refusal_never_echoes_the_secret(tmp_path):
    root = project(tmp_path)
    key = "sk-ant-" + "api03-" + "Zx9" * 30
    result = cli(root, "add", f"Use {key} for tests", "--type", "constraint")
    assert result.returncode == 2 and "Anthropic API key" in result.stderr
    assert key not in result.stdout + result.stderr


def test_non_utf8_target_and_missing_manifest(tmp_path):
    root = project(tmp_path)
    mem = root / "docs" / "memory"
    (mem / "inbox.md").write_bytes(b"# Memory Inbox\n\xff\xfe\n")
    result = cli(root, "add", "idea", "--type", "inbox")
    assert result.returncode == 2 and "inbox.md:2" in result.stderr and "UTF-8" in result.stderr
    (mem / "manifest.md").unlink()
    result = cli(root, "add", "idea", "--type", "constraint")
    assert result.returncode == 2 and "manifest.md is missing" in result.stderr
    assert not (mem / ".cache" / "journal.json").exists()


def test_forget_preview_then_apply_with_plan(tmp_path):
    root = project(tmp_path)
    cli(root, "add", "Use Redis for caching.", "--type", "decision")
    cli(root, "add", "We redistribute work nightly.", "--type", "constraint")
    preview = cli(root, "forget", "redis", "--mode", "soft", "--format", "json")
    plan = json.loads(preview.stdout)
    assert plan["applied"] is False and plan["removed_entries"] == 1
    refused = cli(root, "forget", "redis", "--mode", "soft", "--apply", "--plan", plan["plan_id"])
    assert refused.returncode == 1 and "--allow-broad-match" in refused.stderr  # "redistribute", as 0.9.1 counts
    applied = cli(root, "forget", "redis", "--mode", "soft", "--apply", "--plan", plan["plan_id"], "--allow-broad-match")
    assert applied.returncode == 0, applied.stderr
    mem = root / "docs" / "memory"
    assert "Redis" not in (mem / "decisions.md").read_text()
    assert "redistribute" in (mem / "constraints.md").read_text()


def test_forget_plan_refused_when_files_changed_since_preview(tmp_path):
    root = project(tmp_path)
    cli(root, "add", "Use Redis for caching.", "--type", "decision")
    plan = json.loads(cli(root, "forget", "redis", "--format", "json").stdout)["plan_id"]
    cli(root, "add", "Something else.", "--type", "constraint")
    before = tree(root)
    result = cli(root, "forget", "redis", "--apply", "--plan", plan)
    assert result.returncode == 1 and f"plan {plan} no longer matches" in result.stderr
    assert tree(root) == before


def test_hard_forget_never_prints_the_topic(tmp_path):
    root = project(tmp_path, "dogfood")
    topic = "Marrowgate"
    cli(root, "add", f"Use {topic} for uploads.", "--type", "decision", "--reason", "Cheap.")
    outputs = []
    for args in (["forget", topic, "--mode", "hard"], ["forget", topic, "--mode", "hard", "--format", "json"],
                 ["forget", topic, "--mode", "hard", "--apply"], ["forget", topic, "--mode", "purge"]):
        result = cli(root, *args)
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout + result.stderr)
    (root / "docs" / "memory" / "brief.md").write_text(f"# Brief\n\n{topic} again\n", encoding="utf-8")
    blocked = cli(root, "forget", topic, "--mode", "hard", "--apply")
    assert blocked.returncode == 1 and "brief.md:3" in blocked.stderr
    outputs.append(blocked.stdout + blocked.stderr)
    for text in outputs:
        assert topic.lower() not in text.lower()
    assert "git history" in outputs[2]


def test_forget_note_goes_to_the_ledger(tmp_path):
    from memory_custodian import Memory

    root = project(tmp_path)
    note = Memory.open(root).remember("The build cache lives in /tmp/bc.", kind="gotcha")
    result = cli(root, "forget", "--note", note.id, "--yes", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["note"] == note.id


def test_compact_enable_migrate_json(tmp_path):
    root = project(tmp_path)
    for args in (["compact"], ["enable", "areas/store", "--path", "src/store/**"], ["migrate"]):
        result = cli(root, *args, "--format", "json")
        assert result.returncode == 0, result.stderr
        doc = json.loads(result.stdout)
        assert doc["command"] == args[0] and "plan_id" in doc
    again = cli(root, "enable", "areas/store", "--path", "src/store/**")
    assert again.stdout.strip() == "areas/store.md is already enabled; nothing changed"


def test_migrate_refuses_newer_protocol_exit_2_as_memorycustodian_does(tmp_path):
    root = project(tmp_path)
    manifest = root / "docs" / "memory" / "manifest.md"
    manifest.write_text(manifest.read_text().replace("protocol_version: 0.5", "protocol_version: 1.2"))
    before = tree(root)
    result = cli(root, "migrate", "--apply")
    assert result.returncode == 2 and "refusing to downgrade" in result.stderr
    assert tree(root) == before


def test_twenty_parallel_adds_keep_all_twenty(tmp_path):
    root = project(tmp_path, "dogfood")
    decisions = root / "docs" / "memory" / "decisions.md"
    units_before = len(split_units(decisions.read_text()).units)
    env = dict(os.environ, PYTHONHASHSEED="0")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "memory_custodian", "add", f"Parallel decision number {i}.", "--type", "decision",
             "--reason", f"Writer {i}.", "--project-root", str(root)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        for i in range(20)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    text = decisions.read_text()
    doc = split_units(text)
    assert len(doc.units) == units_before + 20
    assert sorted(int(u.heading.rsplit(" ", 1)[1].rstrip(".")) for u in doc.units if "Parallel decision" in u.heading) \
        == list(range(20))
    assert doc.preamble == "# Decisions\n\nEntries are newest first.\n\n"
    assert "\n\n\n" not in text
    log = (root / "docs" / "memory" / "changelog.md").read_text()
    # one `## date` entry a write, as MemoryCustodian 0.9.1 writes them: no writer's line lost
    assert log.count("\n- Added decision memory to decisions.md.\n") == 20


def _crash_then_recover(tmp_path: Path, name: str, args: list[str], writes: int, fixture: str = "dogfood"):
    """Run `args` killed after `writes` file writes; return (expected tree, tree after the next command, that command)."""
    reference = project(tmp_path / f"{name}-ref", fixture)
    ok = cli(reference, *args)
    assert ok.returncode == 0, ok.stderr
    expected = tree(reference)

    victim = project(tmp_path / f"{name}-crash", fixture)
    original = tree(victim)
    crashed = crash_cli(victim, *args, writes=writes)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    mid = tree(victim)
    assert mid != original and mid != expected  # really a mix: some files new, some old
    assert (victim / "docs" / "memory" / ".cache" / "journal.json").exists()
    nxt = cli(victim, "compact", "--apply")  # the next command that writes (a preview writes nothing)
    assert nxt.returncode == 0, nxt.stderr
    return expected, tree(victim), nxt


def test_sigkill_between_writes_of_enable_is_finished_by_the_next_command(tmp_path):
    args = ["enable", "areas/store", "--path", "src/store/**"]  # creates the area, updates manifest and changelog
    for writes in (1, 2):
        expected, after, nxt = _crash_then_recover(tmp_path, f"enable{writes}", args, writes)
        assert after == expected
        assert "finished an interrupted `enable`" in nxt.stderr
        assert f"{writes} of 3 files had been written" in nxt.stderr


def test_sigkill_during_hard_forget_recovers_without_leaking_the_topic(tmp_path):
    topic = "Target Python 3.10+ minimum version"
    args = ["forget", topic, "--mode", "hard", "--apply"]  # decisions.md, do-not-use.md, changelog.md
    expected, after, nxt = _crash_then_recover(tmp_path, "forget", args, 1)
    assert after == expected
    assert "finished an interrupted `forget (hard)`" in nxt.stderr
    assert topic.lower() not in (nxt.stdout + nxt.stderr).lower()
    victim = tmp_path / "forget-crash" / "docs" / "memory"
    for path in victim.rglob("*"):
        if path.is_file():
            assert topic.lower() not in path.read_text(errors="replace").lower(), path


def test_journal_in_crash_window_holds_no_forgotten_topic(tmp_path):
    root = project(tmp_path, "dogfood")
    topic = "Target Python 3.10+ minimum version"
    result = crash_cli(root, "forget", topic, "--mode", "hard", "--apply", writes=1)
    assert result.returncode == -signal.SIGKILL
    journal = root / "docs" / "memory" / ".cache" / "journal.json"
    assert topic.lower() not in journal.read_text().lower()
    assert oct(journal.stat().st_mode & 0o777) == "0o600"


def test_recovery_refuses_when_a_file_was_edited_after_the_crash(tmp_path):
    root = project(tmp_path, "dogfood")
    crashed = crash_cli(root, "enable", "areas/store", writes=1)
    assert crashed.returncode == -signal.SIGKILL
    manifest = root / "docs" / "memory" / "manifest.md"
    manifest.write_text(manifest.read_text() + "\n<!-- hand edit -->\n")
    # the killed writer's temp files (every one is written before the first rename) are swept by the next writer
    before = {k: v for k, v in tree(root).items() if not TEMP_RE.match(k.rsplit("/", 1)[-1])}
    result = cli(root, "compact", "--apply")
    assert result.returncode == 1 and "changed since" in result.stderr and "journal" in result.stderr
    assert tree(root) == before


def test_check_privacy_reports_kind_and_place_exit_1(tmp_path):
    root = project(tmp_path)
    clean = cli(root, "check", "--privacy")
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.strip() == "privacy: 0 findings"
    token = "glpat-" + "Ab3dE6gH9jK2mN5pQ8sT"
    (root / "docs" / "memory" / "constraints.md").write_text(f"# Constraints\n\n- CI uses {token}\n")
    result = cli(root, "check", "--privacy")
    assert result.returncode == 1
    assert result.stdout.startswith("constraints.md:3:11: what looks like a GitLab token")
    assert token not in result.stdout + result.stderr
    doc = json.loads(cli(root, "check", "--privacy", "--format", "json").stdout)
    assert doc == {"findings": [{"column": 11, "kind": "GitLab token", "line": 3, "path": "constraints.md"}], "ok": False}


def test_finish_interrupted_writes_after_a_crash(tmp_path):
    from memory_custodian import Memory

    root = project(tmp_path, "dogfood")
    crashed = crash_cli(root, "enable", "changelog", writes=1)
    assert crashed.returncode == 0  # changelog already exists in dogfood: nothing to write, nothing to crash
    crashed = crash_cli(root, "enable", "rules/review", writes=2)
    assert crashed.returncode == -signal.SIGKILL
    memory = Memory.open(root)
    assert memory.interrupted_write_pending()
    assert memory.finish_interrupted_writes() == (
        "finished an interrupted `enable`: 2 of 3 files had been written before it stopped; wrote the other 1")
    assert not memory.interrupted_write_pending()
    assert "`rules/review.md`" in (root / "docs" / "memory" / "manifest.md").read_text()


def test_what_the_write_path_writes_the_read_path_reads(tmp_path):
    root = project(tmp_path)
    steps = [
        ["enable", "areas/store", "--path", "src/store/**"],
        ["enable", "preferences"], ["enable", "changelog"], ["enable", "archive"],
        ["add", "Store IO is synchronous.", "--type", "constraint", "--area", "store"],
        ["add", "Quote output exactly.", "--type", "rule", "--name", "output"],
        ["add", "Use JSON files.", "--type", "decision", "--reason", "Portable.", "--scope", "storage"],
        ["add", "Prefer short flags.", "--type", "preference"],
        ["add", "Try a TUI.", "--type", "inbox"],
        ["forget", "TUI", "--mode", "hard", "--apply", "--allow-broad-match"],
        ["compact", "--apply"], ["migrate", "--apply"],
    ]
    for args in steps:
        result = cli(root, *args)
        assert result.returncode == 0, (args, result.stderr)
    check = cli(root, "check")
    assert check.returncode == 0, check.stdout + check.stderr
    read = cli(root, "read", "--task", "planning", "--path", "src/store/db.py", "--names-only")
    assert read.returncode == 0 and "areas/store.md" in read.stdout
