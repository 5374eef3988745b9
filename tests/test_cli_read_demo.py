"""The README's first command: `examples/demo.sh` runs init, adds a decision, prints a context pack."""

from __future__ import annotations

import os
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
