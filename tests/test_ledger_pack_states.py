"""A directive or gotcha the pack does not load is never silent, and a reinstated note is active.

The pack loads stale directives and gotchas under a warning (stale is "active + stale"), names those
scoped to another branch by id (reason `other-scope`), and counts the revoked, superseded and
expired ones. `reinstate` lifts an explicit expiry that passed while the note was revoked or
superseded, the same way through replay, the index and the CLI.
"""

from __future__ import annotations

import json
import shutil

from conftest import run_cli

from memory_custodian import Memory
from memory_custodian.cli.terms import CLI_TERMS
from memory_custodian.ledger.pack_sections import ledger_sections
from memory_custodian.ledger.storage.fold import apply, fold
from memory_custodian.ledger.storage.ids import CROCKFORD, iso_to_ms, ms_to_iso, now_iso
from memory_custodian.ledger.storage.store import Ledger, encode_event

DAY_MS = 86_400_000


def _checkout(root, branch: str) -> None:
    """What `git checkout` leaves for the branch lookup (it reads .git/HEAD, never runs git)."""
    (root / ".git").mkdir(exist_ok=True)
    (root / ".git" / "HEAD").write_text(f"ref: refs/heads/{branch}\n", encoding="utf-8")


def _sections(mem, **kw) -> dict:
    return {s.name: s for s in ledger_sections(mem, task="implementation", **kw)}


# ---- #4: the pack says what it did not load ----------------------------------------------------


def test_a_stale_directive_is_loaded_under_a_warning(mem):
    keep = mem.remember("Never push to main directly", kind="directive")
    stale = mem.remember("Always run make lint before commit\nThe lint target checks imports.", kind="directive")
    mem.flag_stale(stale.id, reason="lint target renamed?")
    sec = _sections(mem)["Ledger directives"]
    assert sorted(sec.note_ids) == sorted([keep.id, stale.id])
    block = next(b for b in sec.text.split("\n\n") if f"#{stale.id}" in b)
    head, warning = block.splitlines()[:2]
    assert head.endswith(" [stale]")
    assert warning.startswith("WARNING: flagged stale on ") and "still applies" in warning
    assert "Reason: lint target renamed?" in warning and "The lint target checks imports." in block
    keep_block = next(b for b in sec.text.split("\n\n") if f"#{keep.id}" in b)
    assert "[stale]" not in keep_block and "WARNING" not in keep_block
    assert sec.omitted == []


def test_a_directive_of_another_branch_is_named_as_not_loaded(mem):
    _checkout(mem.root, "main")
    workspace = mem.remember("Never push to main directly", kind="directive")
    branch = mem.remember("Branch-only directive: use feature flags", kind="directive", scope="branch")
    on_main = _sections(mem)["Ledger directives"]
    assert sorted(on_main.note_ids) == sorted([branch.id, workspace.id]) and on_main.omitted == []

    _checkout(mem.root, "other")
    sec = _sections(mem)["Ledger directives"]
    assert sec.note_ids == [workspace.id]
    [omission] = sec.omitted
    assert (omission.module, omission.ref, omission.reason) == ("ledger:directives", f"#{branch.id}", "other-scope")
    assert sec.text.rstrip().splitlines()[-1] == \
        f"Not loaded (other scope): #{branch.id} (branch `main`) — scoped to another git branch"


def test_directives_no_longer_in_force_are_counted(mem):
    live = mem.remember("Never push to main directly", kind="directive")
    revoked = mem.remember("Always use tabs", kind="directive")
    mem.revoke(revoked.id, reason="we use spaces")
    old = mem.remember("Deploy on Fridays only", kind="directive")
    mem.supersede(old.id, "Deploy on Thursdays only", reason="moved")
    gone = mem.remember("Freeze merges this week", kind="directive")
    mem.expire(gone.id, reason="the week is over")
    sec = _sections(mem, terms=CLI_TERMS)["Ledger directives"]
    assert live.id in sec.note_ids and not {revoked.id, old.id, gone.id} & set(sec.note_ids)
    assert sec.text.rstrip().splitlines()[-1] == (
        "Not loaded (no longer in force): 1 revoked, 1 superseded, 1 expired — "
        "`memory-custodian recall --kind directive --all` lists them")
    # the library's own words, and the MCP server's, for the same hint
    assert _sections(mem)["Ledger directives"].text.rstrip().endswith(
        "`Memory.recall(kinds=directive, include_all=True)` lists them")
    from memory_custodian.agents.mcp_server import TOOL_TERMS

    assert _sections(mem, terms=TOOL_TERMS)["Ledger directives"].text.rstrip().endswith(
        '`memory_recall` with kinds=["directive"], include_all=true lists them')
    assert sec.omitted == []  # not rules any more: counted, not listed as omissions


def test_only_a_stale_or_other_scope_directive_still_gives_a_section(mem):
    _checkout(mem.root, "main")
    branch = mem.remember("Branch-only directive", kind="directive", scope="branch")
    _checkout(mem.root, "other")
    sec = _sections(mem)["Ledger directives"]
    assert sec.note_ids == [] and f"#{branch.id}" in sec.text  # the section is rendered, not empty


def test_gotchas_stale_other_scope_and_revoked(mem):
    _checkout(mem.root, "main")
    path = "src/daemon/server.py"
    live = mem.remember("The daemon holds the lock", kind="gotcha", paths=["src/daemon/"])
    stale = mem.remember("The daemon restarts twice", kind="gotcha", paths=["src/daemon/"])
    mem.flag_stale(stale.id, reason="fixed upstream?")
    branch = mem.remember("On this branch the daemon is mocked", kind="gotcha", paths=["src/daemon/"], scope="branch")
    revoked = mem.remember("The daemon leaks memory", kind="gotcha", paths=["src/daemon/"])
    mem.revoke(revoked.id, reason="it did not")
    _checkout(mem.root, "other")
    sec = _sections(mem, paths=(path,))["Ledger gotchas"]
    assert sorted(sec.note_ids) == sorted([live.id, stale.id])
    assert f"[#{stale.id}] gotcha/medium · The daemon restarts twice · " in sec.text
    assert "[stale]\nWARNING: flagged stale on " in sec.text
    assert [(o.module, o.ref, o.reason) for o in sec.omitted] == [("ledger:gotchas", f"#{branch.id}", "other-scope")]
    tail = sec.text.rstrip().splitlines()[-2:]
    assert tail[0].startswith(f"Not loaded (other scope): #{branch.id} (branch `main`)")
    assert tail[1].startswith("Not loaded (no longer in force): 1 revoked — ")


def test_every_directive_is_loaded_named_or_counted(mem):
    _checkout(mem.root, "main")
    ids = {}
    for state in ("active", "stale", "revoked", "superseded", "expired", "branch-here", "branch-there"):
        scope = "branch" if state.startswith("branch") else "workspace"
        if state == "branch-there":
            _checkout(mem.root, "feature")
        note = mem.remember(f"directive in state {state}", kind="directive", scope=scope)
        _checkout(mem.root, "main")
        ids[state] = note.id
        if state in ("stale", "revoked", "expired"):
            getattr(mem, {"stale": "flag_stale", "revoked": "revoke", "expired": "expire"}[state])(note.id, reason="r")
        elif state == "superseded":
            ids["replacement"] = mem.supersede(note.id, "its replacement", reason="r").id
    sec = _sections(mem, budgets={"directives": 40})["Ledger directives"]
    loaded, named = set(sec.note_ids), {o.ref[1:] for o in sec.omitted}
    assert loaded | named == {ids[s] for s in ("active", "stale", "branch-here", "replacement", "branch-there")}
    assert {o.ref[1:] for o in sec.omitted if o.reason == "other-scope"} == {ids["branch-there"]}
    assert "1 revoked, 1 superseded, 1 expired" in sec.text


def test_read_names_other_scope_directives_in_json_explain_and_pack(tmp_path):
    assert run_cli("init", "--project-root", str(tmp_path)).returncode == 0
    _checkout(tmp_path, "main")

    def remember(text, *extra):
        proc = run_cli("remember", text, "--kind", "directive", *extra, "--project-root", str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    keep = remember("Never push to main directly")
    stale = remember("Always run make lint before commit")
    branch = remember("Branch-only directive: use feature flags", "--scope", "branch")
    proc = run_cli("flag-stale", stale, "--reason", "lint target renamed?", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    _checkout(tmp_path, "other")

    proc = run_cli("read", "--task", "implementation", "--format", "json", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (section,) = [s for s in data["sections"] if s["name"] == "Ledger directives"]
    assert sorted(section["note_ids"]) == sorted([keep, stale])
    assert {"module": "ledger:directives", "ref": f"#{branch}", "reason": "other-scope"} in data["omissions"]
    assert data["omitted"] == {}  # the budget omitted nothing
    pack = data["rendered"]
    assert f"[#{stale}] directive/medium · Always run make lint before commit · " in pack
    assert "WARNING: flagged stale on " in pack
    assert f"Not loaded (other scope): #{branch} (branch `main`)" in pack

    proc = run_cli("read", "--task", "implementation", "--explain", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    explain = proc.stdout[proc.stdout.index("## Explain"):]
    assert f"- ledger:directives: #{branch} (other-scope)" in explain


# ---- #6: reinstate leaves the note active -------------------------------------------------------


def _ulid(ms: int, n: int) -> str:
    def enc(v, length):
        return "".join(CROCKFORD[(v >> (5 * i)) & 31] for i in range(length - 1, -1, -1)).upper()
    return enc(ms, 10) + enc(n, 16)


def _event(ms: int, n: int, op: str, note: str, **fields) -> dict:
    return {"v": 1, "id": _ulid(ms, n + 1), "at": ms_to_iso(ms), "op": op, "note": note, "actor": "human",
            "txn": _ulid(ms, n), "txn_n": fields.pop("txn_n", 1), **fields}


def _create(ms: int, n: int, note: str, kind: str = "finding", **fields) -> dict:
    return _event(ms, n, "create", note, kind=kind, priority="medium", title=f"short lived fact {note}",
                  body=f"short lived fact {note} zebra", tags=[], paths=[], provenance="human", **fields)


def _histories(t0: int) -> dict[str, list[dict]]:
    """Notes with an explicit expiry one day after t0, revoked or superseded before it passed."""
    expires = ms_to_iso(t0 + DAY_MS)
    superseding = dict(_create(t0 + 2000, 20, "bbbbbbbb", supersedes="aaaaaaab", txn_n=2), txn=_ulid(t0 + 2000, 20))
    supersede = dict(_event(t0 + 2000, 20, "supersede", "aaaaaaab", by="bbbbbbbb", reason="newer", txn_n=2),
                     id=_ulid(t0 + 2000, 22))
    return {
        "revoked": [_create(t0, 0, "aaaaaaaa", expires=expires), _event(t0 + 1000, 10, "revoke", "aaaaaaaa", reason="wrong")],
        "superseded": [_create(t0, 2, "aaaaaaab", expires=expires), superseding, supersede],
        "stale": [_create(t0, 4, "aaaaaaac", expires=expires),
                  _event(t0 + 1000, 12, "flag_stale", "aaaaaaac", reason="maybe")],
        "revoked task": [_create(t0, 6, "aaaaaaad", kind="task", expires=expires),
                         _event(t0 + 1000, 14, "revoke", "aaaaaaad", reason="wrong")],
    }


def test_fold_reinstate_lifts_a_passed_explicit_expiry_from_any_state():
    t0 = 1_780_000_000_000
    later = t0 + 3 * DAY_MS
    for label, events in _histories(t0).items():
        note_id = events[0]["note"]
        reinstate = _event(later, 40, "reinstate", note_id, reason="it was right after all")
        note = fold([*events, reinstate])[note_id]
        assert note.state == "active", label
        assert note.state_at(ms_to_iso(later + 1000)) == "active", label
        if label == "revoked task":
            assert note.expires == ms_to_iso(later + 30 * DAY_MS)  # a task's default lifetime starts again
        else:
            assert note.expires is None, label
    # an explicit expiry still ahead is kept
    early = _event(t0 + 2000, 40, "reinstate", "aaaaaaaa", reason="right after all")
    note = fold([*_histories(t0)["revoked"], early])["aaaaaaaa"]
    assert note.state_at(ms_to_iso(t0 + 3000)) == "active" and note.expires == ms_to_iso(t0 + DAY_MS)


def test_a_reinstate_event_carrying_a_passed_expiry_still_leaves_the_note_active():
    t0 = 1_780_000_000_000
    note = fold(_histories(t0)["revoked"])["aaaaaaaa"]
    later = t0 + 3 * DAY_MS
    ev = _event(later, 40, "reinstate", "aaaaaaaa", reason="r", expires=ms_to_iso(t0 + 2 * DAY_MS))
    assert apply(note, ev).state_at(ms_to_iso(later)) == "active"


def _project_with_history(root) -> dict[str, str]:
    """A real project whose ledger holds `_histories` from three days ago, written as a merge would."""
    assert run_cli("init", "--project-root", str(root)).returncode == 0
    t0 = iso_to_ms(now_iso()) - 3 * DAY_MS
    shards: dict[str, list[str]] = {}
    labels = {}
    for label, events in _histories(t0).items():
        labels[label] = events[0]["note"]
        for ev in events:
            shards.setdefault(ev["at"][:7], []).append(encode_event(ev))
    ledger_dir = root / "docs" / "memory" / "ledger"
    ledger_dir.mkdir(parents=True, exist_ok=True)
    for month, lines in shards.items():
        with open(ledger_dir / f"{month}.jsonl", "a", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in lines))
    return labels


def test_cli_reinstate_of_a_revoked_or_superseded_note_past_its_expiry(tmp_path):
    labels = _project_with_history(tmp_path)
    for label in ("revoked", "superseded"):
        note_id = labels[label]
        before = json.loads(run_cli("expand", note_id, "--format", "json", "--project-root", str(tmp_path)).stdout)
        assert before["notes"][0]["state"] == label
        proc = run_cli("reinstate", note_id, "--reason", "it was right after all", "--project-root", str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"#{note_id} active"
        recall = json.loads(run_cli("recall", f"short lived fact {note_id}", "--format", "json",
                                    "--project-root", str(tmp_path)).stdout)
        assert [h["id"] for h in recall["hits"]][:1] == [note_id], label
        assert recall["hits"][0]["state"] == "active"
        assert note_id not in recall["excluded"]["ids"].get("expired", [])


def test_cli_reinstate_json_reports_the_state_as_of_now(tmp_path):
    labels = _project_with_history(tmp_path)
    proc = run_cli("reinstate", labels["revoked"], "--reason", "right", "--format", "json",
                   "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["state"] == "active" and data["expires"] is None
    expand = run_cli("expand", labels["revoked"], "--project-root", str(tmp_path)).stdout
    assert "WARNING" not in expand


def test_index_and_replay_agree_after_reinstating_past_an_expiry(tmp_path):
    labels = _project_with_history(tmp_path)
    mem = Memory.open(tmp_path)
    for label in ("revoked", "superseded", "stale", "revoked task"):
        mem.reinstate(labels[label], reason="right after all")
    now = now_iso()
    indexed = {n.id: n.as_dict() for n in mem.notes()}
    replayed = {k: n.as_dict() for k, n in Ledger(mem.memory_dir).load().notes.items()}
    assert indexed == replayed
    shutil.rmtree(mem.memory_dir / ".cache")
    rebuilt = {n.id: n.as_dict() for n in Memory.open(tmp_path).notes()}
    assert rebuilt == replayed
    states = {n.id: n.state_at(now) for n in Memory.open(tmp_path).notes()}
    assert all(states[labels[label]] == "active" for label in labels)
