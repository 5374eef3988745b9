"""`export` and `edit` as users and hooks run them: fresh processes, exit codes, stdout/stderr, JSON."""

from __future__ import annotations

import json
import stat
import sys

from conftest import run_cli
from ledger_text_fixture import write_ledger

GOLDEN = __import__("pathlib").Path(__file__).parent / "golden" / "export" / "ledger.md"


def test_export_writes_the_mirror_and_check_guards_it(tmp_path):
    memory = write_ledger(tmp_path)
    mirror = memory.memory_dir / "MEMORY.md"
    proc = run_cli("export", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"wrote {mirror} (10 notes, {len(mirror.read_bytes())} bytes)\n"
    assert mirror.read_text() == GOLDEN.read_text()
    proc = run_cli("export", "--check", "--project-root", str(tmp_path))
    assert (proc.returncode, proc.stdout) == (0, f"{mirror} is up to date (10 notes)\n")
    mirror.write_text(mirror.read_text().replace("We use tabs.", "We use spaces."))
    proc = run_cli("export", "--check", "--project-root", str(tmp_path))
    assert proc.returncode == 1
    assert "-We use spaces.\n+We use tabs.\n" in proc.stdout
    assert proc.stderr == f"error: {mirror} is out of date — run `memory-custodian export`\n"
    proc = run_cli("export", "--check", "--format", "json", "--project-root", str(tmp_path))
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["up_to_date"] is False and doc["notes"] == 10


def test_export_path_is_relative_to_the_project_root_and_confined_to_it(tmp_path):
    memory = write_ledger(tmp_path / "p")
    (tmp_path / "elsewhere").mkdir()
    proc = run_cli("export", "--project-root", str(tmp_path / "p"), "--path", "docs/LEDGER.md", "--format", "json",
                   cwd=tmp_path / "elsewhere")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["path"] == str((tmp_path / "p" / "docs" / "LEDGER.md").resolve())
    assert (tmp_path / "p" / "docs" / "LEDGER.md").read_text() == GOLDEN.read_text()
    shard = sorted((memory.memory_dir / "ledger").glob("*.jsonl"))[0]
    before = shard.read_bytes()
    for bad in ("../out.md", str(tmp_path / "out.md"), "C:\\x.md", f"docs/memory/ledger/{shard.name}",
                "docs/memory/decisions.md", "docs/memory/config.json"):
        proc = run_cli("export", "--project-root", str(tmp_path / "p"), "--path", bad)
        assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "export path" in proc.stderr, bad
    assert shard.read_bytes() == before and not (tmp_path / "out.md").exists()


def test_edit_checkout_never_overwrites_memory_or_other_files(tmp_path):
    memory = write_ledger(tmp_path)
    shard = sorted((memory.memory_dir / "ledger").glob("*.jsonl"))[0]
    readme = tmp_path / "README.md"
    readme.write_text("# my project\n")
    for target, message in ((shard, "inside the memory folder"), (readme, "is not an edit check-out")):
        before = target.read_bytes()
        proc = run_cli("edit", "--checkout", str(target), "--project-root", str(tmp_path))
        assert proc.returncode == 2 and message in proc.stderr
        assert target.read_bytes() == before
    buf = tmp_path / "buf.md"
    assert run_cli("edit", "--checkout", str(buf), "--project-root", str(tmp_path)).returncode == 0
    assert run_cli("edit", "--checkout", str(buf), "--project-root", str(tmp_path)).returncode == 0  # a re-check-out


def test_a_mirror_that_cannot_be_rendered_after_a_checkin_is_a_warning(tmp_path):
    memory = write_ledger(tmp_path)
    buf = tmp_path / "buf.md"
    run_cli("edit", "--checkout", str(buf), "--project-root", str(tmp_path))
    buf.write_text(buf.read_text().replace("aaaa body", "aaaa body v2"))
    (memory.memory_dir / "config.json").write_text('{"export": {"enabled": true, "path": "docs/memory/brief.md"}}')
    proc = run_cli("edit", "--checkin", str(buf), "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("warning: checked in, but the export mirror was not re-rendered:")
    assert "superseded #aaaa0000" in proc.stdout


def test_export_enable_then_cli_writes_rerender(tmp_path):
    memory = write_ledger(tmp_path)
    proc = run_cli("export", "--enable", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "mirror enabled in" in proc.stdout
    config = json.loads((memory.memory_dir / "config.json").read_text())
    assert config == {"export": {"enabled": True, "path": "docs/memory/MEMORY.md"}}
    buf = tmp_path / "buf.md"
    assert run_cli("edit", "--checkout", str(buf), "--project-root", str(tmp_path)).returncode == 0
    buf.write_text(buf.read_text() + "\n### Added from the CLI\n- kind: finding\n\nhello mirror\n")
    proc = run_cli("edit", "--checkin", str(buf), "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "hello mirror" in (memory.memory_dir / "MEMORY.md").read_text()
    proc = run_cli("export", "--disable", "--project-root", str(tmp_path))
    assert proc.returncode == 0 and "disabled" in proc.stdout
    assert run_cli("export", "--enable", "--check", "--project-root", str(tmp_path)).returncode == 2


def test_edit_checkout_checkin_reports_each_change(tmp_path):
    memory = write_ledger(tmp_path)
    buf = tmp_path / "buf.md"
    proc = run_cli("edit", "--checkout", str(buf), "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("checked out 6 notes to ")
    proc = run_cli("edit", "--checkin", str(buf), "--project-root", str(tmp_path))
    assert (proc.returncode, proc.stdout) == (0, "nothing to check in: no changes (6 notes unchanged)\n")
    text = buf.read_text().replace("aaaa body", "aaaa body, corrected")
    start = text.index("### [#zzzz0000]")
    end = text.index("### ", start + 4)
    buf.write_text(text[:start] + text[end:])
    proc = run_cli("edit", "--checkin", str(buf), "--project-root", str(tmp_path))
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: {buf}: removed notes need a reason: #zzzz0000")
    proc = run_cli("edit", "--checkin", str(buf), "--reason", "duplicate", "--format", "json",
                   "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["counts"] == {"create": 0, "revoke": 1, "supersede": 1} and doc["events"] == 3
    assert {n.id: n.state for n in memory.notes()}["zzzz0000"] == "revoked"


def test_edit_conflict_exits_1_and_a_parse_error_exits_2_with_the_line(tmp_path):
    write_ledger(tmp_path)
    buf = tmp_path / "buf.md"
    run_cli("edit", "--checkout", str(buf), "--project-root", str(tmp_path))
    text = buf.read_text()
    bad = text.replace("- kind: gotcha", "- kind: gotch")
    buf.write_text(bad)
    line = bad.split("\n").index("- kind: gotch") + 1
    proc = run_cli("edit", "--checkin", str(buf), "--project-root", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {buf}:{line}: unknown kind 'gotch'")
    buf.write_text(text.replace("aaaa body", "aaaa body v2"))
    assert run_cli("revoke", "aaaa0000", "--reason", "wrong", "--project-root", str(tmp_path)).returncode == 0
    proc = run_cli("edit", "--checkin", str(buf), "--project-root", str(tmp_path))
    assert proc.returncode == 1
    assert "#aaaa0000 changed (revoke by human" in proc.stderr and "nothing was written" in proc.stderr


def test_interactive_edit_runs_the_editor_and_checks_in(tmp_path):
    memory = write_ledger(tmp_path)
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
                      "p.write_text(p.read_text().replace('zzzz body', 'zzzz body, via $EDITOR'))\n")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    proc = run_cli("edit", "--project-root", str(tmp_path), env={"EDITOR": f"{sys.executable} {editor}"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("superseded #zzzz0000 by #")
    assert any(n.body == "zzzz body, via $EDITOR" for n in memory.notes())


def test_interactive_edit_keeps_the_file_when_checkin_fails(tmp_path):
    write_ledger(tmp_path)
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
                      "p.write_text(p.read_text().replace('\\n- kind: finding\\n', '\\n- kind: nope\\n', 1))\n")
    proc = run_cli("edit", "--project-root", str(tmp_path), env={"EDITOR": f"{sys.executable} {editor}"})
    assert proc.returncode == 2
    kept = proc.stderr.split("your edits are kept in ")[1].split(";")[0]
    with open(kept) as fh:
        assert "- kind: nope" in fh.read()
    __import__("os").unlink(kept)


def test_commands_have_help():
    for name in ("export", "edit"):
        proc = run_cli(name, "--help")
        assert proc.returncode == 0 and "--format" in proc.stdout
