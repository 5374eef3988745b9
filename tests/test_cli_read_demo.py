"""The README's first command: `examples/demo.sh` runs init, adds a decision, prints a context pack."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_demo_script_runs_end_to_end(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(["bash", str(REPO / "examples" / "demo.sh")], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "kept    docs/memory/brief.md (already exists, left alone)" in out
    assert "## 2026-" in out and "append-only JSON-lines journal" in out
    assert "- areas/store.md: loaded (path-glob)" in out and "src/store/engine.py <- src/store/**" in out
    assert out.rstrip().endswith("/kvstore")
    assert not (REPO / "examples" / "kvstore" / "docs" / "memory" / "manifest.md").exists()  # bundled copy untouched


def test_demo_script_fails_loudly(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path), PATH="/usr/bin:/bin", PYTHON=str(tmp_path / "no-python"))
    proc = subprocess.run(["bash", str(REPO / "examples" / "demo.sh")], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode != 0
    assert "demo.sh: FAILED" in proc.stderr


def test_every_command_the_demo_prints_can_be_copied_and_run(tmp_path):
    """demo.sh echoes each command with its quotes: the copied lines, run by a shell in a fresh copy
    of the example, print the same context pack the demo printed."""
    env = dict(os.environ, TMPDIR=str(tmp_path), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    demo = subprocess.run(["bash", str(REPO / "examples" / "demo.sh")], capture_output=True, text=True, env=env,
                          timeout=120, check=True).stdout
    printed = [line[2:] for line in demo.split("\n") if line.startswith("$ memory-custodian ")]
    assert len(printed) == 6 and "'src/store/**'" in printed[2]  # a glob the shell must not expand
    assert any("'Store data as an append-only JSON-lines journal replayed at start-up'" in line for line in printed)
    copy = tmp_path / "copy"
    shutil.copytree(REPO / "examples" / "kvstore", copy)
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    (copy / "src" / "store" / "other.py").write_text("")  # a glob left unquoted would now expand to two words
    outputs = [subprocess.run(["bash", "-c", line], cwd=copy, capture_output=True, text=True, env=env, timeout=60,
                              check=True).stdout for line in printed]
    demo_pack = demo.split("$ " + printed[-1] + "\n", 1)[1].split("\ndemo.sh: OK", 1)[0]
    assert outputs[-1].strip() == demo_pack.strip()
