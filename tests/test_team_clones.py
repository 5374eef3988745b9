"""A team: two clones on machines whose installations sit at different paths share the same committed host
files; every hook command, run as the host runs it, delivers memory in both; without the tool it says so."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_hooks import context_of, payload

from memory_custodian.base.launcher import USUAL_LOCATIONS, not_installed_text
from memory_custodian.memory import Memory
from memory_custodian.setup.setup_doctor import check_installation

pytestmark = [pytest.mark.skipif(shutil.which("git") is None or os.name == "nt", reason="needs git and a POSIX sh"),
              pytest.mark.skipif(any(os.path.exists(p) for p in USUAL_LOCATIONS if "${HOME}" not in p),
                                 reason="an installation in a usual place would answer for the removed one")]

HOST_FILES = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"}


def make_installation(where: Path, *, console_script: bool) -> Path:
    """A second installation of this package at another absolute path: its own `bin/` (the interpreter
    linked, the site-packages shared), as a console script or, with `console_script=False`, a
    wrapper that `init` sees as an interpreter installation."""
    venv = Path(sys.prefix)
    (where / "bin").mkdir(parents=True)
    (where / "pyvenv.cfg").write_text((venv / "pyvenv.cfg").read_text())
    (where / "lib").symlink_to(venv / "lib")
    python = where / "bin" / "python3"
    python.symlink_to(os.path.realpath(sys.executable))
    script = where / "bin" / "memory-custodian"
    if console_script:
        script.write_text(f"#!{python}\nimport sys\nfrom memory_custodian.__main__ import main\nsys.exit(main())\n")
    else:
        script.write_text(f'#!/bin/sh\nexec "{python}" -m memory_custodian "$@"\n')
    script.chmod(0o755)
    return script


def git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x", GIT_CONFIG_NOSYSTEM="1")
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run_as_host(root: Path, host: str, event: str, command: str, home: Path) -> subprocess.CompletedProcess:
    """The hook command as the host runs it: `env -i`, a minimal PATH, through `sh -c`, the host's payload."""
    env = ["env", "-i", "PATH=/usr/bin:/bin", f"HOME={home}"]
    if host == "claude":
        env.append(f"CLAUDE_PROJECT_DIR={root}")
    elif host == "gemini":
        env += [f"GEMINI_PROJECT_DIR={root}", f"CLAUDE_PROJECT_DIR={root}"]
    return subprocess.run([*env, "sh", "-c", command], cwd=root, input=payload(host, event, root), timeout=60,
                          capture_output=True, text=True)


def commands_of(root: Path) -> list[tuple[str, str, str]]:
    out = []
    for host, rel in HOST_FILES.items():
        for event, groups in json.loads((root / rel).read_text())["hooks"].items():
            out.extend((host, event, h["command"]) for g in groups for h in g["hooks"])
    return out


def all_hooks(root: Path, home: Path) -> list[tuple[str, str, subprocess.CompletedProcess]]:
    jobs = commands_of(root)
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(zip([j[0] for j in jobs], [j[1] for j in jobs],
                        pool.map(lambda j: run_as_host(root, *j, home), jobs), strict=True))


def test_two_clones_with_different_install_paths_share_clean_host_files_and_both_get_memory(tmp_path):
    home = tmp_path / "home"  # no installation in it: only the per-clone setting can find one
    home.mkdir()
    alice_mc = make_installation(tmp_path / "alice" / "venvs" / "mc", console_script=True)
    bob_mc = make_installation(tmp_path / "bob tools" / "mc", console_script=False)  # a space in the path too
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    alice = tmp_path / "alice-clone"
    git(tmp_path, "clone", "-q", str(origin), str(alice))
    (alice / "README.md").write_text("shop\n")
    first = subprocess.run([str(alice_mc), "init", "--agent", "all"], cwd=alice, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    subprocess.run([str(alice_mc), "remember", "Run make check before every push.", "--kind", "directive",
                    "--priority", "high"], cwd=alice, check=True, capture_output=True)
    git(alice, "add", "-A")
    git(alice, "commit", "-q", "-m", "memory for the team")
    git(alice, "push", "-q", "origin", "main")

    bob = tmp_path / "bob-clone"
    git(tmp_path, "clone", "-q", str(origin), str(bob))
    second = subprocess.run([str(bob_mc), "init", "--agent", "all"], cwd=bob, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert git(bob, "status", "--porcelain") == "" and git(alice, "status", "--porcelain") == ""
    assert git(alice, "config", "--get", "memory-custodian.command").strip() == shlex.quote(str(alice_mc))
    assert git(bob, "config", "--get", "memory-custodian.command").strip() == shlex.join(
        [str(bob_mc.parent / "python3"), "-m", "memory_custodian"])
    committed = "".join((bob / rel).read_text() for rel in (*HOST_FILES.values(), ".mcp.json", ".codex/config.toml"))
    assert str(tmp_path) not in committed

    for clone in (alice, bob):
        results = all_hooks(clone, home)
        assert len(results) == 18
        for host, event, proc in results:
            assert (proc.returncode, proc.stderr) == (0, ""), (clone.name, host, event, proc.stderr)
            if event == "SessionStart":
                assert "Run make check before every push." in context_of(proc.stdout, event), (clone.name, host)
    found = check_installation(Memory.open(bob))  # doctor's line (the command runs every hook again: not here)
    assert found[0].ok and f"{bob_mc.parent / 'python3'} -m memory_custodian (the per-clone" in found[0].detail

    shutil.rmtree(tmp_path / "bob tools")  # the tool uninstalled on bob's machine
    for host in HOST_FILES:
        command = next(c for h, e, c in commands_of(bob) if h == host and e == "SessionStart")
        proc = run_as_host(bob, host, "SessionStart", command, home)
        assert (proc.returncode, proc.stderr) == (0, "")
        assert context_of(proc.stdout, "SessionStart") == not_installed_text(host)
        stop = next((h, e, c) for h, e, c in commands_of(bob) if h == host and e in ("Stop", "AfterAgent"))
        quiet = run_as_host(bob, *stop, home)
        assert (quiet.returncode, quiet.stdout.strip()) == (0, "{}" if host == "gemini" else "")
