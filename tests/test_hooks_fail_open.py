"""Hooks fail open but never silent: one broken part never costs the others, and the agent is told.

Each fault is set up in a real project and the hook runs as a host runs it (a fresh process, the
recorded payload on stdin); the assertions read its real stdout.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from test_hooks import context_of, payload

from memory_custodian.memory import Memory

RULE = "Refunds are computed in integer cents."
DIRECTIVE = "Always run make test before pushing."


@pytest.fixture
def project(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    memory.add(f"{RULE} Floats lost cents in 2025.", "decision", reasons=["a float rounding bug"])
    memory.remember(DIRECTIVE, kind="directive", priority="high")
    memory.remember("Cents are rounded half-even by the refund exporter.", kind="finding", title="Refund rounding")
    return tmp_path, memory


def run_hook(root, event: str, **changes) -> str:
    proc = subprocess.run([sys.executable, "-m", "memory_custodian", "hook", "--host", "claude", event],
                          input=payload("claude", event, root, **changes), cwd=root, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return context_of(proc.stdout, event) if proc.stdout.strip() else ""


def shard(memory):
    return next((memory.memory_dir / "ledger").glob("*.jsonl"))


def newer_format(memory):
    line = json.loads(shard(memory).read_text().splitlines()[0])
    line.update(v=2, id="01ZZZZZZZZZZZZZZZZZZZZZZZZ")
    with shard(memory).open("a") as fh:
        fh.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
        fh.write(json.dumps({**line, "id": "01ZZZZZZZZZZZZZZZZZZZZZZZY"}, sort_keys=True, separators=(",", ":")) + "\n")


def bad_line(memory):
    text = shard(memory).read_text()
    shard(memory).write_text('{"v":1,"garbage":\n' + text)


def damaged_index(memory):
    memory.recall("refund")  # build it first
    index = memory.memory_dir / ".cache" / "index.sqlite"
    index.write_bytes(b"not a database at all" * 100)


def cache_is_a_file(memory):
    import shutil

    shutil.rmtree(memory.memory_dir / ".cache")
    (memory.memory_dir / ".cache").write_text("oops\n")


def conflict_markers(memory):
    path = memory.memory_dir / "decisions.md"
    path.write_text(path.read_text() + "<<<<<<< HEAD\n## 2026-01-01 - Ours\n=======\n## 2026-01-01 - Theirs\n>>>>>>> b\n")


def manifest_typo(memory):
    path = memory.memory_dir / "manifest.md"
    path.write_text(path.read_text().replace("### Implementation / execution / debugging", "### Implementaton"))


LEDGER_FAULTS = {"cache is a file": cache_is_a_file}
LINE_FAULTS = {"newer format": newer_format, "bad line": bad_line}
CURATED_FAULTS = {"conflict markers": conflict_markers, "manifest typo": manifest_typo}


@pytest.mark.parametrize("fault", list(LEDGER_FAULTS))
def test_a_broken_ledger_still_delivers_the_curated_rules_and_says_so(project, fault):
    root, memory = project
    LEDGER_FAULTS[fault](memory)
    start = run_hook(root, "SessionStart")
    assert RULE in start and "## decisions.md" in start  # the curated tier came through
    assert DIRECTIVE in start  # the directives need no index: read straight from the shards' good lines
    first = start.splitlines()[0]
    assert "the directives were read from the ledger files" in first
    assert first.startswith("memory-custodian · some project memory could not be loaded") and "doctor" in first
    prompt = run_hook(root, "UserPromptSubmit", prompt="how are refund cents rounded?")
    assert prompt.startswith("memory-custodian · some project memory could not be loaded") and "doctor" in prompt


@pytest.mark.parametrize("fault", list(LINE_FAULTS))
def test_a_line_this_version_cannot_read_costs_only_that_line(project, fault):
    root, memory = project
    LINE_FAULTS[fault](memory)
    start = run_hook(root, "SessionStart")
    assert RULE in start and "## decisions.md" in start and DIRECTIVE in start
    assert "could not be loaded" not in start.splitlines()[0]
    assert re.search(r"Ledger lines skipped: \d+ lines? this version cannot read", start) and "doctor" in start
    prompt = run_hook(root, "UserPromptSubmit", prompt="how are refund cents rounded?")
    assert "could not be loaded" not in prompt


def test_a_damaged_index_is_rebuilt_or_named(project):
    root, memory = project
    damaged_index(memory)
    start = run_hook(root, "SessionStart")
    assert RULE in start
    assert DIRECTIVE in start or "could not be loaded" in start.splitlines()[0]
    prompt = run_hook(root, "UserPromptSubmit", prompt="how are refund cents rounded?")
    assert "Refund rounding" in prompt or "could not be loaded" in prompt


@pytest.mark.parametrize("fault", list(CURATED_FAULTS))
def test_a_broken_curated_file_still_delivers_the_ledger_and_says_so(project, fault):
    root, memory = project
    CURATED_FAULTS[fault](memory)
    start = run_hook(root, "SessionStart")
    assert DIRECTIVE in start and "Project Brief" in start  # the ledger and the brief came through
    assert "<<<<<<<" not in start and ">>>>>>>" not in start
    first = start.splitlines()[0]
    assert first.startswith("memory-custodian · some project memory could not be loaded") and "doctor" in first
    if fault == "conflict markers":
        assert "decisions.md:" in first and "conflict markers" in first and RULE not in start
    else:
        assert "did you mean `### Implementation / execution / debugging`?" in first
    prompt = run_hook(root, "UserPromptSubmit", prompt="how are refund cents rounded?")
    assert "Refund rounding" in prompt and "could not be loaded" in prompt.splitlines()[0]


def run_hook_read_only(root, event: str) -> str:
    """The hook on a checkout it cannot write: a read-only bind mount (root writes through file modes),
    else the modes taken away."""
    import shutil
    import stat

    if hasattr(os, "geteuid") and os.geteuid() == 0:
        if not shutil.which("unshare"):
            pytest.skip("running as root, and no `unshare` to mount the checkout read-only")
        mount = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
        proc = subprocess.run(["unshare", "--mount", "sh", "-c", mount, str(root), sys.executable, "-m",
                               "memory_custodian", "hook", "--host", "claude", event],
                              input=payload("claude", event, root), cwd=root, capture_output=True, text=True,
                              timeout=60)
        if proc.returncode != 0 and ("unshare" in proc.stderr or "mount" in proc.stderr):
            pytest.skip(f"running as root, and this machine refuses a read-only mount: {proc.stderr.strip()[:200]}")
        assert proc.returncode == 0, proc.stderr
        return context_of(proc.stdout, event)
    for folder, _dirs, files in os.walk(root):
        for name in files:
            os.chmod(os.path.join(folder, name), stat.S_IRUSR)
    for folder, _dirs, _files in os.walk(root, topdown=False):
        os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR)
    try:
        return run_hook(root, event)
    finally:
        for folder, _dirs, _files in os.walk(root):
            os.chmod(folder, stat.S_IRWXU)


def test_a_read_only_checkout_still_delivers_the_curated_rules(project):
    import shutil

    root, memory = project
    shutil.rmtree(memory.memory_dir / ".cache")
    start = run_hook_read_only(root, "SessionStart")
    assert RULE in start and DIRECTIVE in start and "could not be loaded" in start.splitlines()[0]
    assert not (memory.memory_dir / ".cache").exists()


def test_a_healthy_project_has_no_problem_line(project):
    root, _ = project
    start = run_hook(root, "SessionStart")
    assert RULE in start and DIRECTIVE in start and "could not be loaded" not in start


def test_the_first_session_after_a_clone_does_not_wait_for_the_index(project, monkeypatch):
    import shutil
    import time

    from memory_custodian.agents import cold_index
    from memory_custodian.agents.hooks import run_hook as hook

    root, memory = project
    shutil.rmtree(memory.memory_dir / ".cache")  # as a fresh clone has it
    monkeypatch.setattr(cold_index, "COLD_BYTES", 0)  # this small ledger counts as a big one
    start = context_of(hook("claude", "SessionStart", payload("claude", "SessionStart", root)), "SessionStart")
    assert RULE in start and DIRECTIVE in start and "Recall is still being indexed" in start
    assert "could not be loaded" not in start
    marker = memory.memory_dir / ".cache" / "indexing"
    deadline = time.monotonic() + 60
    while marker.exists() and time.monotonic() < deadline:
        prompt = hook("claude", "UserPromptSubmit", payload("claude", "UserPromptSubmit", root,
                                                            prompt="how are refund cents rounded?"))
        told = context_of(prompt, "UserPromptSubmit")
        # while the build reads on, the prompt is answered from what it has read, saying what it has not
        assert "is not indexed yet" in told or "Refund rounding" in told
        time.sleep(0.05)
    assert not marker.exists() and (memory.memory_dir / ".cache" / "index.sqlite").exists()
    prompt = hook("claude", "UserPromptSubmit", payload("claude", "UserPromptSubmit", root, session_id="s2",
                                                        prompt="how are refund cents rounded?"))
    assert "Refund rounding" in context_of(prompt, "UserPromptSubmit")
