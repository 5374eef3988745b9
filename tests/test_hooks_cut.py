"""The session-start pack cut to the host's cap on whole entries, naming everything it left out;
hooks that keep their output when the host sends half an emoji (a lone surrogate)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import run_cli
from test_hooks import context_of, payload

from memory_custodian.agents.hooks import PROMPT_BLOCK_CHARS, START_MAX_CHARS
from memory_custodian.curated.parse.units import split_units
from memory_custodian.memory import Memory

SESSION = "9f2c1e7a-4b1d-4c3e-9a51-0d6f3e2b7c10"  # the recorded payloads' session id


def hook(root, event: str, data: str, *args: str) -> str:
    run = run_cli("hook", "--host", "claude", *args, event, cwd=root, input=data)
    assert (run.returncode, run.stderr) == (0, ""), run.stderr
    return context_of(run.stdout, event) if run.stdout else ""


def set_budget(memory, old: str, new: str) -> None:
    manifest = memory.memory_dir / "manifest.md"
    text = manifest.read_text()
    assert old in text
    manifest.write_text(text.replace(old, new))


def named(context: str, title: str) -> str:
    """What the cut notice says was left out of `title` ("" if it names nothing there)."""
    notice = context.split("## Cut to fit the host's limit\n\n", 1)[1].split("\n\n", 1)[0]
    assert "`memory-custodian read --task" in notice and "memory_context" in notice
    return next((line.split(": ", 1)[1] for line in notice.splitlines() if line.startswith(f"- {title}: ")), "")


def injected(memory) -> set[str]:
    state = json.loads((memory.memory_dir / ".cache/sessions" / f"s-{SESSION}.json").read_text())
    return set(state["injected"])


@pytest.fixture
def directives(tmp_path):
    """Seventy directives that `read` loads in full (10,000+ characters), a brief cut by its budget
    (so the pack has a `## Not loaded` block) and a write journal a killed command left (a `## Warnings`)."""
    memory = Memory.open(tmp_path)
    memory.init()
    set_budget(memory, "- ledger directives: 800 tokens max", "- ledger directives: 6000 tokens max")
    set_budget(memory, "- brief.md: 500 tokens max", "- brief.md: 60 tokens max")
    (memory.memory_dir / "brief.md").write_text(
        "# Project Brief\n\n" + "".join(f"- Fact {i}: the shop exports refunds nightly as CSV.\n" for i in range(12)))
    notes = {memory.remember(f"Directive {i}: never merge a migration without a rollback script; release {i} "
                             "was stuck for a day because the schema change could not be undone in production.",
                             kind="directive", priority="high").id: i for i in range(70)}
    (memory.memory_dir / ".cache/journal.json").write_text(json.dumps({"v": 1, "label": "forget (soft)", "changes": []}))
    return tmp_path, memory, notes


@pytest.mark.parametrize("how", ["session start", "re-sent after compaction"])
def test_directives_over_the_cap_are_cut_whole_and_named(directives, how):
    root, memory, notes = directives
    pack = memory.read("preferences")
    section = next(s for s in pack.sections if s.name == "Ledger directives")
    assert set(section.note_ids) == set(notes) and not section.omitted  # read loads every one
    notes_block = pack.rendered[pack.rendered.index("\n## Not loaded\n") + 1:].strip()
    assert "brief.md: " in notes_block and "\n## Warnings\n" in notes_block

    context = hook(root, "SessionStart", payload("claude", "SessionStart", root), "--task", "preferences")
    limit = START_MAX_CHARS
    if how != "session start":
        hook(root, "PreCompact", payload("claude", "PreCompact", root), "--task", "preferences")
        prompt = payload("claude", "UserPromptSubmit", root, prompt="which rollback script should the migration ship?")
        context = hook(root, "UserPromptSubmit", prompt, "--task", "preferences")
        limit -= PROMPT_BLOCK_CHARS
    pack_part = context.split("\n\nmemory-custodian · notes that match", 1)[0]
    assert len(pack_part) <= limit and len(context) <= START_MAX_CHARS
    assert notes_block in context  # what read left out, and its warnings, survive the cut
    assert "… cut at" not in context

    shown = {note_id for note_id in notes if f"[#{note_id}]" in pack_part}
    for note_id in shown:  # a directive is there whole or not at all (its title line, then the rest of its text)
        block = pack_part.split(f"[#{note_id}]", 1)[1].split("\n\n", 1)[0]
        assert f"Directive {notes[note_id]}: never merge" in block and "could not be undone in production." in block
    dropped = set(notes) - shown
    assert shown and dropped
    assert sorted(named(context, "Ledger directives").split(", ")) == sorted(f"#{i}" for i in dropped)
    # only what the agent saw counts as shown: a later prompt may still bring a dropped directive
    assert injected(memory) & set(notes) == shown


def test_curated_pack_keeps_directives_and_rules_first_and_names_every_entry_left_out(memory):
    """Every file within its budget, the pack over the cap: directives, constraints and tombstones
    come through whole; the cut falls on decisions, entry by entry, each one named."""
    root = memory.root
    for name, tokens in (("decisions.md", 800), ("constraints.md", 400), ("do-not-use.md", 400)):
        set_budget(memory, f"- {name}: {tokens} tokens max", f"- {name}: 5000 tokens max")
    (memory.memory_dir / "decisions.md").write_text("# Decisions\n\nEntries are newest first.\n\n" + "\n".join(
        f"## 2026-07-{i + 1:02d} - Decision number {i}\nDecision:\nUse approach {i} for subsystem {i}, with every "
        f"detail that matters.\nReason:\nMeasured in PR {100 + i}; the alternative was slower by a wide margin.\n"
        for i in range(40)))
    (memory.memory_dir / "constraints.md").write_text("# Constraints\n\n" + "".join(
        f"- Must keep constraint {i} in force: the deploy pipeline checks it.\n" for i in range(25)))
    (memory.memory_dir / "do-not-use.md").write_text("# Do Not Use / Tombstones\n\n" + "\n".join(
        f"## Tombstone: library {i}\nDo not use library {i}; it leaked memory under load.\n" for i in range(12)))
    ids = [memory.remember(f"Directive {i}: run the full suite before pushing.", kind="directive").id for i in range(3)]
    pack = memory.read("implementation")
    assert not pack.omissions and len(pack.rendered) > START_MAX_CHARS

    context = hook(root, "SessionStart", payload("claude", "SessionStart", root))
    assert len(context) <= START_MAX_CHARS
    assert pack.rendered[pack.rendered.index("\n## Not loaded\n") + 1:].strip() in context
    assert all(f"[#{i}]" in context for i in ids)
    for module in pack.modules:
        if module.disposition != "loaded":
            continue
        units = split_units(module.text).units
        left_out = named(context, module.module)
        if module.module in ("constraints.md", "do-not-use.md"):
            assert not left_out
        for unit in units:
            if unit.text.strip() in context:
                continue
            assert unit.text.strip().splitlines()[0] not in context  # never half an entry
            assert unit.ref in left_out or left_out.startswith("the whole file")
    assert "2026-07-40 - Decision number 39" in named(context, "decisions.md")
    assert "## 2026-07-01 - Decision number 0\n" in context  # decisions are cut from their end


# ---- half an emoji in what the host sends --------------------------------------------------------

@pytest.fixture
def journal(memory):
    note = memory.remember("The journal must be fsynced before the rename.", kind="gotcha",
                           title="Fsync the journal before the rename", paths=["src/store/**"])
    return memory.root, memory, note


def test_prompt_with_a_lone_surrogate_still_gets_its_notes(journal):
    root, memory, note = journal
    data = payload("claude", "UserPromptSubmit", root, prompt="journal fsynced before the rename please \ud83d")
    assert "\\ud83d" in data
    assert f"[#{note.id}]" in hook(root, "UserPromptSubmit", data)
    state = (memory.memory_dir / ".cache/sessions" / f"s-{SESSION}.json").read_bytes().decode("utf-8")
    assert json.loads(state)["last_message"]["text"].startswith("journal fsynced before the rename please ")


def test_undecodable_bytes_and_surrogate_paths_do_not_lose_the_output(journal):
    root, _, note = journal
    data = payload("claude", "UserPromptSubmit", root, prompt="journal fsynced before the rename please XX")
    run = subprocess.run([sys.executable, "-m", "memory_custodian", "hook", "UserPromptSubmit"], cwd=root,
                         input=data.encode().replace(b"XX", b"\xff\xfe"), capture_output=True, timeout=60)
    assert (run.returncode, run.stderr) == (0, b"")
    assert f"[#{note.id}]" in context_of(run.stdout.decode(), "UserPromptSubmit")
    tool = payload("claude", "PreToolUse", root, session_id="other",
                   tool_input={"file_path": f"{root}/src/store/engine\ud83d.py"})
    assert f"[#{note.id}]" in hook(root, "PreToolUse", tool)


def test_a_file_of_hundreds_of_entries_is_cut_to_what_fits_and_its_names_are_capped(tmp_path):
    """A budget that lets 600 decisions load: the hook keeps as many whole entries as fit (not none,
    which naming every dropped heading would force), names the first dropped ones and counts the
    rest, pointing to `read --explain` for every name."""
    memory = Memory.open(tmp_path)
    memory.init()
    set_budget(memory, "- decisions.md: 800 tokens max", "- decisions.md: 1000000 tokens max")
    (memory.memory_dir / "decisions.md").write_text("# Decisions\n\nEntries are newest first.\n\n" + "".join(
        f"## 2026-11-30 - Decision number {i} about the store\nDecision:\nUse the x{i} variant.\n\n"
        for i in range(600)))
    context = hook(tmp_path, "SessionStart", payload("claude", "SessionStart", tmp_path))
    assert len(context) <= START_MAX_CHARS
    kept = context.count("## 2026-11-30 - Decision number")
    assert kept >= 40  # most of the room goes to entries, not to their names
    said = named(context, "decisions.md")
    assert said.startswith(f"{600 - kept} of 600 entries: 2026-11-30 - Decision number {kept} about the store; ")
    assert said.count("; 2026-11-30 - Decision number") == 19  # twenty names, then a count
    assert said.endswith(f"; and {600 - kept - 20} more (`memory_context` (MCP) or "
                         "`memory-custodian read --task implementation --explain` names every one)")
