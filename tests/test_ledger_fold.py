"""Property tests of replay and the state machine."""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_custodian import Memory
from memory_custodian.base.errors import Refused
from memory_custodian.ledger.storage.fold import apply, fold, transition_error
from memory_custodian.ledger.storage.ids import CROCKFORD, ms_to_iso
from memory_custodian.ledger.storage.store import Ledger, encode_event

BASE_MS = 1_780_000_000_000  # 2026-05
OPS = ("revoke", "flag_stale", "reinstate", "expire", "promote", "supersede", "forget", "create")


def ulid(ms: int, n: int) -> str:
    def enc(v, length):
        return "".join(CROCKFORD[(v >> (5 * i)) & 31] for i in range(length - 1, -1, -1)).upper()
    return enc(ms, 10) + enc(n, 16)


@st.composite
def histories(draw, max_events=25):
    """A legal history of events (as writers produce them), several months long."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    steps = draw(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 9), st.sampled_from([0, 1, 5000, 86_400_000 * 9])),
                          min_size=1, max_size=max_events))
    notes: dict = {}
    events: list[dict] = []
    ms, counter = BASE_MS, 0
    order: list[str] = []

    def new_id():
        return "".join(rnd.choice(CROCKFORD) for _ in range(8))

    for op, pick, dt in steps:
        ms += dt
        at = ms_to_iso(ms)
        target = order[pick % len(order)] if order else None
        batch = []
        if op == "create" or target is None:
            nid = new_id()
            kind = rnd.choice(["task", "finding", "gotcha", "directive"])
            batch.append({"op": "create", "note": nid, "actor": "human", "kind": kind, "priority": rnd.choice(["high", "low"]),
                          "title": f"title {nid}", "body": f"body {nid} snake_case camelCase", "tags": [rnd.choice("abc")],
                          "paths": ["src/x.py"], "provenance": rnd.choice(["agent", "human"]), "scope": "workspace"})
        elif op == "supersede":
            nid = new_id()
            batch.append({"op": "create", "note": nid, "actor": "human", "kind": "finding", "priority": "medium",
                          "title": "newer", "body": "newer", "tags": [], "paths": [], "provenance": "human",
                          "supersedes": target, "scope": "workspace"})
            batch.append({"op": "supersede", "note": target, "actor": "human", "by": nid, "reason": "r"})
        elif op == "promote":
            batch.append({"op": "promote", "note": target, "actor": "human", "to": "human"})
        else:
            batch.append({"op": op, "note": target, "actor": "human", "reason": "because"})
        txn = ulid(ms, counter)
        counter += 1
        full = []
        for ev in batch:
            ev.update(v=1, at=at, id=ulid(ms, counter), txn=txn, txn_n=len(batch))
            counter += 1
            full.append(ev)
        state = dict(notes)
        ok = True
        for ev in full:
            if transition_error(state.get(ev["note"]), ev) is not None:
                ok = False
                break
            state[ev["note"]] = apply(state[ev["note"]].replace(extra=dict(state[ev["note"]].extra))
                                      if ev["note"] in state else None, ev)
        if not ok:
            continue
        notes = state
        events.extend(full)
        for ev in full:
            if ev["op"] == "create":
                order.append(ev["note"])
    return events


def as_dicts(notes):
    return {k: v.as_dict() for k, v in sorted(notes.items())}


def write_shards(ledger_dir: Path, lines: list[str], shards: list[str]) -> None:
    ledger_dir.mkdir(parents=True, exist_ok=True)
    for p in ledger_dir.glob("*.jsonl"):
        p.unlink()
    for name in sorted(set(shards)):
        (ledger_dir / name).write_text("".join(line for line, s in zip(lines, shards) if s == name), encoding="utf-8")


def tmp_memory() -> Path:
    root = Path(tempfile.mkdtemp(prefix="mc-fold-"))
    (root / "docs" / "memory").mkdir(parents=True)
    (root / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
    return root


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.randoms(use_true_random=False), st.integers(1, 4))
def test_replay_is_independent_of_line_order(events, rnd, n_shards):
    expected = as_dicts(fold(events))
    lines = [encode_event(ev) for ev in events]
    shuffled = list(zip(lines, [ev["at"][:7] + ".jsonl" for ev in events]))
    rnd.shuffle(shuffled)
    root = tmp_memory()
    try:
        ledger = Ledger(root / "docs" / "memory")
        # by month, lines shuffled within each shard
        write_shards(ledger.dir, [line for line, _ in shuffled], [s for _, s in shuffled])
        rep = ledger.load()
        assert as_dicts(rep.notes) == expected and rep.problems == []
        # arbitrary shards, arbitrary order across and within
        write_shards(ledger.dir, [line for line, _ in shuffled], [f"2020-0{rnd.randint(1, n_shards)}.jsonl" for _ in shuffled])
        assert as_dicts(ledger.load().notes) == expected
    finally:
        shutil.rmtree(root)


# The state machine of DESIGN.md, written out independently of the implementation.
SPEC = {
    "active": {"supersede", "revoke", "flag_stale", "expire", "promote"},
    "stale": {"reinstate", "supersede", "revoke", "expire"},
    "superseded": {"reinstate", "revoke"},
    "revoked": {"reinstate"},
    "expired": {"reinstate"},
    "forgotten": set(),
}
AFTER = {"supersede": "superseded", "revoke": "revoked", "flag_stale": "stale", "expire": "expired",
         "reinstate": "active"}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["remember", "supersede", "revoke", "flag_stale", "reinstate", "expire",
                                           "promote", "promote_agent", "forget"]), st.integers(0, 7)),
                min_size=1, max_size=18))
def test_legal_commands_fold_to_the_state_machine_state(commands):
    root = tmp_memory()
    try:
        mem = Memory.open(root)
        model: dict[str, str] = {}
        prov: dict[str, str] = {}
        order: list[str] = []
        for cmd, pick in commands:
            if cmd == "remember" or not order:
                note = mem.remember(f"note {len(order)}", actor="agent")
                model[note.id], prov[note.id] = "active", "agent"
                order.append(note.id)
                continue
            target = order[pick % len(order)]
            state = model[target]
            if cmd == "forget":
                if state == "forgotten":
                    continue
                mem.forget_note(target)
                model[target] = "forgotten"
                continue
            op = "promote" if cmd.startswith("promote") else cmd
            legal = op in SPEC[state]
            if cmd == "promote":
                legal = legal and prov[target] != "human"
            if cmd == "promote_agent":
                legal = False  # an agent can never promote to human
            before = b"".join(p.read_bytes() for p in sorted((mem.memory_dir / "ledger").glob("*.jsonl")))
            try:
                if op == "supersede":
                    new = mem.supersede(target, "replacement", reason="r")
                    model[new.id], prov[new.id] = "active", "human"
                    order.append(new.id)
                elif cmd == "promote":
                    mem.promote(target, to="human")
                    prov[target] = "human"
                elif cmd == "promote_agent":
                    mem.promote(target, to="human", actor="agent")
                else:
                    getattr(mem, op)(target, reason="r")
            except Refused:
                assert not legal, (cmd, state)
                after = b"".join(p.read_bytes() for p in sorted((mem.memory_dir / "ledger").glob("*.jsonl")))
                assert after == before
                continue
            assert legal, (cmd, state)
            if op in AFTER:
                model[target] = AFTER[op]
        rep = Ledger(mem.memory_dir).load()
        assert rep.problems == []
        assert {k: n.state for k, n in rep.notes.items()} == model
        assert {k: n.state for k, n in ((n.id, n) for n in mem.notes(include_forgotten=True))} == model
    finally:
        shutil.rmtree(root)


def test_time_derived_expiry_judges_events_at_their_time():
    ev = {"v": 1, "id": ulid(BASE_MS, 1), "at": ms_to_iso(BASE_MS), "op": "create", "note": "aaaaaaaa",
          "actor": "human", "txn": ulid(BASE_MS, 0), "txn_n": 1, "kind": "task", "priority": "low", "title": "t",
          "body": "b", "tags": [], "paths": []}
    later = BASE_MS + 31 * 86_400_000
    revoke = {"v": 1, "id": ulid(later, 3), "at": ms_to_iso(later), "op": "revoke", "note": "aaaaaaaa",
              "actor": "human", "reason": "x", "txn": ulid(later, 2), "txn_n": 1}
    reinstate = dict(revoke, op="reinstate", id=ulid(later, 5), txn=ulid(later, 4))
    notes = fold([ev, revoke, reinstate])
    note = notes["aaaaaaaa"]
    # the task had expired by then: revoke is illegal and skipped, reinstate renews it for 30 days
    assert note.state == "active" and note.event_count == 2
    assert note.expires > ms_to_iso(later)
    assert json.loads(encode_event(ev)) == ev
