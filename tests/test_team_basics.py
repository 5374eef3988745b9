"""What a team meets first: init lands where the agent looks, a core file routed nowhere is said out loud, an
idle session leaves no task for everyone, and the messages say what is true."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import run_cli
from test_hooks import context_of, payload

from memory_custodian.agents.hooks import run_hook
from memory_custodian.base.errors import short_line
from memory_custodian.curated.parse.conflicts import ADVICE
from memory_custodian.curated.write.merge_entries import CONFLICT_HEAD
from memory_custodian.memory import Memory


def repo(path):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


# ---- init lands where the agent looks --------------------------------------------------------------

def test_init_from_a_subdirectory_writes_at_the_top_level_and_says_so(tmp_path):
    root = repo(tmp_path / "shop")
    sub = root / "src" / "app"
    sub.mkdir(parents=True)
    proc = run_cli("init", "--agent", "claude", cwd=sub, as_typed=True)
    assert proc.returncode == 0, proc.stderr
    assert f"using the repository's top level {root}" in proc.stderr and "src/app" in proc.stderr
    assert (root / "docs/memory/manifest.md").is_file() and (root / ".claude/settings.json").is_file()
    assert list(sub.iterdir()) == []


def test_init_outside_a_repository_asks_for_the_root_and_writes_nothing(tmp_path):
    here = tmp_path / "loose"
    here.mkdir()
    proc = run_cli("init", cwd=here, as_typed=True)
    assert proc.returncode == 2 and "not inside a git repository" in proc.stderr and "--project-root" in proc.stderr
    assert list(here.iterdir()) == []
    assert run_cli("init", "--project-root", str(here), cwd=here, as_typed=True).returncode == 0  # named: written


def test_init_never_takes_the_home_folder_by_default(tmp_path):
    home = repo(tmp_path / "home")  # a dotfiles repository at home
    (home / "notes").mkdir()
    proc = run_cli("init", cwd=home / "notes", env={"HOME": str(home)}, as_typed=True)
    assert proc.returncode == 2 and "your home folder" in proc.stderr
    assert not (home / "docs").exists()



def test_a_nested_repository_never_uses_the_outer_projects_memory(tmp_path):
    """A clone inside another project's checkout (or a submodule) is its own repository: its commands
    found the outer memory folder and wrote notes into the outer ledger; now they stop at its top level."""
    outer = repo(tmp_path / "outer")
    assert run_cli("init", cwd=outer, as_typed=True).returncode == 0
    assert run_cli("remember", "The outer note", cwd=outer / "docs", as_typed=True).returncode == 0  # a subfolder: found
    ledger = outer / "docs" / "memory" / "ledger"
    shards = {p.name: p.read_bytes() for p in ledger.glob("*.jsonl")}
    inner = repo(outer / "vendor" / "lib")
    proc = run_cli("remember", "An inner note", cwd=inner / ".", as_typed=True)
    assert proc.returncode == 2 and "memory" in proc.stderr  # no memory folder of its own: said, not borrowed
    assert {p.name: p.read_bytes() for p in ledger.glob("*.jsonl")} == shards
    proc = run_cli("init", cwd=inner, as_typed=True)
    assert proc.returncode == 0 and "memory folder is at" not in proc.stderr, proc.stderr
    assert (inner / "docs/memory/manifest.md").is_file()
    assert run_cli("remember", "An inner note", cwd=inner, as_typed=True).returncode == 0
    assert {p.name: p.read_bytes() for p in ledger.glob("*.jsonl")} == shards


def test_a_session_whose_agent_went_into_a_submodule_still_gets_its_projects_memory(tmp_path):
    """The host's `cwd` follows the agent into a nested repository; the hooks running are the outer
    project's, so they bring its memory (the host's project folder), never silence."""
    outer = repo(tmp_path / "outer")
    assert run_cli("init", cwd=outer, as_typed=True).returncode == 0
    assert run_cli("remember", "--kind", "directive", "Never push to main directly", cwd=outer,
                   as_typed=True).returncode == 0
    inner = repo(outer / "vendor" / "lib")
    for env, where in (({"CLAUDE_PROJECT_DIR": str(outer)}, inner), ({}, outer), ({}, inner)):
        # the host's project folder named, or the hook started there, or neither: the project around the cwd
        hook = run_cli("hook", "--host", "claude", "SessionStart", cwd=where, env=env,
                       input=payload("claude", "SessionStart", inner))
        assert hook.returncode == 0, hook.stderr
        assert "Never push to main directly" in context_of(hook.stdout, "SessionStart")

# ---- a core file routed nowhere -------------------------------------------------------------------

def test_an_empty_always_load_is_a_check_problem_and_a_line_in_the_pack(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    (memory.memory_dir / "brief.md").write_text("# Brief\n\nA shop that sells maps.\n")
    manifest = memory.memory_dir / "manifest.md"
    manifest.write_text(manifest.read_text().replace("## Always load\n- brief.md\n", "## Always load\n"))
    check = run_cli("check", "--project-root", str(tmp_path))
    assert check.returncode == 1 and "core-not-routed" in check.stdout and "brief.md is a core file" in check.stdout
    pack = memory.read("implementation")
    assert "A shop that sells maps" not in pack.rendered
    assert any("brief.md is a core file but no route loads it" in w for w in pack.warnings)
    assert "brief.md is a core file" in pack.rendered  # the agent reading the pack is told too


# ---- no record of nothing ---------------------------------------------------------------------------

def hook(root, event: str, **changes) -> str:
    return run_hook("claude", event, payload("claude", event, root, **changes))


def test_a_session_that_only_asked_a_question_leaves_no_task(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    hook(tmp_path, "SessionStart")
    hook(tmp_path, "UserPromptSubmit", prompt="what does the refund service do exactly?")
    hook(tmp_path, "SessionEnd")
    assert [n for n in memory.notes() if n.kind == "task"] == []
    hook(tmp_path, "SessionStart", session_id="s2")
    hook(tmp_path, "UserPromptSubmit", session_id="s2", prompt="fix the rounding of refunds please")
    hook(tmp_path, "PreToolUse", session_id="s2", tool_name="Edit", tool_input={"file_path": "src/pay.py"})
    hook(tmp_path, "SessionEnd", session_id="s2")
    assert [n.kind for n in memory.notes() if n.kind == "task"] == ["task"]  # a session that changed files: one


def test_idle_checkpoints_never_crowd_out_a_real_open_task(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    real = memory.remember("Finish the refund migration: step 3 of 5 done", kind="task", priority="low",
                           title="Refund migration")
    for i in range(12):  # what older versions wrote for every idle session
        memory.remember(f'Last request: "question {i}"\nFiles changed: none seen by the hooks\nBranch: main\n'
                        "Notes written meanwhile: none", kind="task", actor="auto", tags=("session-checkpoint",),
                        title=f"Last session: question {i}")
    start = context_of(hook(tmp_path, "SessionStart"), "SessionStart")
    assert f"#{real.id}" in start and "12 idle automatic checkpoints not listed" in start
    assert "question 3" not in start


# ---- messages that say what is true --------------------------------------------------------------

def test_an_id_with_letters_no_id_has_is_named_as_such(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    memory.remember("a note to look up later")
    proc = run_cli("expand", "nosuchid", "--project-root", str(tmp_path))
    assert proc.returncode == 2 and "at least 4 characters" not in proc.stderr
    assert "'nosuchid' is not a note id: it has 'i', 'o', 'u'" in proc.stderr


def test_doctor_outside_a_project_names_the_cli_fix(tmp_path):
    proc = run_cli("doctor", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "run `memory-custodian init` first, or pass --project-root" in proc.stderr
    assert "Memory.init" not in proc.stderr


def test_a_compact_target_given_from_the_project_root_is_the_file_meant(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    memory.add("Use Postgres for orders", type="decision", reasons=["ops know it"])
    proc = run_cli("compact", "--target", "docs/memory/decisions.md", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    wrong = run_cli("compact", "--target", "docs/memory/nope.md", "--project-root", str(tmp_path))
    assert wrong.returncode == 2 and "docs/memory/docs/memory" not in wrong.stderr
    assert "'docs/memory/nope.md' does not exist" in wrong.stderr


def test_remember_and_read_take_a_backslashed_path_the_same_way(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    proc = run_cli("remember", "Refunds round half up", "--kind", "gotcha", "--path", "src\\pay.py",
                   "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    note = memory.note(proc.stdout.split()[0].lstrip("#"))
    assert note.paths == ("src/pay.py",)
    read = run_cli("read", "--task", "implementation", "--path", "src\\pay.py", "--project-root", str(tmp_path))
    assert read.returncode == 0 and "Refunds round half up" in read.stdout


def test_a_failing_file_is_named_without_a_raw_errno(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError) as err:
        (tmp_path / "file" / "inside").write_text("y")  # a real error: a file where a folder must be
    line = short_line(err.value)
    assert "Errno" not in line and "OSError" not in line and f"could not use {tmp_path / 'file' / 'inside'}" in line


def test_a_conflict_is_worded_the_same_by_the_marker_and_by_check():
    for text in (CONFLICT_HEAD, ADVICE):
        assert "keep the right version (or write one that combines them)" in text and "both sides' entries" not in text


def test_the_json_of_init_names_where_this_clone_finds_its_installation(tmp_path):
    root = repo(tmp_path / "r")
    proc = run_cli("init", "--agent", "claude", "--format", "json", cwd=root)
    assert json.loads(proc.stdout)["agents"]["setting"] == "unchanged"  # the memory's init already set it
    from memory_custodian.base.launcher import current_launcher

    setting = subprocess.run(["git", "config", "memory-custodian.command"], cwd=root, capture_output=True, text=True)
    assert setting.stdout.strip() == current_launcher().posix_command()
