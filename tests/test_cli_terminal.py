"""On a terminal (real processes on a pty): the reindex progress line and the `forget --note` prompt."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from conftest import run_cli


def on_a_terminal(args, root, answer: bytes = b"") -> tuple[int, str, str]:
    """Run the CLI with stdin and stderr on a pty (stdout piped); returns (exit code, stdout, terminal text)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "memory_custodian", *args, "--project-root", str(root)],
                            stdin=slave, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    if answer:
        os.write(master, answer)
    out, _ = proc.communicate(timeout=60)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return proc.returncode, out.decode(), seen.decode(errors="replace")


def test_reindex_shows_progress_on_a_terminal_only(tmp_path):
    run_cli("init", cwd=tmp_path)
    run_cli("remember", "a note to index", cwd=tmp_path)
    code, out, seen = on_a_terminal(["reindex"], tmp_path)
    assert code == 0 and out.startswith("indexed 1 notes") and "reindexing 100%" in seen
    piped = run_cli("reindex", cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == ""


def test_forget_note_asks_on_a_terminal_and_no_keeps_the_note(tmp_path):
    run_cli("init", cwd=tmp_path)
    note = run_cli("remember", "keep me unless told", cwd=tmp_path).stdout.strip()
    code, out, seen = on_a_terminal(["forget", "--note", note], tmp_path, answer=b"n\n")
    assert code == 1 and out == ""
    assert f"Delete note {note} from the ledger for good? [y/N]" in seen and "aborted; nothing was deleted" in seen
    assert "keep me unless told" in run_cli("expand", note, cwd=tmp_path).stdout
    code, out, _ = on_a_terminal(["forget", "--note", note], tmp_path, answer=b"y\n")
    assert code == 0 and out == f"forgot note #{note}\n"
