"""Ids and times: random Crockford note ids, monotonic ULIDs, UTC milliseconds with Z."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given
from hypothesis import strategies as st

from memory_custodian.ledger.storage.ids import CROCKFORD, is_note_id, iso_to_ms, ms_to_iso, new_note_id, new_ulids


def test_note_ids_are_8_lowercase_crockford():
    ids = {new_note_id() for _ in range(2000)}
    assert len(ids) == 2000 and all(is_note_id(i) and len(i) == 8 and set(i) <= set(CROCKFORD) for i in ids)


def test_ulids_are_monotonic_within_a_process(monkeypatch):
    from memory_custodian.ledger.storage import ids as ids_mod

    # the far-future clock below must not leak into later tests of this process (their notes
    # would be stamped 2096 and look changed to the hooks' "already shown" check)
    monkeypatch.setattr(ids_mod, "_last_ms", ids_mod._last_ms)
    monkeypatch.setattr(ids_mod, "_last_rand", ids_mod._last_rand)
    seen = []
    for _ in range(300):
        ms, ids = new_ulids(3)
        assert all(i[:10] == seen[-1][:10] or i > seen[-1] for i in ids) if seen else True
        seen.extend(ids)
    assert seen == sorted(seen) and len(set(seen)) == len(seen) and all(len(i) == 26 for i in seen)
    ms, ids = new_ulids(1, not_before_ms=int(4e12))
    assert ms >= int(4e12) and ids[0] > seen[-1]


@given(st.integers(0, 10**13))
def test_iso_round_trip_matches_datetime(ms):
    iso = ms_to_iso(ms)
    assert len(iso) == 24 and iso.endswith("Z")
    assert iso == datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    assert iso_to_ms(iso) == ms
