"""The plain records that stand in for dataclasses on the hook path (see records.py)."""

import subprocess
import sys

import pytest

from memory_custodian.base.records import Record, field
from memory_custodian.ledger.recall.recall_result import RecallResult
from memory_custodian.ledger.storage.fold import Problem
from memory_custodian.ledger.storage.model import Note


class Pair(Record):
    a: int
    b: int = 2
    items: list = field(default_factory=list)


def test_construction_defaults_and_factories():
    assert Pair(1).__dict__ == {"a": 1, "b": 2, "items": []}
    assert Pair(1, b=3).b == 3 and Pair(a=1, items=[9]).items == [9]
    one, two = Pair(1), Pair(1)
    one.items.append("x")
    assert two.items == []  # a factory default is never shared
    with pytest.raises(TypeError):
        Pair()
    with pytest.raises(TypeError):
        Pair(1, a=1)
    with pytest.raises(TypeError):
        Pair(1, c=1)
    with pytest.raises(TypeError):
        Pair(1, 2, 3, 4)


def test_equality_repr_replace_and_deep_as_dict():
    a = Pair(1, items=[{"k": [1]}])
    assert a == Pair(1, items=[{"k": [1]}]) and a != Pair(2) and a != (1, 2, [])
    assert repr(a) == "Pair(a=1, b=2, items=[{'k': [1]}])"
    b = a.replace(b=5)
    assert (b.a, b.b) == (1, 5) and b.items is a.items  # shallow, as dataclasses.replace
    d = a.as_dict()
    d["items"][0]["k"].append(2)
    assert a.items == [{"k": [1]}]  # deep, as dataclasses.asdict
    with pytest.raises(TypeError):
        hash(a)


def test_note_fields_are_its_one_declaration():
    from memory_custodian.ledger.storage.model import NOTE_FIELDS, REQUIRED

    assert tuple(f.name for f in NOTE_FIELDS) == Note.FIELDS
    assert set(Note.DEFAULTS) == {f.name for f in NOTE_FIELDS if f.default is not REQUIRED}
    with pytest.raises(TypeError):
        Note("abc", "gotcha", "high", "t")  # no body
    note = Note("abc", "gotcha", "high", "t", "b", extra={"x": [1]})
    assert note.extra == {"x": [1]} and Note("a", "k", "p", "t", "b").extra == {}
    assert note.to_dict()["tags"] == [] and note.to_dict()["extra"] == {"x": [1]}
    assert note.replace(state="revoked").state == "revoked" and note.state == "active"
    assert Problem("c", "m").to_dict() == {"code": "c", "message": "m", "where": None, "note": None, "event": None}
    assert RecallResult(query="q").footer().startswith("0 more matched")


def test_how_each_note_field_is_kept_is_said_once_for_each_field():
    from memory_custodian.ledger.storage import model

    assert list(model._KEPT) == list(Note.FIELDS)  # none missing, none left over, in the note's order
    assert [f.default for f in model.NOTE_FIELDS[:5]] == [model.REQUIRED] * 5
    assert model.NOTE_FIELDS[Note.FIELDS.index("extra")].default.make() == {}


def test_what_a_write_says_beside_a_note_is_not_part_of_it():
    note = Note("abc", "gotcha", "high", "t", "b")
    assert note.mirror_warning is None and note.quote_refused is None
    note.mirror_warning, note.quote_refused = "stale mirror", "no such sentence"
    assert (note.mirror_warning, note.quote_refused) == ("stale mirror", "no such sentence")
    assert "mirror_warning" not in note.to_dict() and "quote_refused" not in note.to_dict()
    assert note == Note("abc", "gotcha", "high", "t", "b")


def test_fields_are_declared_as_annotations_only():
    with pytest.raises(TypeError, match="annotations"):
        type("Old", (Record,), {"FIELDS": ("a",)})
    with pytest.raises(TypeError, match="annotations"):
        type("Old", (Record,), {"DEFAULTS": {"a": 1}})


def test_the_hook_path_does_not_import_dataclasses():
    """`dataclasses` pulls in `inspect` (~15 ms a fresh process): the prompt and file hooks must not."""
    code = ("import sys; from memory_custodian.agents import hooks; from memory_custodian.ledger.recall import recall; "
            "from memory_custodian.ledger.index import index; from memory_custodian import memory; "
            "print('dataclasses' in sys.modules, 'inspect' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_the_prompt_hook_does_not_import_pathlib(tmp_path):
    """`pathlib` costs a fresh process 11-14 ms (urllib.parse, ipaddress...): the hook that runs on
    every prompt works on plain string paths and must never import it."""
    import json

    from memory_custodian import Memory

    memory = Memory.open(tmp_path)
    memory.init()
    memory.remember("the retry budget is five attempts", kind="gotcha")
    memory.remember("retry budget raised for the ingest worker", kind="finding")
    memory.recall("retry")  # a host's steady state: the index exists (building it may use pathlib)
    payload = json.dumps({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": str(tmp_path),
                          "hook_event_name": "UserPromptSubmit", "prompt": "what is the retry budget of the worker?"})
    code = ("import sys, io; sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode())); "
            "from memory_custodian.__main__ import main; sys.argv = ['memory-custodian', 'hook', '--host', 'claude', "
            "'UserPromptSubmit']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('PATHLIB', 'pathlib' in sys.modules, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, payload], capture_output=True, text=True, cwd=tmp_path,
                          check=True)
    assert "retry budget" in proc.stdout  # the hook did its work
    assert "PATHLIB False" in proc.stderr, proc.stderr


class Annotated_(Record):
    a: int
    b: int = 2
    items: list = field(default_factory=list)


class Extended(Annotated_):
    c: str = "x"


def test_annotated_fields_are_the_declaration():
    assert Annotated_.FIELDS == ("a", "b", "items") and Extended.FIELDS == ("a", "b", "items", "c")
    one, two = Annotated_(1), Annotated_(1)
    one.items.append("x")
    assert two.items == [] and one != two and Annotated_(1, 3).b == 3
    assert Extended(1, c="y").as_dict() == {"a": 1, "b": 2, "items": [], "c": "y"}
    assert "b" not in Annotated_.__dict__  # no class attribute left to hide a missing instance value
    with pytest.raises(TypeError):
        Annotated_()
    assert Extended(1).replace(c="z") == Extended(1, c="z")
