"""A viewer project with a git history: the web test project committed in steps, a curated forget, a ledger
forget and a supersede on top, and one change left uncommitted."""

from __future__ import annotations

import os
import subprocess

from web_project import build_project

from memory_custodian import Memory

SECRET = "ossifrage"  # in a decision forgotten (hard) and in a note forgotten: never on any page
IDENTITY = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@x", "GIT_COMMITTER_NAME": "Ada",
            "GIT_COMMITTER_EMAIL": "ada@x", "GIT_CONFIG_NOSYSTEM": "1"}


def git(root, *args) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **IDENTITY})
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout.strip()


def build_history(root) -> dict:
    git(root, "init", "-q", "-b", "main")
    ids = build_project(root)
    memory = Memory.open(root)
    memory.add(f"Sign the release tarballs with the {SECRET} key", "decision", reasons=["supply chain"])
    ids["secret"] = memory.remember(f"The {SECRET} key lives in the staging vault.", kind="finding",
                                    title=f"Where the {SECRET} key is").id
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Project memory for the key-value service")
    memory.add("Serve the viewer on loopback only", "decision", reasons=["it is read-only and local"])
    memory.forget(SECRET, mode="hard", apply=True)
    memory.forget_note(ids["secret"])
    ids["newer"] = memory.supersede(ids["new"], "Retries back off exponentially, capped at 90 s, with jitter.",
                                    reason="60 s was too short for the gateway", title="Retry backoff has jitter").id
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Loopback viewer; forget the signing key")
    memory.add("Keep one writer per shard", "constraint")  # left uncommitted
    return ids
