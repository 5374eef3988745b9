"""`memory-custodian init`: what it creates, what it leaves alone, and what it refuses."""

from __future__ import annotations

import json
import stat

from conftest import run_cli

CORE = ["manifest.md", "brief.md", "decisions.md", "constraints.md", "do-not-use.md", "inbox.md"]


def test_init_creates_core_files_cache_and_gitattributes(tmp_path):
    proc = run_cli("init", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    memory = tmp_path / "docs" / "memory"
    assert sorted(p.name for p in memory.iterdir() if p.is_file()) == sorted(CORE)
    for name in CORE:
        assert f"created docs/memory/{name}" in proc.stdout
    cache = memory / ".cache"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert (cache / ".gitignore").read_text() == "*\n"
    assert (tmp_path / ".gitattributes").read_text() == ("docs/memory/ledger/*.jsonl merge=memory-custodian-ledger\n"
                                                         "docs/memory/**/*.md merge=memory-custodian-curated\n"
                                                         "docs/memory/MEMORY.md merge=memory-custodian-mirror\n"
                                                         "docs/memory/forgotten.txt merge=union\n")
    assert not (memory / "preferences.md").exists()


def test_init_never_overwrites_and_says_so(tmp_path):
    run_cli("init", "--project-root", str(tmp_path))
    brief = tmp_path / "docs/memory/brief.md"
    brief.write_text("# My brief\n")
    (tmp_path / "docs/memory/inbox.md").unlink()
    proc = run_cli("init", "--project-root", str(tmp_path), "--format", "json")
    data = json.loads(proc.stdout)
    assert data["created"] == ["docs/memory/inbox.md"]
    assert "docs/memory/brief.md" in data["kept"] and data["gitattributes"] == "unchanged"
    assert brief.read_text() == "# My brief\n"
    proc = run_cli("init", "--project-root", str(tmp_path))
    assert "kept    docs/memory/brief.md (already exists, left alone)" in proc.stdout


def test_init_extended(tmp_path):
    proc = run_cli("init", "--extended", "--project-root", str(tmp_path))
    assert proc.returncode == 0
    memory = tmp_path / "docs/memory"
    for name in ("preferences.md", "changelog.md", "rules/README.md", "profiles/README.md", "archive/README.md"):
        assert (memory / name).is_file(), name
    assert (memory / "areas").is_dir()


def test_gitattributes_merge_keeps_other_lines(tmp_path):
    attrs = tmp_path / ".gitattributes"
    attrs.write_text("*.png binary\n*.sh text eol=lf")
    run_cli("init", "--project-root", str(tmp_path), "--memory-dir", "docs/mem")
    assert attrs.read_text() == ("*.png binary\n*.sh text eol=lf\n"
                                 "docs/mem/ledger/*.jsonl merge=memory-custodian-ledger\n"
                                 "docs/mem/**/*.md merge=memory-custodian-curated\n"
                                 "docs/mem/MEMORY.md merge=memory-custodian-mirror\n"
                                 "docs/mem/forgotten.txt merge=union\n")
    own = "docs/mem/ledger/*.jsonl merge=ledger-driver\ndocs/mem/**/*.md merge=mine\ndocs/mem/MEMORY.md -merge\n"
    attrs.write_text(own)
    proc = run_cli("init", "--project-root", str(tmp_path), "--memory-dir", "docs/mem")
    assert attrs.read_text() == own + "docs/mem/forgotten.txt merge=union\n"  # the project's own rules win
    again = run_cli("init", "--project-root", str(tmp_path), "--memory-dir", "docs/mem")
    assert ".gitattributes" not in again.stdout and proc.returncode == 0


def test_memory_dir_must_stay_under_docs(tmp_path):
    for bad in ("memory", "../docs/memory", "/tmp/x", "docs"):
        proc = run_cli("init", "--project-root", str(tmp_path), "--memory-dir", bad)
        assert proc.returncode == 2, bad
        assert "docs/" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_init_refuses_a_file_where_the_folder_goes(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/memory").write_text("oops")
    proc = run_cli("init", "--project-root", str(tmp_path))
    assert proc.returncode == 2 and "not a folder" in proc.stderr
    assert (tmp_path / "docs/memory").read_text() == "oops"
    assert not (tmp_path / ".gitattributes").exists()


def test_init_refuses_a_folder_where_a_file_goes(tmp_path):
    (tmp_path / "docs/memory/brief.md").mkdir(parents=True)
    proc = run_cli("init", "--project-root", str(tmp_path))
    assert proc.returncode == 2 and "brief.md" in proc.stderr
    assert sorted(p.name for p in (tmp_path / "docs/memory").iterdir()) == ["brief.md"]
    assert not (tmp_path / ".gitattributes").exists()


def test_init_agent_option_is_validated(tmp_path):
    proc = run_cli("init", "--agent", "vim", "--project-root", str(tmp_path))
    assert proc.returncode == 2
    assert list(tmp_path.iterdir()) == []


def test_then_read_works_from_the_root(tmp_path):
    run_cli("init", cwd=tmp_path)
    proc = run_cli("read", "--task", "general", cwd=tmp_path)
    assert proc.returncode == 0 and "## brief.md" in proc.stdout


def test_init_with_agent_installs_and_removes_entry_points(tmp_path):
    proc = run_cli("init", "--agent", "claude", "--project-root", str(tmp_path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert "docs/memory/manifest.md" in data["created"]
    assert "CLAUDE.md" in data["agents"]["created"]
    assert (tmp_path / "CLAUDE.md").is_file()
    proc = run_cli("init", "--remove", "--agent", "claude", "--project-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "removed   CLAUDE.md" in proc.stdout
    assert not (tmp_path / "CLAUDE.md").exists()
    assert (tmp_path / "docs/memory/manifest.md").is_file()  # --remove leaves memory alone


def test_gitattributes_with_crlf_keeps_its_bytes(tmp_path):
    attrs = tmp_path / ".gitattributes"
    attrs.write_bytes(b"*.png binary\r\n*.bat text eol=crlf\r\n")
    assert run_cli("init", "--project-root", str(tmp_path)).returncode == 0
    assert attrs.read_bytes() == (b"*.png binary\r\n*.bat text eol=crlf\r\n"
                                  b"docs/memory/ledger/*.jsonl merge=memory-custodian-ledger\r\n"
                                  b"docs/memory/**/*.md merge=memory-custodian-curated\r\n"
                                  b"docs/memory/MEMORY.md merge=memory-custodian-mirror\r\n"
                                  b"docs/memory/forgotten.txt merge=union\r\n")


def test_non_utf8_gitattributes_refuses_before_writing(tmp_path):
    (tmp_path / ".gitattributes").write_bytes(b"\xff\xfe*.png binary\n")
    proc = run_cli("init", "--project-root", str(tmp_path))
    assert proc.returncode == 2 and ".gitattributes:1: not valid UTF-8" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitattributes"]
