"""Torture by disk trouble: a file-size limit, a full tmpfs and a read-only bind mount.

Every writer must fail with one clear line and leave every file as it was. The tmpfs and the
bind mount need root and run in a private mount namespace (`unshare -m`), so nothing leaks to
the host; this file re-runs itself inside it (`python torture_disk.py --inner DIR`).
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from torture_common import PY, SRC, cli, make_project, unparseable_files

WRITERS = [
    ("remember", ["remember", "disk trouble note " + "x" * 2000]),
    ("add", ["add", "Disk trouble constraint " + "y" * 2000, "--type", "constraint"]),
    ("add-rule", ["add", "Disk trouble rule", "--type", "rule", "--name", "disk"]),
    ("export", ["export"]),
    ("edit-checkin", None),  # built per run
    ("reindex", ["reindex"]),
    ("compact", ["compact", "--apply"]),
]


def _snapshot(memory_dir: Path) -> dict:
    import hashlib

    out = {}
    for path in sorted(Path(memory_dir).rglob("*")):
        rel = path.relative_to(memory_dir).as_posix()
        if path.is_file() and not rel.startswith(".cache"):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _judge(result, before: dict, after: dict, memory_dir: Path) -> dict:
    err = result.stderr.strip().splitlines()
    clear = result.returncode in (1, 2) and len(err) >= 1 and err[-1].startswith("error:") and \
        "Traceback" not in result.stderr
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    return {"exit": result.returncode, "clear_error": clear or result.returncode == 0,
            "stderr": (err[-1] if err else "")[:160], "changed_after_error": changed if result.returncode else [],
            "unparseable": unparseable_files(memory_dir)}


def edit_argv(root: Path) -> list[str]:
    from memory_custodian.memory import Memory

    folder = tempfile.mkdtemp(prefix="torture-buffer-")  # outside the project: a full tmpfs has no room
    atexit.register(shutil.rmtree, folder, True)
    name = str(Path(folder) / "checkout.md")
    Memory.open(root).edit_checkout(name)
    with open(name, "a", encoding="utf-8") as fh:
        fh.write("\n### disk trouble edit\n- kind: finding\n\n" + "z" * 3000 + "\n")
    return ["edit", "--checkin", name, "--reason", "disk"]


def disk_case(root: Path, label: str, argv, preexec=None) -> dict:
    from memory_custodian.memory import Memory

    memory = Memory.open(root)
    if argv is None:
        argv = edit_argv(root)
    before = _snapshot(memory.memory_dir)
    result = cli(root, *argv, preexec=preexec)
    return {"case": label, **_judge(result, before, _snapshot(memory.memory_dir), memory.memory_dir)}


def fsize_limit(limit: int):
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def run_fsize(tmp: Path, quick: bool) -> list[dict]:
    """RLIMIT_FSIZE: `edge` sits just above the biggest file (an append or rewrite runs out half-way),
    `tight` below every file (nothing can grow). Every writer must fail cleanly, nothing corrupted."""
    out = []
    writers = [w for w in WRITERS if w[0] in ("remember", "add", "reindex")] if quick else WRITERS
    for label, argv in writers:
        for mode in ("edge", "tight"):
            root = tmp / f"fsize-{mode}-{label}"
            memory = make_project(root, export=True)
            for i in range(3):
                memory.remember(f"padding note {i} " + "p" * 300)
            memory.reindex()
            biggest = max(p.stat().st_size for p in Path(memory.memory_dir).rglob("*") if p.is_file()
                          and ".cache" not in p.parts)
            limit = biggest + 64 if mode == "edge" else 200
            out.append(disk_case(root, f"fsize-{mode}:{label}", argv, fsize_limit(limit)))
    return out


def run_mounts(tmp: Path) -> list[dict]:
    """A full tmpfs and a read-only bind mount, in a private mount namespace (root only)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return [{"case": "mounts", "skipped": "needs root and unshare(1) for a private tmpfs / read-only bind"}]
    inner = subprocess.run(["unshare", "-m", "--propagation", "private", PY, __file__, "--inner", str(tmp)],
                           capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(SRC)))
    try:
        return json.loads(inner.stdout)
    except ValueError:
        return [{"case": "mounts", "skipped": f"could not run: {(inner.stderr or inner.stdout).strip()[-300:]}"}]


def _mounts_inner(tmp: Path) -> list[dict]:
    out = []
    # full disk: a small tmpfs, filled to the brim
    for label, argv in WRITERS:
        mnt = tmp / f"tmpfs-{label}"
        mnt.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)]).returncode:
            return [{"case": "mounts", "skipped": "mount -t tmpfs refused"}]
        root = mnt / "p"
        memory = make_project(root, export=True)
        memory.reindex()
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 512):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        out.append(disk_case(root, f"full-disk:{label}", argv))
    # read-only: the project bind-mounted read-only over itself
    readers = [("read", ["read", "--task", "implementation"]), ("recall", ["recall", "lock"]),
               ("export-check", ["export", "--check"]), ("doctor", ["doctor"])]
    for label, argv in WRITERS + readers:
        root = tmp / f"ro-{label}" / "p"
        make_project(root, export=True)
        argv = edit_argv(root) if argv is None else argv
        if subprocess.run(["mount", "--bind", str(root), str(root)]).returncode or \
                subprocess.run(["mount", "-o", "remount,bind,ro", str(root)]).returncode:
            return out + [{"case": "read-only", "skipped": "read-only bind mount refused"}]
        out.append(disk_case(root, f"read-only:{label}", argv))
    return out


def run_readonly_chmod(tmp: Path) -> list[dict]:
    """Without root, permission bits make a folder read-only; root ignores them."""
    if os.geteuid() == 0:
        return [{"case": "read-only (chmod)", "skipped": "running as root: permission bits do not bind; "
                 "see the read-only bind mount cases"}]
    out = []
    for label, argv in WRITERS:
        root = tmp / f"chmod-{label}"
        memory = make_project(root, export=True)
        for path in [Path(memory.memory_dir), *Path(memory.memory_dir).rglob("*")]:
            if ".cache" not in path.parts:
                path.chmod(path.stat().st_mode & ~0o222)
        try:
            out.append(disk_case(root, f"read-only-chmod:{label}", argv))
        finally:
            for path in [Path(memory.memory_dir), *Path(memory.memory_dir).rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)
    return out


def disk_ok(row: dict) -> bool:
    return "skipped" in row or (row["clear_error"] and not row["changed_after_error"] and not row["unparseable"])


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--inner":
    print(json.dumps(_mounts_inner(Path(sys.argv[2]))))
