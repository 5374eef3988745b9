"""A command reads at most one step of a backlog of shard lines (`limits.INDEX_LINES_PER_COMMAND`),
answers from what is indexed and says what it has not read; a detached process reads the rest.

What must hold: an index read step by step, however the steps fall across txns and shards, equals a
rebuild; an answer from part of the ledger says so in every form; the directives reach the pack all
the same; a change to a note is refused (nothing written) until the index holds every event; and
the real CLI, with a real detached build, answers at once and then in full.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import run_cli_process

from memory_custodian import Memory
from memory_custodian.base.errors import NotFound, Refused
from memory_custodian.base.limits import INDEX_LINES_PER_COMMAND
from memory_custodian.ledger import api
from memory_custodian.ledger.index import background
from memory_custodian.ledger.index.index import Index
from memory_custodian.ledger.storage.store import Ledger


def _project(root) -> Memory:
    (root / "docs" / "memory").mkdir(parents=True)
    (root / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
    return Memory.open(root)


def _fill(mem: Memory) -> dict:
    """Notes of every shape a catch-up must fold: multi-event txns, lifecycle, forget, two shards."""
    rule = mem.remember("Never push to main without a review.", kind="directive", priority="high")
    notes = [mem.remember(f"finding {i}: the cache warms in {i} ms", tags=[f"t{i % 3}"], paths=[f"src/m{i}.py"])
             for i in range(12)]
    mem.supersede(notes[0].id, "the cache warms in 3 ms now", reason="measured again")  # one txn, two notes
    mem.revoke(notes[1].id, reason="wrong")
    mem.flag_stale(notes[2].id, reason="old")
    mem.forget_note(notes[3].id)
    late = mem.remember("Deploy only from the release branch.", kind="directive")
    # the same events in two shards, as a month boundary leaves them
    ledger = Ledger(mem.memory_dir_str)
    (only,) = ledger.shards()
    lines = Path(only).read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    (mem.memory_dir / "ledger" / "2026-01.jsonl").write_bytes(b"".join(lines[:half]))
    Path(only).write_bytes(b"".join(lines[half:]))
    return {"rule": rule.id, "late": late.id, "first": notes[4].id}


def _state(index: Index) -> list:
    return sorted(json.dumps(n.to_dict(), sort_keys=True) for n in index.all_notes())


@pytest.mark.parametrize("lines", [1, 2, 3, 5, 1000])
def test_an_index_read_step_by_step_equals_a_rebuild(tmp_path, lines):
    mem = _project(tmp_path)
    _fill(mem)
    whole = Index(Ledger(mem.memory_dir_str))
    whole.rebuild()
    expected = _state(whole)
    whole.close()
    (mem.memory_dir / ".cache" / "index.sqlite").unlink()
    stepped = Index(Ledger(mem.memory_dir_str))
    steps = 0
    while True:
        stepped.catch_up(budget=(lines, 10 ** 9), background=False)
        steps += 1
        if not stepped.unread()[0]:
            break
        assert steps < 1000
    assert _state(stepped) == expected
    assert stepped.catch_up(budget=(lines, 10 ** 9), background=False)["mode"] == "current"
    if lines < 5:
        assert steps > 5  # it did go step by step
    stepped.close()


def test_a_byte_budget_stops_a_step_too(tmp_path):
    mem = _project(tmp_path)
    _fill(mem)
    (mem.memory_dir / ".cache" / "index.sqlite").unlink()
    index = Index(Ledger(mem.memory_dir_str))
    index.catch_up(budget=(10 ** 6, 1), background=False)  # at least one line a step, never more past the bytes
    size, shards = index.unread()
    total = sum(st.st_size for st in Ledger(mem.memory_dir_str).shard_stats().values())
    assert 0 < size < total and shards == 2
    index.close()


@pytest.fixture
def partial(tmp_path, monkeypatch):
    """A project whose commands read 2 lines a step, and no detached build to read on."""
    mem = _project(tmp_path)
    ids = _fill(mem)
    (mem.memory_dir / ".cache" / "index.sqlite").unlink()
    started = []
    monkeypatch.setattr(api, "COMMAND_BUDGET", (2, 10 ** 9))
    monkeypatch.setattr(background, "start", lambda *a: started.append(a) or True)
    import memory_custodian.ledger.index.index as index_module

    monkeypatch.setattr(index_module, "start_building", lambda *a: started.append(a) or True)
    return Memory.open(tmp_path), ids, started


def test_a_recall_from_part_of_the_ledger_says_so_and_starts_the_build(partial):
    mem, _, started = partial
    res = mem.recall("cache warms")
    assert res.unread[0] > 0 and started
    assert "of the ledger (2 shards) is not indexed yet" in res.render_text()
    assert "`Memory.reindex` reads it now" in res.render_text()
    assert res.to_dict()["unread"]["bytes"] == res.unread[0]


def test_the_pack_still_holds_every_directive_and_says_what_is_unread(partial):
    mem, _, _ = partial
    pack = mem.read("implementation").rendered
    assert "Never push to main without a review." in pack and "Deploy only from the release branch." in pack
    assert "Ledger not read in full" in pack


def test_a_change_to_a_note_waits_for_every_event_and_changes_nothing(partial):
    mem, ids, _ = partial
    shards = {p: Path(p).read_bytes() for p in Ledger(mem.memory_dir_str).shards()}
    with pytest.raises(Refused, match="nothing was changed"):
        mem.revoke(ids["rule"], reason="no longer")
    with pytest.raises(Refused, match="nothing was changed"):
        mem.supersede(ids["rule"], "Never push to main.", reason="shorter")
    assert {p: Path(p).read_bytes() for p in shards} == shards


def test_an_id_not_indexed_yet_is_not_called_missing(partial):
    mem, ids, _ = partial
    with pytest.raises(NotFound, match="not indexed yet"):
        mem.expand([ids["late"]])


def _big_project(root, extra: int) -> Memory:
    mem = _project(root)
    mem.remember("Never push to main without a review.", kind="directive", priority="high")
    (shard,) = Ledger(mem.memory_dir_str).shards()
    seed = json.loads(Path(shard).read_text(encoding="utf-8").splitlines()[0])
    with open(shard, "a", encoding="utf-8") as fh:
        for i in range(extra):
            ev = dict(seed, id=f"01M8{i:022d}", txn=f"01M9{i:022d}", note=f"{i:08d}".replace("0", "a"),
                      body=f"note {i} about the cache", title=f"note {i}", kind="finding", priority="medium")
            fh.write(json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n")
    mem.remember("The last note: the release branch is frozen on Fridays.")
    return mem


def test_the_cli_answers_at_once_from_one_step_and_in_full_after_the_detached_build(tmp_path):
    mem = _big_project(tmp_path, INDEX_LINES_PER_COMMAND + 400)
    first = run_cli_process("recall", "release branch frozen", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "is not indexed yet" in first.stdout and "memory-custodian reindex" in first.stdout
    deadline = time.monotonic() + 60
    while background.building(mem.memory_dir_str) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (mem.memory_dir / ".cache" / "indexing").exists()
    full = run_cli_process("recall", "release branch frozen", cwd=tmp_path)
    assert full.returncode == 0 and "not indexed" not in full.stdout
    assert "The last note: the release branch is frozen on Fridays." in full.stdout


def test_a_recall_ranks_the_newest_notes_past_the_limit_and_counts_the_rest(tmp_path, monkeypatch):
    from memory_custodian.ledger.recall import ranking, recall_plan

    mem = _project(tmp_path)
    old = mem.remember("the cache note about the zebra crossing", title="zebra").id
    made = [mem.remember(f"the cache note {i}", title=f"cache {i}").id for i in range(30)]
    index = mem.index()
    rowids = dict(index.db.execute("SELECT id, rowid FROM notes"))
    before = mem.recall("cache note", limit=5)
    assert before.unranked == 0 and "not ranked" not in before.render_text()
    # a ledger past the limit, in miniature: the newest ten of thirty-one ranked
    monkeypatch.setattr(recall_plan, "RANKED_NOTES", 10)
    monkeypatch.setattr(recall_plan, "WINDOW_RARE_MAX", 3)
    monkeypatch.setattr(ranking, "TIER_MIN_NOTES", 0)
    monkeypatch.setattr(ranking, "CANDIDATE_LIMIT", 5)
    monkeypatch.setattr(ranking, "FILTERED_CANDIDATE_LIMIT", 5)
    res = mem.recall("cache note", limit=5)
    newest = sorted(rowids.values())[-10:]
    assert res.unranked == 21 and res.matched == 10 and len(res.hits) == 5
    assert all(rowids[h.note.id] >= newest[0] for h in res.hits) and {h.note.id for h in res.hits} <= set(made)
    assert "21 older notes match its words and were not ranked" in res.render_text()
    assert res.to_dict()["unranked"] == 21
    # an old note holding a rare word of the question is ranked all the same
    rare = mem.recall("cache zebra", limit=5)
    assert rare.hits[0].note.id == old and rare.unranked == 20 and rare.matched == 11


def test_the_prompt_and_file_hooks_say_what_they_could_not_search(partial):
    from test_hooks import context_of, payload

    from memory_custodian.agents.hooks import run_hook

    mem, _, started = partial
    root = mem.root
    prompt = run_hook("claude", "UserPromptSubmit", payload("claude", "UserPromptSubmit", root,
                                                          prompt="how fast does the cache warm?"))
    told = context_of(prompt, "UserPromptSubmit")
    assert "is not indexed yet" in told and started
    pre = payload("claude", "PreToolUse", root, tool_name="Read", tool_input={"file_path": str(root / "src/m5.py")})
    told = context_of(run_hook("claude", "PreToolUse", pre), "PreToolUse")
    assert "is not indexed yet" in told


def _append_creates(shard, count: int, tag: str) -> None:
    seed = json.loads(Path(shard).read_text(encoding="utf-8").splitlines()[0])
    with open(shard, "a", encoding="utf-8") as fh:
        for i in range(count):
            ev = dict(seed, id=f"01M7{tag}{i:021d}", txn=f"01M6{tag}{i:021d}", note=f"{tag}{i:07d}".replace("0", "b"),
                      body=f"bulk note {i} about the cache", title=f"bulk {i}", kind="finding", priority="medium",
                      actor="human", provenance="human", paths=[], tags=[])
            fh.write(json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n")


def test_a_pull_that_brings_thousands_of_lines_is_answered_at_once_and_said(tmp_path, git):
    """Two clones and real git: A pushes a big ledger and a rule; B, whose index was current, pulls
    it through the ledger's merge driver and keeps working while its index reads the rest."""
    origin, a, b = tmp_path / "origin.git", tmp_path / "a", tmp_path / "b"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(a))
    assert run_cli_process("init", cwd=a).returncode == 0
    assert run_cli_process("remember", "The cache warms in 3 ms.", cwd=a).returncode == 0
    git(a, "add", "-A")
    git(a, "commit", "-qm", "memory")
    git(a, "push", "-q", "origin", "HEAD:main")
    git(tmp_path, "clone", "-q", str(origin), str(b))
    assert run_cli_process("init", cwd=b).returncode == 0
    mine = run_cli_process("remember", "B's own finding about the queue.", "--format", "json", cwd=b)
    mine_id = json.loads(mine.stdout)["id"]
    git(b, "add", "-A")
    git(b, "commit", "-qm", "b's note")

    (shard,) = (a / "docs" / "memory" / "ledger").glob("*.jsonl")
    _append_creates(shard, 2 * INDEX_LINES_PER_COMMAND + 600, "c")
    rule = run_cli_process("remember", "Never deploy on Fridays.", "--kind", "directive", "--priority", "high", cwd=a)
    assert rule.returncode == 0, rule.stderr
    git(a, "add", "-A")
    git(a, "commit", "-qm", "a big ledger")
    git(a, "push", "-q", "origin", "HEAD:main")

    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    # a build that stalls (its marker fresh, no step committed): B reads its own step, from the start
    memory_dir = str(b / "docs" / "memory")
    open(background.marker(memory_dir), "w").close()
    pack = run_cli_process("read", "--task", "implementation", cwd=b)
    assert pack.returncode == 0, pack.stderr
    assert "Never deploy on Fridays." in pack.stdout and "Ledger not read in full" in pack.stdout
    before = {p: p.read_bytes() for p in (b / "docs" / "memory" / "ledger").glob("*.jsonl")}
    refused = run_cli_process("revoke", mine_id, "--reason", "wrong", cwd=b)
    assert refused.returncode == 1 and "nothing was changed" in refused.stderr
    assert {p: p.read_bytes() for p in before} == before
    os.unlink(background.marker(memory_dir))  # the stalled build is gone: the next command starts one
    assert "is not indexed yet" in run_cli_process("recall", "cache", cwd=b).stdout
    deadline = time.monotonic() + 90
    while background.building(memory_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    found = run_cli_process("recall", "bulk note 10599 cache", cwd=b)
    assert "not indexed" not in found.stdout and "bulk 10599" in found.stdout
    assert run_cli_process("revoke", mine_id, "--reason", "wrong", cwd=b).returncode == 0


def test_a_killed_build_stops_counting_at_once_and_a_failed_one_is_named(tmp_path):
    import signal
    import subprocess
    import sys

    mem = _big_project(tmp_path, INDEX_LINES_PER_COMMAND + 400)
    memory_dir = mem.memory_dir_str
    (mem.memory_dir / ".cache").mkdir(exist_ok=True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Path(background.marker(memory_dir)).write_text(str(sleeper.pid), encoding="ascii")
    assert background.building(memory_dir)
    sleeper.send_signal(signal.SIGKILL)
    sleeper.wait()
    assert not background.building(memory_dir)  # the marker is fresh, its build is gone
    # a build that failed says why, in the answers of the commands that read on meanwhile
    os.unlink(background.marker(memory_dir))
    Path(memory_dir, ".cache", background.FAILED).write_text("disk full (errno 28)", encoding="utf-8")
    Path(background.marker(memory_dir)).write_text("", encoding="ascii")  # a build just starting: no pid yet
    res = Memory.open(tmp_path).recall("cache")
    assert "the last background read failed: disk full (errno 28)" in res.render_text()


def test_a_reindex_past_the_bulk_size_reads_in_steps_and_equals_one_pass(tmp_path, monkeypatch):
    import memory_custodian.ledger.index.index as index_module

    mem = _project(tmp_path)
    _fill(mem)
    whole = Index(Ledger(mem.memory_dir_str))
    assert whole.rebuild()["mode"] == "rebuild"
    expected = _state(whole)
    monkeypatch.setattr(index_module, "BULK_REBUILD_BYTES", 0)
    monkeypatch.setattr(index_module, "STEP_BUDGET", (3, 10 ** 9))
    seen: list[float] = []
    result = whole.rebuild(progress=seen.append)
    assert _state(whole) == expected and not whole.unread()[0]
    assert result["notes"] == len(expected) and result["shards"] == 2
    assert len(seen) > 3 and seen[-1] == 1.0 and seen == sorted(seen)
    whole.close()


def test_while_a_build_reads_on_the_hooks_answer_from_what_it_has_read(partial):
    from test_hooks import context_of, payload

    from memory_custodian.agents.hooks import run_hook

    mem, _, _ = partial
    root = mem.root
    mem.recall("cache")  # one step read: part of the ledger is indexed
    open(background.marker(mem.memory_dir_str), "w").close()  # a build reading on (just started)
    told = context_of(run_hook("claude", "UserPromptSubmit", payload("claude", "UserPromptSubmit", root,
                                                                   prompt="who said never push to main?")),
                      "UserPromptSubmit")
    assert "recall is still being indexed" not in told and "is not indexed yet" in told


def test_the_viewer_lists_what_is_indexed_and_says_the_rest_is_not(partial):
    from web_project import fetch, running

    mem, _, _ = partial
    page = mem.browse(limit=50)
    assert page.unread and "is not indexed yet" in page.unread and page.to_dict()["unread"] == page.unread
    with running(mem.root) as server:
        status, _, html = fetch(server, "/ledger")
    assert status == 200 and "Not all of the ledger is listed" in html and "is not indexed yet" in html


def test_a_catch_up_that_folds_the_newest_note_again_numbers_new_notes_after_it(tmp_path):
    """A supersede of the newest note: its txn folds that note again and adds one, in one catch-up."""
    mem = _project(tmp_path)
    mem.remember("the first note")
    newest = mem.remember("the newest note")
    index = mem.index()  # caught up: the newest note holds the last rowid
    mem.supersede(newest.id, "the newest note, replaced", reason="reworded")
    index.catch_up()
    fresh = Index(Ledger(mem.memory_dir_str))
    fresh.rebuild()
    assert _state(index) == _state(fresh)
    fresh.close()
