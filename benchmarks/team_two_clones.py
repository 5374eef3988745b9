"""The team run with real installations: `pipx install` of this checkout into two different homes (two
machines' install paths), a shared repository, `init --agent all` in a clone on each, every committed hook
command run as a host runs it (`env -i`, a minimal PATH), then the tool uninstalled on one machine.

Run: .venv/bin/python benchmarks/team_two_clones.py [--pipx PATH]   (needs pipx and git; ~1-2 minutes)
Prints one line per step and exits 1 on the first thing that is not as a team needs it. The suite's
`tests/test_team_clones.py` is the same run with two cheap installations (a second bin/ of this venv).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))

HOST_FILES = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"}


def run(cmd, cwd=None, env=None, **kw) -> subprocess.CompletedProcess:
    full = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
                GIT_COMMITTER_EMAIL="t@x", GIT_CONFIG_NOSYSTEM="1", **(env or {}))
    return subprocess.run(cmd, cwd=cwd, env=full, capture_output=True, text=True, timeout=600, **kw)


def must(proc: subprocess.CompletedProcess, what: str) -> str:
    if proc.returncode != 0:
        raise SystemExit(f"FAIL {what}: exit {proc.returncode}: {(proc.stderr or proc.stdout)[-800:]}")
    return proc.stdout


def pipx_install(pipx: str, home: Path) -> Path:
    env = {"PIPX_HOME": str(home / "pipx"), "PIPX_BIN_DIR": str(home / "bin"), "PIPX_MAN_DIR": str(home / "man")}
    must(run([pipx, "install", "--force", str(REPO)], env=env), f"pipx install into {home}")
    script = home / "bin" / "memory-custodian"
    print(f"ok   pipx installed {script}")
    return script


def hooks_of(root: Path):
    for host, rel in HOST_FILES.items():
        for event, groups in json.loads((root / rel).read_text())["hooks"].items():
            for group in groups:
                for entry in group["hooks"]:
                    yield host, event, entry["command"]


def as_host(root: Path, host: str, event: str, command: str, home: Path) -> subprocess.CompletedProcess:
    from test_hooks import payload

    env = ["env", "-i", "PATH=/usr/bin:/bin", f"HOME={home}", f"CLAUDE_PROJECT_DIR={root}"]
    if host == "gemini":
        env.append(f"GEMINI_PROJECT_DIR={root}")
    return subprocess.run([*env, "sh", "-c", command], cwd=root, input=payload(host, event, root),
                          capture_output=True, text=True, timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipx", default=shutil.which("pipx") or "pipx")
    args = parser.parse_args()
    from test_hooks import context_of

    from memory_custodian.base.launcher import not_installed_text

    with tempfile.TemporaryDirectory(prefix="mc-team-") as tmp:
        tmp_path = Path(tmp)
        homes = {name: tmp_path / f"machine-{name}" for name in ("alice", "bob")}
        scripts = {name: pipx_install(args.pipx, home) for name, home in homes.items()}
        origin = tmp_path / "origin.git"
        must(run(["git", "init", "-q", "--bare", "-b", "main", str(origin)]), "git init --bare")
        clones = {}
        for name in ("alice", "bob"):
            clone = tmp_path / f"{name}-clone"
            must(run(["git", "clone", "-q", str(origin), str(clone)]), "git clone")
            clones[name] = clone
            if name == "alice":
                (clone / "README.md").write_text("shop\n")
            must(run([str(scripts[name]), "init", "--agent", "all"], cwd=clone), f"{name}: init --agent all")
            if name == "alice":
                must(run([str(scripts[name]), "remember", "Run make check before every push.", "--kind", "directive",
                          "--priority", "high"], cwd=clone), "remember")
                must(run(["git", "add", "-A"], cwd=clone), "git add")
                must(run(["git", "commit", "-q", "-m", "memory"], cwd=clone), "git commit")
                must(run(["git", "push", "-q", "origin", "main"], cwd=clone), "git push")
            status = must(run(["git", "status", "--porcelain"], cwd=clone), "git status")
            if status:
                raise SystemExit(f"FAIL {name}: git status is not clean after init --agent all:\n{status}")
            print(f"ok   {name}: init --agent all leaves git status clean")
        for name, clone in clones.items():
            count = 0
            for host, event, command in hooks_of(clone):
                proc = as_host(clone, host, event, command, homes[name])
                if proc.returncode != 0 or proc.stderr:
                    raise SystemExit(f"FAIL {name} {host} {event}: exit {proc.returncode}: {proc.stderr[-400:]}")
                told = context_of(proc.stdout, event) if event == "SessionStart" else ""
                if event == "SessionStart" and "Run make check before every push." not in told:
                    raise SystemExit(f"FAIL {name} {host}: the session-start pack lacks the directive")
                count += 1
            print(f"ok   {name}: {count} hook commands answer as the host runs them, memory in every session start")
        shutil.rmtree(homes["bob"])  # uninstalled on bob's machine
        for host, event, command in hooks_of(clones["bob"]):
            if event != "SessionStart":
                continue
            told = context_of(as_host(clones["bob"], host, event, command, tmp_path).stdout, event)
            if told != not_installed_text(host):
                raise SystemExit(f"FAIL bob {host}: without the tool the hook said {told!r}")
        print("ok   bob, uninstalled: every session-start hook tells the agent memory is not installed and how")


if __name__ == "__main__":
    main()
