"""The export mirror: golden output, byte-identical determinism, --check, enable + re-render, debouncing."""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

import pytest
from conftest import run_cli
from ledger_text_fixture import events, write_ledger

from memory_custodian.base.errors import Corrupt
from memory_custodian.ledger.storage.model import Note
from memory_custodian.ledger.text.export import render_export, utc
from memory_custodian.ledger.text.mirror import MirrorDebouncer, refresh_mirror_if_enabled

GOLDEN = Path(__file__).parent / "golden" / "export"


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_export_matches_golden(tmp_path):
    memory = write_ledger(tmp_path)
    result = memory.export()
    assert result.written and result.notes == 10
    text = (memory.memory_dir / "MEMORY.md").read_text(encoding="utf-8")
    golden("ledger.md", text)
    # forgotten notes never reach the mirror, even when a merge brought their create back
    assert "FORGOTTEN" not in text
    assert memory.export().written is False


def test_export_is_byte_identical_across_tz_locale_hashseed_and_line_order(tmp_path):
    """Fresh processes in different time zones, locales and hash seeds, over shuffled shards."""
    outputs = set()
    variants = [
        {"TZ": "UTC", "LC_ALL": "C", "PYTHONHASHSEED": "0"},
        {"TZ": "Asia/Tokyo", "LC_ALL": "de_DE.UTF-8", "PYTHONHASHSEED": "1"},
        {"TZ": "America/Los_Angeles", "LC_ALL": "tr_TR.UTF-8", "PYTHONHASHSEED": "4242"},
        {"TZ": "Pacific/Chatham", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "987654"},
    ]
    for seed, env in enumerate(variants):
        root = tmp_path / f"p{seed}"
        write_ledger(root, seed=seed)
        out = root / "mirror.md"
        proc = run_cli("export", "--project-root", str(root), "--path", str(out), env=env)
        assert proc.returncode == 0, proc.stderr
        outputs.add(out.read_bytes())
    assert len(outputs) == 1
    assert outputs.pop().decode("utf-8") == (GOLDEN / "ledger.md").read_text(encoding="utf-8")


def _note(note_id, created_at, **kw):
    base = dict(kind="finding", priority="medium", title=f"title {note_id}", body=f"body {note_id}")
    base.update(kw)
    return Note(id=note_id, created_at=created_at, **base)


def test_order_is_kind_then_created_then_id_whatever_the_input_order():
    notes = [
        _note("bbbb0000", "2026-11-01T00:00:00.000Z"),
        _note("aaaa0000", "2026-11-01T00:00:00.000Z"),
        _note("cccc0000", "2026-10-01T00:00:00.000Z"),
        _note("dddd0000", "2026-12-01T00:00:00.000Z", kind="directive"),
    ]
    renders = {render_export(list(p)) for p in itertools.permutations(notes)}
    assert len(renders) == 1
    text = renders.pop()
    order = [line.split("]")[0][6:] for line in text.splitlines() if line.startswith("### [#")]
    assert order == ["dddd0000", "cccc0000", "aaaa0000", "bbbb0000"]


@pytest.fixture
def far_from_utc():
    """A local zone far from UTC, so converting to local time instead of UTC would show."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def test_times_are_converted_to_utc_before_sorting_and_rendering(far_from_utc):
    # 10:30+02:00 is 08:30Z, earlier than 09:00Z: sorting the raw strings would get this wrong
    early = _note("zzzz0000", "2026-11-01T10:30:00.000+02:00", expires="2026-12-01T01:00:00+01:00")
    late = _note("aaaa0000", "2026-11-01T09:00:00.000Z")
    text = render_export([late, early])
    assert "created: 2026-11-01T08:30:00.000Z" in text
    assert "expires: 2026-12-01T00:00:00.000Z" in text
    assert text.index("#zzzz0000") < text.index("#aaaa0000")
    assert utc("2026-11-01T00:00:00-05:00") == "2026-11-01T05:00:00.000Z"
    assert utc("2026-11-01T00:00:00") == "2026-11-01T00:00:00.000Z"


def test_tags_and_paths_render_sorted_whatever_their_stored_order():
    a = _note("aaaa0000", "2026-11-01T00:00:00.000Z", tags=("zeta", "alpha", "mid"), paths=("z/**", "a.py"))
    b = a.replace(tags=("mid", "zeta", "alpha"), paths=("a.py", "z/**"))
    assert render_export([a]) == render_export([b])
    assert "- tags: alpha, mid, zeta\n" in render_export([a])
    assert "- paths: `a.py`, `z/**`\n" in render_export([a])


def test_body_lines_that_look_like_structure_are_escaped():
    text = render_export([_note("aaaa0000", "2026-11-01T00:00:00.000Z", body="x\n## Findings\n### t\n- kind: finding")])
    assert "\n\\## Findings\n\\### t\n- kind: finding\n" in text


def test_check_reports_drift_and_writes_nothing(tmp_path):
    memory = write_ledger(tmp_path)
    missing = memory.export(check=True)
    assert missing.up_to_date is False and "does not exist" in missing.diff
    assert not (memory.memory_dir / "MEMORY.md").exists()
    memory.export()
    assert memory.export(check=True).up_to_date is True
    mirror = memory.memory_dir / "MEMORY.md"
    mirror.write_text(mirror.read_text().replace("We use tabs.", "We use spaces."), encoding="utf-8")
    drift = memory.export(check=True)
    assert drift.up_to_date is False
    assert "-We use spaces.\n" in drift.diff and "+We use tabs.\n" in drift.diff
    assert "We use spaces." in mirror.read_text()


def test_enable_records_config_and_writes_rerender(tmp_path):
    memory = write_ledger(tmp_path)
    mirror = memory.memory_dir / "MEMORY.md"
    assert refresh_mirror_if_enabled(memory) is None  # no config: nothing rendered
    assert not mirror.exists()
    result = memory.export_enable()
    assert result.enabled and mirror.exists()
    config = (memory.memory_dir / "config.json").read_text()
    assert '"enabled": true' in config and '"path": "docs/memory/MEMORY.md"' in config
    note = memory.remember("A fresh note after enabling", kind="gotcha")
    assert f"#{note.id}" in mirror.read_text()  # the write re-rendered it
    assert note.mirror_warning is None
    assert refresh_mirror_if_enabled(memory).written is False  # already in step
    memory.export_disable()
    other = memory.remember("Not mirrored while disabled")
    assert refresh_mirror_if_enabled(memory) is None
    assert f"#{other.id}" not in mirror.read_text()


def test_enable_with_a_custom_path_is_kept_in_config(tmp_path):
    memory = write_ledger(tmp_path)
    memory.export_enable(path="docs/LEDGER.md")
    assert (tmp_path / "docs" / "LEDGER.md").exists()
    memory.remember("goes to the custom path")
    assert "goes to the custom path" in (tmp_path / "docs" / "LEDGER.md").read_text()
    assert memory.export(check=True).path == str(tmp_path / "docs" / "LEDGER.md")


def test_a_broken_config_is_loud(tmp_path):
    memory = write_ledger(tmp_path)
    (memory.memory_dir / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(Corrupt, match=r"config\.json"):
        refresh_mirror_if_enabled(memory)


def test_debouncer_renders_once_after_a_quiet_interval_and_on_flush(tmp_path):
    memory = write_ledger(tmp_path)
    memory.export_enable()
    mirror = memory.memory_dir / "MEMORY.md"
    deb = MirrorDebouncer(memory, interval=0.3)
    ids = []
    for i in range(3):
        ids.append(memory.remember(f"burst note {i}").id)
        deb.touch()
        time.sleep(0.05)
    assert deb.renders == 0  # still inside the quiet interval
    deadline = time.time() + 5
    while deb.renders == 0 and time.time() < deadline:
        time.sleep(0.05)
    assert deb.renders == 1
    assert all(f"#{i}" in mirror.read_text() for i in ids)
    # a shutdown flushes a pending render at once
    last = memory.remember("written just before exit").id
    deb.touch()
    deb.flush()
    assert deb.renders == 2 and f"#{last}" in mirror.read_text()
    assert deb.flush() is None  # nothing pending


def test_debouncer_reports_errors_from_the_timer_thread(tmp_path):
    memory = write_ledger(tmp_path)
    memory.export_enable()
    (memory.memory_dir / "config.json").write_text("[]", encoding="utf-8")
    seen = []
    deb = MirrorDebouncer(memory, interval=0.05, on_error=seen.append)
    deb.touch()
    deadline = time.time() + 5
    while not seen and time.time() < deadline:
        time.sleep(0.02)
    assert seen and isinstance(seen[0], Corrupt)


def test_fixture_events_cover_every_rendered_state():
    ops = {e["op"] for e in events()}
    assert {"create", "supersede", "revoke", "flag_stale", "expire", "forget"} <= ops


def test_export_from_the_index_equals_export_from_a_replay(tmp_path):
    memory = write_ledger(tmp_path)
    index_file = memory.memory_dir / ".cache" / "index.sqlite"
    assert not index_file.exists()
    memory.export()  # no index: a full replay, and none is built
    assert not index_file.exists()
    from_replay = (memory.memory_dir / "MEMORY.md").read_bytes()
    memory.reindex()
    (memory.memory_dir / "MEMORY.md").unlink()
    memory.export()  # the index now exists and is current: read from it
    assert (memory.memory_dir / "MEMORY.md").read_bytes() == from_replay
    # an index that has to catch up on a new shard line still agrees with a replay
    memory.remember("one more, caught up incrementally", kind="task")
    memory.export()
    via_index = (memory.memory_dir / "MEMORY.md").read_bytes()
    index_file.unlink()
    memory.export(path=tmp_path / "replayed.md")
    assert (tmp_path / "replayed.md").read_bytes() == via_index


def test_nothing_reads_the_mirror_back(tmp_path):
    memory = write_ledger(tmp_path)
    mirror = memory.memory_dir / "MEMORY.md"
    mirror.write_bytes(b"\xff\xfe not even UTF-8 ### [#aaaa0000] forged\n- kind: directive\n")
    before = sorted((n.id, n.state, n.body) for n in memory.notes())
    assert memory.export().written is True
    assert mirror.read_text() == (GOLDEN / "ledger.md").read_text()
    assert sorted((n.id, n.state, n.body) for n in memory.notes()) == before


def test_refresh_is_a_cheap_no_op_when_the_mirror_is_off(tmp_path):
    import subprocess
    import sys

    memory = write_ledger(tmp_path)
    code = ("import sys; from memory_custodian.memory import Memory; "
            "from memory_custodian.ledger.text.mirror import refresh_mirror_if_enabled; "
            f"assert refresh_mirror_if_enabled(Memory.open({str(tmp_path)!r})) is None; "
            "heavy = [m for m in ('sqlite3', 'memory_custodian.ledger.storage.store', 'memory_custodian.ledger.text.export') "
            "if m in sys.modules]; assert not heavy, heavy")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    memory.export_disable()  # a config that says off: one small read, still nothing heavy
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_lean_index_rows_render_like_notes_and_the_gc_is_switched_back_on(tmp_path):
    import gc

    from memory_custodian.ledger.text.export import render_rows

    memory = write_ledger(tmp_path)
    memory.reindex()
    index = memory.index()
    rows = index.export_rows()  # the stored rows as they are, no `Note`s
    notes = [n for n in index.all_notes() if n.state != "forgotten"]
    assert len(rows) == len(notes) == 10
    assert render_rows(rows) == render_export(notes)
    assert gc.isenabled()
    memory.export()  # the export pauses the cyclic GC for its bulk work, and only for it
    assert gc.isenabled()


def test_order_follows_sort_key_when_times_are_unparseable_and_of_any_length():
    from memory_custodian.ledger.text.export import sort_key

    # shown as recorded: joining `time + id` into one key would put aaaa first ("t1x" vs "t1z...")
    notes = [_note("aaaa0000", "t1x"), _note("zzzz0000", "t1"), _note("bbbb0000", "2026-11-01T00:00:00.000Z"),
             _note("cccc0000", ""), _note("dddd0000", "2026-11-01T00:00:00.000+00:00")]
    for perm in (notes, notes[::-1]):
        text = render_export(perm)
        order = [line.split("]")[0][6:] for line in text.splitlines() if line.startswith("### [#")]
        assert order == [n.id for n in sorted(notes, key=sort_key)] == \
            ["cccc0000", "bbbb0000", "dddd0000", "zzzz0000", "aaaa0000"]


def test_a_field_declared_shown_as_a_line_renders_as_one_when_not_its_default(monkeypatch):
    """How a new field reaches the mirror: `shown="line"` in the model, nothing in the renderer."""
    from memory_custodian.ledger.text import export

    monkeypatch.setattr(export, "LINE_FIELDS", (("confidence", None),))
    note = _note("k7m2x9qa", "2026-11-27T10:00:00.000Z")
    row = dict(export.note_row(note), confidence={"level": "high"})
    block = export.render_rows([row])
    assert '- confidence: {"level": "high"}\n' in block
    assert "- confidence:" not in export.render_rows([dict(row, confidence=None)])
