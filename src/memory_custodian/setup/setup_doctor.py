"""`doctor`'s checks of the whole setup, beyond the ledger's shards: one finding per piece, each with its fix.

A team's memory reaches an agent only when every piece holds: the curated files and manifest, the
ledger and its index, the mirror, the merge rules and drivers, the ignored cache, and each host's
wiring — its hook commands resolve and answer a payload within the host's timeout, its MCP server
starts and lists its tools. Each check is a function in `CHECKS` returning `Finding`s; a new one
is one more function there.
"""

from __future__ import annotations

import os
import shlex

from ..base.errors import short_line
from ..base.records import Record
from ..curated.write.initializing import gitattributes_lines, memory_rel
from ..ledger.storage.config import load_config
from ..ledger.storage.model import INDEX_FILE
from ..ledger.storage.store import Ledger
from .installation import resolve
from .merge_drivers import DRIVER_NAMES, git, git_dir, registered


class Finding(Record):
    """One piece of the setup: `ok`, what was seen (`detail`) and, when not ok, the `fix`."""

    area: str
    ok: bool
    detail: str
    fix: str = ""

    def to_dict(self) -> dict:
        return self.as_dict()

    def line(self) -> str:
        if self.ok:
            return f"ok    {self.area}: {self.detail}"
        return f"FAIL  {self.area}: {self.detail} — fix: {self.fix}"

def guard(area: str, fn, memory) -> list[Finding]:
    """A check, or its own failure as a finding (one broken piece never hides the others)."""
    try:
        return fn(memory)
    except Exception as exc:  # reported as a finding: doctor's job is to name it
        return [Finding(area, False, short_line(exc), "fix what the message names, then run `memory-custodian doctor`")]


def check_curated(memory) -> list[Finding]:
    result = memory.check()
    if result.ok:
        return [Finding("curated files", True, f"{result.files_checked} files and the manifest are sound")]
    return [_curated_finding(f) for f in result.problems]


def _curated_finding(problem) -> Finding:
    """A `check` problem as a finding: what is wrong, and the fix its message already states."""
    where = f"{problem.file}:{problem.line}" if problem.line else problem.file
    what, fix = problem.message, "run `memory-custodian check` and follow it"
    for sep in (" — ", "; "):
        if sep in problem.message:
            what, fix = problem.message.rsplit(sep, 1)
            break
    return Finding("curated files", False, f"{where}: {problem.code}: {what}", fix)


def check_index(memory) -> list[Finding]:
    if not Ledger(memory.memory_dir_str).shards():
        return [Finding("ledger index", True, "no ledger notes yet")]
    hits = memory.recall(None, limit=1, counts=False, ids=False).hits
    return [Finding("ledger index", True, f"caught up ({'notes' if hits else 'no active notes'})")]


def check_mirror(memory) -> list[Finding]:
    if not (load_config(memory.memory_dir_str).get("export") or {}).get("enabled"):
        return [Finding("export mirror", True, "not enabled")]
    exported = memory.export(check=True)
    if exported.up_to_date:
        return [Finding("export mirror", True, f"{os.path.relpath(exported.path, memory.root_str)} is up to date")]
    return [Finding("export mirror", False, f"{os.path.relpath(exported.path, memory.root_str)} differs from the ledger",
                    "run `memory-custodian export` (a hand edit belongs in `memory-custodian edit`)")]


def check_git(memory) -> list[Finding]:
    rel = memory_rel(memory).replace(os.sep, "/")
    path = os.path.join(memory.root_str, ".gitattributes")
    text = ""
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    taken = {line.split()[0]: line for line in text.splitlines() if line.split()}
    out = []
    missing = [line for line in gitattributes_lines(rel) if line.split()[0] not in taken]
    out.append(Finding(".gitattributes", not missing,
                       f"missing: {'; '.join(missing)}" if missing else "merge rules for the memory folder present",
                       "run `memory-custodian init` (it adds the lines and keeps yours)"))
    if git_dir(memory.root_str) is None:
        out.append(Finding("merge drivers", True, "not a git repository"))
        return out + _cache_findings(memory, None)
    configured = registered(memory.root_str)
    for name in DRIVER_NAMES:
        command = configured.get(name)
        program = _program(command) if command else None
        fine = bool(command) and program is not None and os.access(program, os.X_OK)
        detail = (f"merge driver {name}: {command}" if fine else
                  f"merge driver {name} is not registered in .git/config (git falls back to its line merge, which "
                  "conflicts on memory files)" if not command else f"merge driver {name} runs {program}, which is missing")
        out.append(Finding("merge drivers", fine, detail,
                           INIT_IN_CLONE))
    return out + _cache_findings(memory, git)


def _cache_findings(memory, git) -> list[Finding]:
    cache = os.path.join(memory.memory_dir_str, ".cache")
    if os.path.exists(cache) and not os.path.isdir(cache):
        return [Finding("cache folder", False, f"{os.path.relpath(cache, memory.root_str)} is a file, not a folder",
                        "move the file away, then run `memory-custodian init` (the cache is rebuilt)")]

    probe = os.path.relpath(os.path.join(cache, INDEX_FILE), memory.root_str)
    if git is not None:
        ignored = git(memory.root_str, "check-ignore", "-q", "--no-index", probe, check=False).returncode == 0
    else:
        ignored = os.path.isfile(os.path.join(cache, ".gitignore"))
    return [Finding("cache folder", ignored, ".cache/ is git-ignored" if ignored else ".cache/ is not git-ignored",
                    "run `memory-custodian init` (it writes .cache/.gitignore)")]


def _program(command: str) -> str | None:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[0] if words and os.path.isabs(words[0]) else None


INIT_IN_CLONE = ("run `memory-custodian init` in this clone, from the installation you use (each clone records its "
                 "installation and registers the merge drivers once)")


def check_installation(memory) -> list[Finding]:
    """Which installation this clone's hooks run, found as the committed command finds it."""
    found = resolve(memory.root_str)
    if found.argv is None:
        return [Finding("installation", False, found.describe(),
                        INIT_IN_CLONE)]
    return [Finding("installation", True, f"this clone's hooks run {found.describe()}")]


CHECKS = (("installation", check_installation), ("curated files", check_curated), ("ledger index", check_index),
          ("export mirror", check_mirror), ("git", check_git))


def diagnose(memory) -> list[Finding]:
    """Every finding of every check, in order."""
    found: list[Finding] = []
    for area, fn in CHECKS:
        found.extend(guard(area, fn, memory))
    return found


