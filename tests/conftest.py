"""Shared test helpers: real processes, real temp projects, the MemoryCustodian fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
MC_FIXTURES = FIXTURES / "memorycustodian"


def run_cli(*args: str, cwd: Path | str | None = None, input: str | None = None, env: dict | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
    """Run `python -m memory_custodian ARGS` as a fresh process, as users and hosts do."""
    full_env = dict(os.environ)
    full_env.setdefault("PYTHONHASHSEED", "random")
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "memory_custodian", *args],
        cwd=cwd, input=input, capture_output=True, text=True, env=full_env, timeout=timeout,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def mem(tmp_path):
    """A bare project with a memory folder (a manifest and nothing else), opened."""
    from memory_custodian import Memory

    (tmp_path / "docs" / "memory").mkdir(parents=True)
    (tmp_path / "docs" / "memory" / "manifest.md").write_text("# M\n", encoding="utf-8")
    return Memory.open(tmp_path)


@pytest.fixture
def memory(tmp_path):
    """A project after `init` (the six core files), opened."""
    from memory_custodian import Memory

    m = Memory.open(tmp_path)
    m.init()
    return m
