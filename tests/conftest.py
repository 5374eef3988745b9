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
