"""Which installation a clone uses: the per-clone setting `init` writes, then PATH, then the usual places.

The committed host files run one command on every machine (`base.launcher.portable_argv`); this
module writes the setting that command reads first (`memory-custodian.command` in `.git/config`,
never committed) and says, for `doctor`, what that command will find — the same order, asked of
the same sources.
"""

from __future__ import annotations

import os
import shlex
import shutil

from ..base.launcher import CONFIG_KEY, OVERRIDE_ENV, USUAL_LOCATIONS
from ..base.records import Record
from .gitrepo import git, git_dir


class Found(Record):
    """The installation a hook of this clone runs: `argv` (None: none found), `how` it was found."""

    argv: list[str] | None
    how: str

    def describe(self) -> str:
        if self.argv is None:
            return "no installation found (no per-clone setting, nothing on PATH or in the usual places)"
        return f"{' '.join(self.argv)} ({self.how})"


def write_setting(root: str, launcher) -> str:
    """Set this clone's `memory-custodian.command` to `launcher`; "set", "unchanged" or why not."""
    if git_dir(root) is None:
        return "not a git repository"
    value = launcher.posix_command()
    if read_setting(root) == value:
        return "unchanged"
    git(root, "config", CONFIG_KEY, value)  # a clone's own .git/config
    return "set"


def read_setting(root: str) -> str | None:
    try:
        proc = git(root, "config", CONFIG_KEY, check=False)
    except FileNotFoundError:  # no git on this machine
        return None
    return proc.stdout.strip() or None


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def resolve(root: str, environ=None, path: str | None = None) -> Found:
    """What the committed command finds for this clone, in its order (`environ`: the host's environment)."""
    env = os.environ if environ is None else environ
    override = env.get(OVERRIDE_ENV)
    setting = override or read_setting(root)
    if setting:
        try:
            words = shlex.split(setting)
        except ValueError:
            words = []
        if words and _runnable(words[0]):
            where = f"${OVERRIDE_ENV}" if override else f"the per-clone setting {CONFIG_KEY} in .git/config"
            return Found(words, where)
    on_path = shutil.which("memory-custodian", path=path if path is not None else env.get("PATH", ""))
    if on_path:
        return Found([on_path], "found on PATH")
    home = env.get("HOME", "")
    for location in USUAL_LOCATIONS:
        candidate = location.replace("${HOME}", home)
        if _runnable(candidate):
            return Found([candidate], "found in a usual install place")
    return Found(None, "")


def outside_git_warning(root: str, launcher) -> list[str]:
    """Outside a repository there is no per-clone setting: say so when PATH does not lead to `launcher`."""
    found = resolve(root)
    if found.argv is not None and os.path.realpath(found.argv[0]) == os.path.realpath(launcher.argv[0]):
        return []
    what = "find no installation" if found.argv is None else f"run {found.describe()}"
    return [f"not a git repository, so no per-clone setting: the hooks look on PATH and in the usual install places, "
            f"where they {what} — put {launcher.command([])} on PATH, or run `git init` there and this init again"]
