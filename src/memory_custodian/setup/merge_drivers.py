"""The git merge drivers `init` registers, so a team's branches merge memory without conflicts.

`.gitattributes` names them for the memory folder (ledger shards by `memory-custodian-ledger`,
curated files by `memory-custodian-curated`, `MEMORY.md` by `memory-custodian-mirror`, the forgotten
fingerprints by git's `union`) and `.git/config` says what runs them: the absolute command of this
clone's installation (per clone, never committed). A clone whose config lacks them still merges —
git falls back to its own line merge, conflicts included — and `doctor` says the drivers are missing.
Each compares both sides with the base (`curated.write.merge_entries`, `merge_ledger`); see docs/team.md.

The mirror is never merged as text: it is rendered again from the union of both branches' ledger
shards (the same union git writes), so `export --check` is green after the merge. Git names the
branch being merged in a `GITHEAD_<sha>` variable; where there is none (a rebase, a cherry-pick)
the mirror is left as it was and the driver says to run `export`.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile

from ..base.errors import InvalidInput
from ..base.fsutil import atomic_write
from ..base.launcher import current_launcher
from ..curated.write.initializing import CURATED_DRIVER as CURATED
from ..curated.write.initializing import LEDGER_DRIVER as LEDGER
from ..curated.write.initializing import MIRROR_DRIVER as MIRROR
from ..curated.write.merge_entries import merge_entries, mergeable
from ..ledger.storage.store import Ledger
from ..ledger.text.export import note_row, render_rows
from ..ledger.text.mirror import record_export
from .gitrepo import git, git_dir, shards_at  # callers import git and git_dir from here too
from .installation import write_setting
from .merge_ledger import forgotten_sides, merge_shard

DRIVER_NAMES = {CURATED: "memory-custodian: curated memory, entry by entry",
                MIRROR: "memory-custodian: MEMORY.md rendered again from the merged ledger",
                LEDGER: "memory-custodian: ledger shards, both sides' events, forgets applied"}
DRIVER_KINDS = {CURATED: "curated", MIRROR: "mirror", LEDGER: "ledger"}


def driver_command(launcher, kind: str) -> str:
    # the placeholders stay bare: git substitutes them already quoted
    return launcher.command(["merge-driver", kind]) + " %O %A %B %P"


def register(root: str, launcher=None) -> str:
    """Write (or update) the drivers in the repository's config; what was done, as one word."""
    if git_dir(root) is None:
        return "not a git repository"

    launcher = launcher or current_launcher()
    changed = write_setting(root, launcher) == "set"  # the committed host files find the installation by it
    for name, title in DRIVER_NAMES.items():
        for key, value in (("name", title), ("driver", driver_command(launcher, DRIVER_KINDS[name]))):
            current = git(root, "config", "--local", "--get", f"merge.{name}.{key}", check=False).stdout.strip()
            if current != value:
                git(root, "config", "--local", f"merge.{name}.{key}", value)
                changed = True
    return "registered" if changed else "unchanged"


def registered(root: str) -> dict[str, str | None]:
    """Each driver's configured command (None: not configured)."""
    out = {}
    for name in DRIVER_NAMES:
        proc = git(root, "config", "--get", f"merge.{name}.driver", check=False)
        out[name] = proc.stdout.strip() or None
    return out


# ---- running as a driver ------------------------------------------------------------------------

def run_driver(kind: str, base: str, ours: str, theirs: str, path: str) -> int:
    """Merge one file as git asks (`%O %A %B %P`): the result goes to `ours`; exit 0 clean, 1 conflicts."""
    if kind not in DRIVER_KINDS.values():
        raise InvalidInput(f"unknown merge driver kind {kind!r}; use curated, ledger or mirror")

    gc.disable()  # a short-lived process: collecting a big file's hundreds of thousands of entries only costs time
    if kind == "mirror":
        return _merge_mirror(ours, path)
    if kind == "ledger":
        return merge_shard(base, ours, theirs, path)

    b, o, t = (_read(p) for p in (base, ours, theirs))
    if b is None or o is None or t is None or os.path.basename(path) == "manifest.md" or not mergeable(b, o, t):
        # not entries (the manifest, a brief in prose, bytes that are not UTF-8): git's own line merge
        proc = subprocess.run(["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours, base, theirs])
        return 0 if proc.returncode == 0 else 1

    merged = merge_entries(b, o, t, forgotten_sides(path))
    _write(ours, merged.text)
    if merged.conflicts:
        sys.stderr.write(f"memory-custodian: {path}: {merged.conflicts} entr{'y' if merged.conflicts == 1 else 'ies'} "
                         "changed differently on both branches, marked in the file — keep the right version (or "
                         "write one that combines them), delete the marker lines, then run `memory-custodian check`\n")
    return 1 if merged.conflicts else 0


def _merge_mirror(ours: str, path: str) -> int:
    theirs = sorted(k[len("GITHEAD_"):] for k in os.environ if k.startswith("GITHEAD_"))
    if len(theirs) != 1:
        sys.stderr.write(f"memory-custodian: {path}: kept this branch's version (no merged commit named here) — run "
                         "`memory-custodian export` after the merge; `export --check` says whether it is needed\n")
        return 0
    memory_rel = os.path.dirname(path) or "."
    shards: dict[str, list[bytes]] = {}
    for commit in ("HEAD", theirs[0]):
        for name, data in shards_at(commit, memory_rel):
            lines = shards.setdefault(name, [])
            seen = set(lines)
            lines.extend(line for line in data.splitlines(keepends=True) if line not in seen)
    _write(ours, render_mirror(shards, memory_rel))
    record_export(os.path.abspath(memory_rel), ours)  # what git puts in place is an export, not a hand edit
    return 0


def render_mirror(shards: dict[str, list[bytes]], memory_rel: str) -> str:
    """The export mirror of a ledger given as shard lines, as `export` renders it."""
    with tempfile.TemporaryDirectory(prefix="mc-merge-") as scratch:
        os.mkdir(os.path.join(scratch, "ledger"))
        for name, lines in shards.items():
            with open(os.path.join(scratch, "ledger", name), "wb") as fh:
                fh.write(b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines))
        notes = Ledger(scratch).load(lenient=True).notes.values()
        return render_rows([note_row(n) for n in notes if n.state != "forgotten"], source=f"{memory_rel}/ledger/")


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _write(path: str, text: str) -> None:
    atomic_write(path, text)
