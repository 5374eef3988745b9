"""The click-free argument scanner: plain shapes parse, everything else is handed back to click."""

from memory_custodian.fastargs import scan

SPEC = dict(values={"--kind": "kind", "-t": "task"}, multi={"--tag": "tags"}, flags={"--all": "all"})


def test_plain_shapes_parse():
    assert scan(["x", "--kind=gotcha", "--tag", "a", "--tag=b", "-t", "plan", "--all", "-", "--", "--tag"],
                positional=True, **SPEC) == (
        {"kind": "gotcha", "tags": ["a", "b"], "task": "plan", "all": True}, ["x", "-", "--tag"])


def test_anything_unusual_goes_to_click():
    for argv in (["--help"], ["--kind"], ["--kind", "a", "--kind", "b"], ["--all=yes"], ["-x"]):
        assert scan(argv, positional=True, **SPEC) is None, argv
    assert scan(["stray"], positional=False, **SPEC) is None
