"""A note's neighbours in time lend it part of their score, in full-account recalls only (`context.py`)."""

from __future__ import annotations

from memory_custodian.ledger.recall import context
from memory_custodian.ledger.recall.recall import check_query


def row(note_id: str, score: float, at: str) -> tuple:
    return (note_id, score, "active", True, at, "e-" + note_id)


def test_a_note_gains_the_best_score_of_its_matched_neighbours_within_the_window():
    rows = [row("q", 9.0, "2026-03-07T19:00:00.000Z"), row("a", 1.0, "2026-03-07T19:00:50.000Z"),
            row("b", 2.0, "2026-03-07T19:01:40.000Z"), row("far", 5.0, "2026-03-07T19:10:00.000Z")]
    gains = context.context_gains(rows)
    assert gains == {"q": 2.0, "a": 9.0, "b": 9.0}  # `far` is past the two-minute window: it lends and gains nothing
    assert context.context_gains(list(reversed(rows))) == gains  # row order never matters


def test_notes_written_at_the_same_instant_lend_nothing_to_each_other():
    """A bulk import or an `edit` check-in writes many notes at once: one write, not one conversation."""
    rows = [row("a", 9.0, "2026-03-07T19:00:00.000Z"), row("b", 1.0, "2026-03-07T19:00:00.000Z"),
            row("c", 1.0, "2026-03-07T19:00:30.000Z")]
    assert context.context_gains(rows) == {"a": 1.0, "b": 1.0, "c": 9.0}  # b gains from c only, not from a
    assert context.context_gains(rows[:2]) == {}


def test_only_the_nearest_two_on_each_side_count():
    rows = [row(f"n{i}", 10.0 if i == 0 else 1.0, f"2026-03-07T19:00:{10 * i:02d}.000Z") for i in range(5)]
    gains = context.context_gains(rows)
    assert gains["n1"] == gains["n2"] == 10.0 and gains["n3"] == gains["n4"] == 1.0


def test_in_context_adds_the_weighted_gain_and_keeps_the_candidates(monkeypatch):
    class Ask:
        context = True

    class Plan:
        ask = Ask()

    rows = [row("q", 8.0, "2026-03-07T19:00:00.000Z"), row("a", 1.0, "2026-03-07T19:00:30.000Z")]
    scan = context.in_context(Plan(), lambda match: rows)
    assert [(r[0], r[1]) for r in scan("m")] == [("q", 8.0 + 0.25), ("a", 1.0 + 0.25 * 8.0)]
    Ask.context = False
    assert context.in_context(Plan(), lambda match: rows)("m") is rows


def test_only_a_full_account_recall_asked_to_expand_uses_context():
    """The hooks ask for less than the full account (and never to expand): what they load is unchanged."""
    assert check_query("what does she grow", expand=True).context is True
    assert check_query("what does she grow", expand=True, counts="matched").context is False
    assert check_query("what does she grow", expand=True, counts=False).context is False
    assert check_query("what does she grow").context is False
    assert check_query(None, expand=True).context is False
