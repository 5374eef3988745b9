"""Bad input to the ledger commands, as users and agents type it: one `error:` line, exit 2, nothing changed.

Bytes that are not UTF-8 (on the command line or piped to `-`), a `--limit` SQLite cannot hold,
a folder given as a check-in file, a path under a regular file. And a write whose mirror cannot be
re-rendered: the note landed, so it is acknowledged (exit 0) with one warning line, never a traceback
that would make an agent write it twice. Real processes (argv bytes that are not UTF-8), every file
compared byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_custodian.memory import Memory

CLI = [sys.executable, "-m", "memory_custodian"]


def run(root: Path, *args, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the CLI with `args` as given (bytes stay bytes: argv that is not UTF-8), output as bytes."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*CLI, *args, "--project-root", str(root)], input=stdin, capture_output=True,
                          cwd=root, env=full_env, timeout=60)


def files(root: Path) -> dict[str, bytes]:
    """Every file of the project but the disposable cache, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".cache" not in p.relative_to(root).parts}


def refused(proc, *needles: str) -> str:
    """Exit 2, exactly one `error:` line on stderr naming each needle, no traceback, nothing on stdout."""
    err = proc.stderr.decode("utf-8")  # the message itself must be printable UTF-8
    assert "Traceback" not in err, err[-2000:]
    assert proc.returncode == 2, (proc.returncode, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert proc.stdout == b""
    return lines[0]


@pytest.fixture
def project(tmp_path):
    """A project with one note, the mirror enabled (so it is on disk and checked too) and a plain file `afile`."""
    memory = Memory.open(tmp_path)
    memory.init()
    note = memory.remember("hello from the seed note")
    memory.export_enable()
    (tmp_path / "afile").write_bytes(b"just a file\n")
    memory.seed_id = note.id
    return memory


BAD_ARGV = {
    "remember-text": (["remember", b"bad \xff byte"], "note text is not valid UTF-8 (byte 0xff)"),
    "remember-text-line": (["remember", b"first line\nsecond \xfe"], "note text is not valid UTF-8 (byte 0xfe on line 2)"),
    "remember-path": (["remember", "x", "--path", b"src/a\xff.py"], "path 'src/a\\xff.py' is not valid UTF-8"),
    "remember-title": (["remember", "x", "--title", b"t\xff"], "--title is not valid UTF-8"),
    "remember-quote": (["remember", "x", "--quote", b"q\xff", "--actor", "agent"], "--quote is not valid UTF-8"),
    "recall-path": (["recall", "x", "--path", b"\xff"], "path '\\xff' is not valid UTF-8"),
    "recall-query": (["recall", b"caf\xe9"], "QUERY is not valid UTF-8 (byte 0xe9)"),
}


@pytest.mark.parametrize("case", sorted(BAD_ARGV))
def test_argv_that_is_not_utf8_is_refused_by_name(project, case):
    args, message = BAD_ARGV[case]
    before = files(project.root)
    refused(run(project.root, *args), message, "give it as UTF-8")
    assert files(project.root) == before


@pytest.mark.parametrize("verb", ["revoke", "supersede"])
def test_reason_that_is_not_utf8_is_refused_by_name(project, verb):
    args = [verb, project.seed_id, *(["new text"] if verb == "supersede" else []), "--reason", b"r\xff"]
    before = files(project.root)
    refused(run(project.root, *args), "--reason is not valid UTF-8 (byte 0xff)")
    assert files(project.root) == before


# stdin is decoded strictly in a UTF-8 locale and with surrogateescape in the C locale: both refuse
@pytest.mark.parametrize("errors", ["strict", "surrogateescape"])
def test_stdin_that_is_not_utf8_is_refused_naming_stdin_and_line(project, errors):
    before = files(project.root)
    proc = run(project.root, "remember", "-", stdin=b"caf\xc3\xa9 ok\nLatin-1 caf\xe9\n",
               env={"PYTHONIOENCODING": f"utf-8:{errors}"})
    refused(proc, "stdin:2: note text is not valid UTF-8 (byte 0xe9", "as UTF-8")
    assert files(project.root) == before


def test_stdin_refused_for_supersede_too(project):
    before = files(project.root)
    proc = run(project.root, "supersede", project.seed_id, "-", "--reason", "r", stdin=b"\x80\n")
    refused(proc, "stdin:1: note text is not valid UTF-8 (byte 0x80")
    assert files(project.root) == before


@pytest.mark.parametrize("limit", ["9223372036854775807", "1000001"])
def test_a_limit_too_large_is_refused(project, limit):
    before = files(project.root)
    for query in ([], ["hello"]):
        refused(run(project.root, "recall", *query, "--limit", limit),
                f"--limit {limit} is too large; give a number from 0 to 1000000")
    assert files(project.root) == before
    proc = run(project.root, "recall", "--limit", "1000000")
    assert proc.returncode == 0 and b"hello from the seed note" in proc.stdout, proc.stderr


# digits that str.isdigit() takes and int() does not: superscripts, and more digits than int() converts
@pytest.mark.parametrize("limit", ["\u00b2", "1\u2075", "9" * 5000], ids=["superscript-2", "superscript-5", "5000-digits"])
def test_a_limit_int_cannot_read_is_a_usage_error(project, limit):
    proc = run(project.root, "recall", "--limit", limit)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-2000:]
    assert proc.returncode == 2 and proc.stderr.startswith(b"error: argument --limit: invalid int value")


def test_checking_in_a_folder_is_refused(project, tmp_path_factory):
    folder = tmp_path_factory.mktemp("a-folder")
    before = files(project.root)
    refused(run(project.root, "edit", "--checkin", str(folder)), f"{folder}: is a folder, not a file")
    refused(run(project.root, "edit", "--checkin", str(project.root / "afile" / "x.md")),
            "file not found (a folder on its path is a file)")
    assert files(project.root) == before


UNDER_A_FILE = {
    "checkout": ["edit", "--checkout", "afile/x.md"],
    "checkout-deeper": ["edit", "--checkout", "afile/sub/x.md"],
    "export": ["export", "--path", "afile/x.md"],
    "export-deeper": ["export", "--path", "afile/sub/x.md"],
    "export-check": ["export", "--check", "--path", "afile/x.md"],
    "export-enable": ["export", "--enable", "--path", "afile/x.md"],
}


@pytest.mark.parametrize("case", sorted(UNDER_A_FILE))
def test_a_path_under_a_regular_file_is_refused_before_anything_is_written(project, case):
    before = files(project.root)
    line = refused(run(project.root, *UNDER_A_FILE[case]),
                   f"is under {project.root.resolve() / 'afile'}, which is a file, not a folder")
    assert "x.md" in line
    assert files(project.root) == before  # config.json above all: the mirror stays where it was


def _config_points_under_a_file(project) -> dict:
    """config.json as a pull request could leave it: the mirror aimed below a regular file."""
    config = project.memory_dir / "config.json"
    config.write_text(json.dumps({"export": {"enabled": True, "path": "afile/x.md"}}) + "\n", encoding="utf-8")
    return files(project.root)


def _shards(project) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((project.memory_dir / "ledger").glob("*.jsonl")))


def test_a_write_whose_mirror_cannot_be_rendered_is_acknowledged_with_one_warning(project):
    before = _config_points_under_a_file(project)
    proc = run(project.root, "remember", "the unique zebra note")
    err = proc.stderr.decode("utf-8")
    assert "Traceback" not in err, err[-2000:]
    assert proc.returncode == 0, err
    note_id = proc.stdout.decode().strip()
    assert len(note_id) == 8
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: the change was written to the ledger (do not repeat it)")
    assert "config.json" in lines[0] and "afile" in lines[0] and "memory-custodian export" in lines[0]
    assert _shards(project).count(b"\"body\":\"the unique zebra note\"") == 1  # written once
    after = files(project.root)
    assert {k: v for k, v in after.items() if "/ledger/" not in k} == \
        {k: v for k, v in before.items() if "/ledger/" not in k}  # config.json, the old mirror, afile untouched


def test_lifecycle_verbs_with_a_broken_mirror_warn_and_exit_0(project):
    _config_points_under_a_file(project)
    for args in (["flag-stale", project.seed_id, "--reason", "check it"],
                 ["supersede", project.seed_id, "the replacement note", "--reason", "newer"]):
        proc = run(project.root, *args)
        err = proc.stderr.decode("utf-8")
        assert "Traceback" not in err, err[-2000:]
        assert proc.returncode == 0, err
        assert len(err.splitlines()) == 1 and err.startswith("warning: the change was written"), err
    assert _shards(project).count(b"\"body\":\"the replacement note\"") == 1


def test_export_with_a_config_path_under_a_file_names_config_json(project):
    before = _config_points_under_a_file(project)
    for args in (["export"], ["export", "--check"]):
        refused(run(project.root, *args), f"{project.memory_dir / 'config.json'}: export path 'afile/x.md'",
                "memory-custodian export --disable")
    assert files(project.root) == before


def test_atomic_write_under_a_file_reports_the_write_not_the_cleanup(tmp_path):
    """The temp file's cleanup fails with ENOTDIR too; that must not replace the error of the write."""
    from memory_custodian.base import fsutil
    from memory_custodian.base.errors import InvalidInput

    (tmp_path / "afile").write_bytes(b"x\n")
    with pytest.raises(InvalidInput) as info:
        fsutil.atomic_write(tmp_path / "afile" / "x.md", "text\n")
    assert info.value.one_line() == (f"{tmp_path / 'afile' / 'x.md'}: a folder on this path is a file; give a path "
                                     "whose folders are folders — nothing was changed")
    assert (tmp_path / "afile").read_bytes() == b"x\n"


def test_a_disk_error_while_re_rendering_the_mirror_after_a_checkin_or_forget_is_one_warning(project, monkeypatch,
                                                                                              capsys):
    """Disk full cannot be produced here: the render raises ENOSPC by injection. The check-in and
    the forget have landed, so each says so in one warning line and exits 0 (a failure would make a
    person check in twice)."""
    import errno

    from memory_custodian.cli import main
    from memory_custodian.ledger.text import mirror

    def disk_full(memory):
        raise OSError(errno.ENOSPC, "No space left on device", str(project.memory_dir / "MEMORY.md"))

    buffer = project.root / "notes.md"
    project.edit_checkout(buffer)
    buffer.write_text(buffer.read_text(encoding="utf-8").replace("hello from the seed note", "hello, edited"),
                      encoding="utf-8")
    monkeypatch.setattr(mirror, "refresh_mirror_if_enabled", disk_full)
    root = str(project.root)
    for argv, said in ((["edit", "--project-root", root, "--checkin", str(buffer), "--reason", "typo"],
                        "warning: checked in, but the export mirror was not re-rendered: "),
                       (["forget", "--project-root", root, "--note", project.seed_id, "--yes"],
                        "warning: the note was forgotten, but MEMORY.md could not be re-rendered: ")):
        with pytest.raises(SystemExit) as done:
            main(argv)
        err = capsys.readouterr().err
        assert done.value.code == 0, err
        assert err.startswith(said) and "No space left on device" in err and "Traceback" not in err, err
        assert "memory-custodian export" in err.splitlines()[0]
    assert b"hello from the seed note" not in _shards(project)  # the forget landed too
    assert _shards(project).count(b"\"body\":\"hello, edited\"") == 1  # and the check-in, once
