"""Shared test helpers: the CLI in process (or as a real process), real temp projects, the fixtures."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
MC_FIXTURES = FIXTURES / "memorycustodian"

# PYTHONDONTWRITEBYTECODE=1 (set on the development machines) would make every worker rewrite every
# test module's asserts again on every run (~6 s a worker); the cache goes to gitignored __pycache__
sys.dont_write_bytecode = False


def _ram_temp_root(path: str = "/dev/shm", room: int = 1 << 30) -> str | None:
    """A RAM-backed folder with room for the temp projects, or None (then the system's temp folder)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return path if st.f_bavail * st.f_frsize >= room and os.access(path, os.W_OK | os.X_OK) else None


# Every write fsyncs: on a disk shared with other suites that is a third of the run spent waiting. The
# files, renames, locks and fsync calls are as real on tmpfs; what a suite cannot observe either way is
# power loss (crash tests SIGKILL processes, whose writes the page cache keeps). Docker's 64 MB /dev/shm
# is too small and is passed over; PYTEST_DEBUG_TEMPROOT or --basetemp, when given, win.
if "PYTEST_DEBUG_TEMPROOT" not in os.environ and (_root := _ram_temp_root()):
    os.environ["PYTEST_DEBUG_TEMPROOT"] = _root


def _named_root(args: tuple[str, ...], cwd, as_typed: bool) -> tuple[str, ...]:
    """`init` outside a repository asks for the project root: most tests work in a bare temp folder, so
    the helpers name it (`as_typed=True` runs the words exactly as given)."""
    if as_typed or not args or args[0] != "init" or "--project-root" in args:
        return args
    return (*args, "--project-root", str(cwd or os.getcwd()))


def run_cli_process(*args: str, cwd: Path | str | None = None, input: str | None = None, env: dict | None = None,
                    timeout: float = 60, as_typed: bool = False) -> subprocess.CompletedProcess:
    """Run `python -m memory_custodian ARGS` as a fresh process: for tests where the process is the point
    (start-up, imports, crashes, signals, concurrency, a terminal, hooks as a host runs them)."""
    args = _named_root(args, cwd, as_typed)
    full_env = dict(os.environ)
    full_env.setdefault("PYTHONHASHSEED", "random")
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "memory_custodian", *args],
        cwd=cwd, input=input, capture_output=True, text=True, env=full_env, timeout=timeout,
    )


def _stream(data: bytes = b"", errors: str = "strict") -> io.TextIOWrapper:
    # a text stream with `.buffer`, as sys.stdin/stdout/stderr have (hooks read sys.stdin.buffer)
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors=errors, newline="\n", write_through=True)


def _captured(stream: io.TextIOWrapper) -> str:
    # decoded as subprocess.run(text=True) decodes a pipe: strict UTF-8, universal newlines
    return io.TextIOWrapper(io.BytesIO(stream.buffer.getvalue()), encoding="utf-8", newline=None).read()


@contextlib.contextmanager
def _process_state(cwd, env: dict | None):
    """chdir and os.environ changes for one in-process call, undone afterwards."""
    saved_cwd, saved_env = os.getcwd(), dict(os.environ)
    try:
        if cwd is not None:
            os.chdir(cwd)
        os.environ.update(env or {})
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def run_cli(*args: str, cwd: Path | str | None = None, input: str | bytes | None = None, env: dict | None = None,
            timeout: float = 60, as_typed: bool = False) -> subprocess.CompletedProcess:
    """Run `memory-custodian ARGS` in this process, with its own stdin/stdout/stderr, cwd and environment;
    returns what `run_cli_process` would."""
    args = _named_root(args, cwd, as_typed)
    from memory_custodian.cli import run
    from memory_custodian.curated.write.journal import CRASH_ENV

    assert CRASH_ENV not in (env or {}), "a command that SIGKILLs itself needs run_cli_process"
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    streams = _stream(data), _stream(errors="surrogateescape"), _stream(errors="backslashreplace")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        with _process_state(cwd, env):
            try:
                code = run(list(args))
            except Exception:  # what the interpreter would print for an uncaught error
                traceback.print_exc()
                code = 1
            gc.collect(1)  # what exit does: close the SQLite index a dropped Memory holds in a (young) cycle
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return subprocess.CompletedProcess([sys.executable, "-m", "memory_custodian", *args], code,
                                       _captured(streams[1]), _captured(streams[2]))


def describe_brief(root) -> None:
    """Replace init's template brief, which check and doctor report (as MemoryCustodian 0.9.1 does)."""
    (Path(root) / "docs" / "memory" / "brief.md").write_text(
        "# Brief\n\nA small invoicing service; these tests exercise its memory.\n", encoding="utf-8")


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


@pytest.fixture
def git(tmp_path):
    """`git(cwd, *args, check=True)` with a private HOME and a fixed identity; a failure shows its output."""
    env = dict(os.environ, HOME=str(tmp_path), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@x")

    def run(cwd, *args, check=True):
        proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stdout}{proc.stderr}")
        return proc

    return run


@pytest.fixture(autouse=True)
def _not_inside_an_agent_host(monkeypatch):
    """The suite run from an agent's shell must behave as from a person's: those hosts' variables
    make the CLI record `agent` (`agents.hosts.AGENT_ENV`), and a host's project folder is where a hook
    looks for memory when its `cwd` has none (`hooks._open_memory`)."""
    from memory_custodian.agents.hosts import AGENT_ENV

    for names in AGENT_ENV.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)


def unfenced(stdout: str) -> str:
    """The memory text of `read`/`recall`/`expand` output, without the data notice and the fence."""
    from memory_custodian.base.fence import DATA_NOTICE

    head, _, rest = stdout.partition("\n")
    assert head == DATA_NOTICE, stdout[:200]
    opening, _, rest = rest.partition("\n")
    assert opening.startswith("```") and rest.endswith(opening.split("memory")[0] + "\n"), stdout[-200:]
    return rest[: -len(opening.split("memory")[0]) - 1]


# The files that take seconds, longest first: the workers start on them, so none is left running alone at
# the end while the other worker idles (pyproject's --no-loadscope-reorder keeps this order; only the
# order changes, never what runs — a file missing here just runs in its place).
SLOW_FIRST = ("test_web_browser.py", "test_nasty_inputs.py", "test_mcp_server.py", "test_torture_quick.py",
              "test_doctor_setup.py", "test_ledger_recall_reach.py", "test_attacks_paths.py",
              "test_writeback_replay.py", "test_git_merge_drivers.py", "test_ledger_processes.py",
              "test_install_commands.py")


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FIRST)))  # stable: each file's own order stays
