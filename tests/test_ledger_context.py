"""The ledger's sections of the context pack: directives in full, gotchas by path, recall lines, budgets."""

from __future__ import annotations

from conftest import run_cli

from memory_custodian.cli.terms import CLI_TERMS
from memory_custodian.ledger.pack_sections import ledger_sections


def test_empty_ledger_has_no_sections(mem):
    assert ledger_sections(mem, task="implementation") == []


def test_directives_gotchas_and_recall(mem):
    d1 = mem.remember("Never push to main directly\nOpen a pull request instead.", kind="directive", priority="high")
    d2 = mem.remember("Run the formatter before committing", kind="directive", actor="agent")
    revoked = mem.remember("Always use tabs", kind="directive")
    mem.revoke(revoked.id, reason="we use spaces")
    g = mem.remember("The daemon holds the workspace lock across restarts", kind="gotcha", paths=["src/daemon/"])
    other = mem.remember("CSS grid breaks in Safari", kind="gotcha", paths=["web/"])
    f = mem.remember("sqlite WAL checkpoints stall the daemon under load", paths=["src/daemon/server.py"])
    secs = ledger_sections(mem, task="implementation", paths=("src/daemon/server.py",), query="daemon stall")
    by_name = {s.name: s for s in secs}
    assert list(by_name) == ["Ledger directives", "Ledger gotchas", "Ledger recall"]
    directives = by_name["Ledger directives"]
    assert directives.note_ids == [d1.id, d2.id]
    assert "Open a pull request instead." in directives.text and revoked.id not in directives.text
    assert "memory to verify, recorded by an AI session" in directives.text
    assert by_name["Ledger gotchas"].note_ids == [g.id] and other.id not in by_name["Ledger gotchas"].text
    recall = by_name["Ledger recall"]
    assert recall.note_ids == [f.id]  # notes already shown above are not repeated
    assert recall.text.splitlines()[0].startswith(f"[#{f.id}] finding/medium · ")
    assert recall.text.splitlines()[-1] == "`Memory.expand(ids=ID)` for full notes"  # nothing left out: no "0 more"
    # each caller words the hint: the command line by its command
    cli = ledger_sections(mem, task="implementation", paths=("src/daemon/server.py",), query="daemon stall",
                          terms=CLI_TERMS)
    assert cli[-1].text.splitlines()[-1] == "`memory-custodian expand ID` for full notes"
    assert all(s.omitted == [] for s in secs)


def test_budgets_drop_whole_notes_and_name_them(mem):
    from memory_custodian.base.tokens import estimate_tokens

    for i in range(5):
        mem.remember(f"directive number {i}: " + "word " * 40, kind="directive")
    [full] = ledger_sections(mem, task="general", budgets={"directives": 100000})
    assert len(full.note_ids) == 5 and full.omitted == []
    blocks = full.text.strip().split("\n\n")
    budget = estimate_tokens(blocks[0] + "\n\n" + blocks[1])
    [sec] = ledger_sections(mem, task="general", budgets={"directives": budget})
    assert sec.note_ids == full.note_ids[:2] and sec.tokens <= budget and sec.budget == budget
    assert [o.ref for o in sec.omitted] == [f"#{i}" for i in full.note_ids[2:]]
    assert all(o.reason == "omitted-by-budget" and o.module == "ledger:directives" for o in sec.omitted)
    [tiny] = ledger_sections(mem, task="general", budgets={"directives": 5})
    assert tiny.note_ids == full.note_ids[:1] and tiny.oversized and len(tiny.omitted) == 4


def test_read_includes_the_ledger(mem):
    mem.remember("Never commit secrets", kind="directive")
    r = run_cli("read", "--task", "implementation", "--project-root", str(mem.root))
    assert r.returncode == 0, r.stderr
    assert "## Ledger directives" in r.stdout and "Never commit secrets" in r.stdout


def test_the_pack_decodes_only_what_its_budget_takes(mem):
    """40 directives for a budget of two: the omitted ones are named from the index, never decoded."""
    from memory_custodian.ledger.index.in_force import PAGE

    made = [mem.remember(f"directive number {i}: " + "word " * 40, kind="directive").id for i in range(40)]
    [full] = ledger_sections(mem, task="general", budgets={"directives": 100000})
    assert sorted(full.note_ids) == sorted(made)
    budget = sum(len(b.split()) for b in full.text.strip().split("\n\n")[:2]) * 2
    from memory_custodian import Memory

    mem = Memory.open(mem.root)  # a fresh process's: no note read yet
    index = mem.index()
    statements: list[str] = []
    index.db.set_trace_callback(statements.append)
    try:
        [sec] = ledger_sections(mem, task="general", budgets={"directives": budget})
    finally:
        index.db.set_trace_callback(None)
    assert 1 <= len(sec.note_ids) < 40 and sec.note_ids == full.note_ids[:len(sec.note_ids)]
    assert [o.ref for o in sec.omitted] == [f"#{i}" for i in full.note_ids[len(sec.note_ids):]]
    decoded = [s for s in statements if "JOIN note_text" in s]
    assert decoded and sum(s.count("'") // 2 for s in decoded) <= PAGE  # one page of ids at most
