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


# ---- honest messages: what each error says against what is on disk -----------------------------
#
# Each writer runs with N KiB left on a small tmpfs (a real ENOSPC, at whichever step it falls), or
# with its k-th rename failing (the window a tmpfs cannot reach: a rename needs no space there).
# The message is held against a byte snapshot: "nothing was changed" means every file outside
# `.cache/` is byte-identical; a message naming files means exactly those changed. Then space comes
# back and one more write must finish the job.

SECRET = "Zebra quartz note text 4471 that a hard delete must remove"


def _old_shard(memory) -> None:
    """Move every event so far into an older month's shard: the next events go to a second shard."""
    ledger = Path(memory.memory_dir) / "ledger"
    (current,) = ledger.glob("*.jsonl")
    current.rename(ledger / "2001-01.jsonl")
    shutil.rmtree(Path(memory.memory_dir) / ".cache", ignore_errors=True)


def _setup_forget(memory, two_shards: bool):
    note = memory.remember(SECRET, kind="finding")
    if two_shards:
        _old_shard(memory)
        memory.flag_stale(note.id, reason="to have its events in two shards")
    return note.id


def _setup_torn(memory):
    """Notes enough that the index rebuild needs more room than the trimmed shard frees, then a torn tail."""
    for i in range(40):
        memory.remember(f"Torn-tail setup note {i}: the daemon restarts after the lock is released " + "z " * 200)
    shard = sorted((Path(memory.memory_dir) / "ledger").glob("*.jsonl"))[-1]
    with open(shard, "ab") as fh:
        fh.write(b'{"v":1,"id":"01TORN')


def _repair(memory, ctx):
    """`doctor --repair`, its index failure raised as the message a person reads."""
    from memory_custodian.base.errors import Refused

    report = memory.doctor(repair=True)
    if report.index and "error" in report.index:
        raise Refused(report.index["error"])


def _describe(memory) -> None:
    """A described brief, as `make_project` writes it (a template brief is a `check` finding)."""
    (Path(memory.memory_dir) / "brief.md").write_text("# Brief\n\nA project the torture run writes to.\n",
                                                      encoding="utf-8")


def _setup_compact(memory):
    path = Path(memory.memory_dir) / "decisions.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n" + "\n".join(
        f"## 2025-06-{d:02d} - Old decision {d}\nDecision:\nSomething old number {d} " + "word " * 20
        + "\nReason:\nHistory.\n" for d in range(28, 0, -1)), encoding="utf-8")


# name: (setup(memory) -> ctx, act(memory, ctx), finish(memory), whether the act removes SECRET)
HONEST_WRITERS = {
    "forget-note": (lambda m: _setup_forget(m, False), lambda m, ctx: m.forget_note(ctx),
                    lambda m: m.remember("a later note finishes an interrupted forget"), True),
    "forget-note-2-shards": (lambda m: _setup_forget(m, True), lambda m, ctx: m.forget_note(ctx),
                             lambda m: m.remember("a later note finishes an interrupted forget"), True),
    "add-area": (lambda m: None, lambda m, ctx: m.add("Billing rounds half-even " + "w " * 300, "decision",
                                                      reasons=["audit"], area="billing", allow_long=True),
                 lambda m: m.migrate(apply=True), False),
    "enable": (lambda m: None, lambda m, ctx: m.enable("areas/store", paths=["src/store/**"]),
               lambda m: m.migrate(apply=True), False),
    "compact-archive": (_setup_compact, lambda m, ctx: m.compact(target="decisions.md", archive_oldest=True,
                                                                 apply=True),
                        lambda m: m.migrate(apply=True), False),
    "add": (lambda m: None, lambda m, ctx: m.add("Always pin the toolchain " + "w " * 300, "constraint", allow_long=True),
            lambda m: m.migrate(apply=True), False),
    "forget-hard": (lambda m: m.add(SECRET, "constraint"),
                    lambda m, ctx: m.forget("Zebra quartz", mode="hard", apply=True),
                    lambda m: m.migrate(apply=True), True),
    "remember": (lambda m: None, lambda m, ctx: m.remember("disk trouble note " + "x" * 9000),
                 lambda m: m.remember("after"), False),
    "export": (lambda m: m.remember("x " * 3000), lambda m, ctx: m.export(), lambda m: m.export(), False),
    "export-enable": (lambda m: (m.export_disable(), m.remember("y " * 3000)), lambda m, ctx: m.export_enable(),
                      lambda m: m.export_enable(), False),
    "doctor-repair-torn": (_setup_torn, _repair, lambda m: m.doctor(repair=True), False),
    "init": (lambda m: shutil.rmtree(Path(m.memory_dir)), lambda m, ctx: m.init(extended=True),
             lambda m: (m.init(extended=True), _describe(m)), False),
}


def _files(memory_dir: Path, *, cache: bool) -> dict:
    return {p.relative_to(memory_dir).as_posix(): p.read_bytes() for p in sorted(memory_dir.rglob("*"))
            if p.is_file() and (cache or ".cache" not in p.relative_to(memory_dir).parts)}


def claimed(message: str | None) -> tuple[str, set | None]:
    """What a message says was changed: ("done", None), ("nothing", set()), ("partial", files) or
    ("unclear", None) for a message that says neither."""
    import re

    if message is None:
        return "done", None
    if "nothing was changed" in message or "nothing in the ledger was changed" in message:
        return "nothing", set()
    m = re.search(r"part-way: (.*?) (?:was|were) written, but", message)
    if m:
        named = {s.strip().split("/docs/memory/", 1)[-1].removeprefix("docs/memory/") for s in m.group(1).split(",")}
        return "partial", {n for n in named if not n.endswith("/")}  # a folder made is no file changed
    m = re.search(r"the forget event of #\w+ is written(?: and (.*?) rewritten)?, but the note's text is still in "
                  r"(.*?) and .cache/ —", message)
    if m:
        return "partial", {"forget-event", *(s.strip() for s in (m.group(1) or "").split(",") if s.strip())}
    return "unclear", None


def _changed(before: dict, after: dict) -> set:
    return {k for k in set(before) | set(after) if before.get(k) != after.get(k)}


def judge_honesty(memory, before: dict, found_before: set, error, finish, removes_secret: bool) -> list[str]:
    """What is wrong with `error` (None: the write succeeded) against the files now; then finish."""
    from memory_custodian.base.errors import CustodianError

    mem = Path(memory.memory_dir)
    after = _files(mem, cache=False)
    changed = _changed(before, after)
    kind, named = claimed(error)
    problems = []
    if kind == "unclear":
        problems.append(f"message says neither nothing nor what changed: {error}")
    elif kind == "nothing" and changed:
        problems.append(f"says nothing was changed, but {sorted(changed)} changed")
    elif kind == "partial":
        shards = {k for k in changed if k.startswith("ledger/")}
        said = {n for n in named if n != "forget-event"}
        if "forget-event" in named and not shards:
            problems.append("says the forget event was written, but no shard changed")
        extra = changed - said - (shards if "forget-event" in named else set())
        if said - changed or extra:
            problems.append(f"names {sorted(said)} but {sorted(changed)} changed")
    if any(TEMP_NAME.match(k.rsplit("/", 1)[-1]) for k in after):
        problems.append("a temp file outside .cache/ outlived its writer")
    try:
        finish(memory)
    except CustodianError as exc:
        problems.append(f"the finishing write failed: {exc.one_line()}")
    if memory.interrupted_write_pending():
        problems.append("the journal is still pending after the finishing write")
    broken = {f.message for f in memory.check().findings} - found_before
    if broken:
        problems.append("check finds what it did not before: " + "; ".join(sorted(broken))[:200])
    if removes_secret and kind != "nothing":
        holders = [k for k, v in _files(mem, cache=True).items() if SECRET.encode() in v]
        if holders:
            problems.append(f"the forgotten text is still in {holders} after the finishing write")
    return problems


TEMP_NAME = __import__("re").compile(r"^\..+\.tmp-\d+-\d+$")


def _fill(mnt: Path, free_kib: int) -> None:
    """Fill the tmpfs, then give back `free_kib` KiB."""
    filler = mnt / "filler"
    with open(filler, "ab", buffering=0) as fh:
        for chunk in (1 << 16, 1 << 12, 1 << 9):
            try:
                while fh.write(b"\0" * chunk):
                    pass
            except OSError:
                pass
    size = filler.stat().st_size
    os.truncate(filler, max(0, size - free_kib * 1024))


def _one_case(root: Path, writer: str, step: str, trouble) -> dict:
    """Run `writer` with `trouble` (a context manager: the full disk or the failing rename) on a fresh project."""
    from memory_custodian.base.errors import CustodianError
    from memory_custodian.memory import Memory

    setup, act, finish, removes = HONEST_WRITERS[writer]
    memory = make_project(root, export=True)
    ctx = setup(memory)
    memory = Memory.open(root)
    before = _files(Path(memory.memory_dir), cache=False)
    found_before = {f.message for f in memory.check().findings} if memory.memory_dir.is_dir() else set()
    error = None
    with trouble():
        try:
            act(memory, ctx)
        except CustodianError as exc:
            error = exc.one_line()
    problems = judge_honesty(Memory.open(root), before, found_before, error, finish, removes)
    return {"writer": writer, "step": step, "claim": claimed(error)[0], "error": (error or "")[:300],
            "problems": problems}


def _failing_rename(k: int):
    """The k-th `os.replace` from now raises ENOSPC (then the disk is fine again)."""
    import contextlib
    import errno

    @contextlib.contextmanager
    def trouble():
        real, calls = os.replace, [0]

        def replace(src, dst, *a, **kw):
            calls[0] += 1
            if calls[0] == k:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), dst)
            return real(src, dst, *a, **kw)

        os.replace = replace
        try:
            yield
        finally:
            os.replace = real
    return trouble


def honesty_rows(tmp: Path, writers, free_kib=(0, 4, 8, 16, 32, 64, 256), renames=(1, 2, 3, 4)) -> list[dict]:
    """Every writer at every N KiB free on a 1 MiB tmpfs (needs a private mount namespace) and with
    its k-th rename failing."""
    import contextlib

    rows = []
    for writer in writers:
        for k in renames:
            rows.append(_one_case(tmp / f"rename-{writer}-{k}" / "p", writer, f"rename {k}", _failing_rename(k)))
        for n in free_kib:
            mnt = tmp / f"tmpfs-{writer}-{n}"
            mnt.mkdir(parents=True)
            if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)]).returncode:
                return rows + [{"writer": writer, "step": "tmpfs", "skipped": "mount -t tmpfs refused"}]

            @contextlib.contextmanager
            def full(mnt=mnt, n=n):
                _fill(mnt, n)
                try:
                    yield
                finally:
                    (mnt / "filler").unlink()
            rows.append(_one_case(mnt / "p", writer, f"{n} KiB free", full))
    return rows


def run_honesty(tmp: Path, writers=tuple(HONEST_WRITERS), **kw) -> list[dict]:
    """`honesty_rows` in a private mount namespace (root and unshare(1)), else the rename cases only."""
    args = json.dumps({"writers": list(writers), **kw})
    if os.geteuid() == 0 and shutil.which("unshare"):
        argv = ["unshare", "-m", "--propagation", "private", PY, __file__, "--honesty", str(tmp), args]
    else:
        argv = [PY, __file__, "--honesty", str(tmp), json.dumps({"writers": list(writers), **kw, "free_kib": []})]
    inner = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(SRC)))
    try:
        return json.loads(inner.stdout)
    except ValueError:
        return [{"writer": "all", "step": "", "skipped": f"could not run: {(inner.stderr or inner.stdout).strip()[-400:]}"}]


def honesty_table(rows: list[dict]) -> str:
    lines = [f"{'writer':<22} {'step':<12} {'claim':<8} problems / message"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"{r['writer']:<22} {r['step']:<12} {'skipped':<8} {r['skipped']}")
            continue
        what = "; ".join(r["problems"]) or r["error"].split("/docs/memory/", 1)[-1][:110]
        lines.append(f"{r['writer']:<22} {r['step']:<12} {r['claim']:<8} {'BAD ' if r['problems'] else ''}{what}")
    return "\n".join(lines)


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--honesty":
    spec = json.loads(sys.argv[3])
    print(json.dumps(honesty_rows(Path(sys.argv[2]), spec.pop("writers"), **spec)))
elif __name__ == "__main__" and len(sys.argv) == 1:
    with tempfile.TemporaryDirectory(prefix="torture-disk-") as folder:
        table = run_honesty(Path(folder))
    print(honesty_table(table))
    bad = [r for r in table if r.get("problems")]
    print(f"\n{len(table)} cases, {len(bad)} with a message that does not match the disk")
    sys.exit(1 if bad else 0)
