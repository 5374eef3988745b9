"""The export mirror kept fresh after every write: at once for a command, debounced in a long-lived process.

`Memory` calls `after_write` after each ledger write; no adapter re-renders the mirror itself.
"""

from __future__ import annotations

import os
import sys

from ...base.errors import CustodianError, Refused
from ...base.fsutil import atomic_write
from ..storage.config import config_path, parse_config


def refresh_mirror_if_enabled(memory):
    """Re-render the mirror (the `Exported` record) when `config.json` turns it on, else None: one small read."""
    path = config_path(memory.memory_dir_str)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None
    export = parse_config(raw, path).get("export") or {}
    if not export.get("enabled"):
        return None
    target = export.get("path") or os.path.join(memory.memory_dir_str, "MEMORY.md")
    if hand_edited(memory.memory_dir_str, target if os.path.isabs(target) else os.path.join(memory.root_str, target)):
        raise Refused(f"{os.path.basename(target)} was edited by hand since the last export, so it was left as it is — "
                      "move the edit into the ledger with `memory-custodian edit` (then `edit --checkin`), or drop it "
                      "with `memory-custodian export`")
    return memory.export()  # the configured path, read again there so that a refusal names config.json


MIRROR_DIGEST = "mirror.sha256"  # in .cache/: what the last export wrote, to tell a hand edit from it


def _digest_path(memory_dir: str) -> str:
    return os.path.join(memory_dir, ".cache", MIRROR_DIGEST)


def _sha256_of(path: str) -> str | None:
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:  # no file, or a path the export itself will refuse by name
        return None


def record_export(memory_dir: str, target: str) -> None:
    """Remember what an export just wrote (a cache: without it, no hand edit can be told apart)."""
    digest = _sha256_of(target)
    if digest is not None and os.path.isdir(os.path.join(memory_dir, ".cache")):
        atomic_write(_digest_path(memory_dir), digest + "\n", durable=False)


def forget_export_digest(memory_dir: str) -> None:
    """Drop the record of the last export (one that no longer matches what was written)."""
    try:
        os.unlink(_digest_path(memory_dir))
    except FileNotFoundError:
        pass


def hand_edited(memory_dir: str, target: str) -> bool:
    """Whether the mirror on disk is neither what the last export here wrote nor what git's HEAD holds
    (a checkout, a pull or a merge brings a mirror rendered elsewhere: that is no hand edit).
    Never, without a record of the last export."""
    try:
        with open(_digest_path(memory_dir), encoding="utf-8") as fh:
            recorded = fh.read().strip()
    except (FileNotFoundError, NotADirectoryError):
        return False
    now = _sha256_of(target)
    return now is not None and now != recorded and not _as_in_head(target)


def _as_in_head(target: str) -> bool:
    """Whether the file is byte for byte what the checked-out commit holds (False outside git)."""
    import hashlib
    import subprocess

    folder = os.path.dirname(os.path.abspath(target))
    try:
        proc = subprocess.run(["git", "rev-parse", f"HEAD:./{os.path.basename(target)}"], cwd=folder,
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    with open(target, "rb") as fh:
        data = fh.read()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git names a file by this digest
    return proc.returncode == 0 and proc.stdout.strip() == blob


# The line after a write landed but the mirror could not be re-rendered, by what landed. The write
# is done and acknowledged (exit 0): an agent that saw a failure would write the note again.
WARNINGS = {
    "change": "the change was written to the ledger (do not repeat it), but the export mirror was not re-rendered: "
              "{failure} — once that is fixed, run `memory-custodian export`",
    "checkin": "checked in, but the export mirror was not re-rendered: {failure} — fix that, then run "
               "`memory-custodian export`",
    "forget": "the note was forgotten, but MEMORY.md could not be re-rendered: {failure} — run "
              "`memory-custodian export` to drop its text from the mirror",
}


def after_write(memory, landed: str, debouncer=None) -> str | None:
    """Keep the mirror in step after a write: now, or through `debouncer` in a long-lived process.

    Returns None, or the warning (see WARNINGS) when the render failed after the write landed.
    """
    if debouncer is not None:
        debouncer.touch()
        return None

    try:
        refresh_mirror_if_enabled(memory)
    except (CustodianError, OSError) as exc:
        return WARNINGS[landed].format(failure=mirror_failure(exc))
    return None


def mirror_failure(exc: Exception) -> str:
    """Why a mirror re-render failed, in one line (a CustodianError's own line, or a disk error's path)."""
    if isinstance(exc, CustodianError):
        detail = exc.one_line()
    elif isinstance(exc, OSError) and exc.filename is not None:
        detail = f"{exc.filename}: {exc.strerror or exc}"
    else:
        detail = str(exc) or type(exc).__name__
    return detail.replace("\n", " ")


class MirrorDebouncer:
    """Re-render the mirror once writes have been quiet for `interval` seconds (and on `flush`).

    A long-running process (the MCP server) calls `touch()` after each write and `flush()` before
    it exits, so a burst of writes costs one render and a shutdown never leaves the mirror stale.
    Errors from a timed render go to `on_error` (default: one line on stderr), never lost.
    """

    def __init__(self, memory, interval: float = 3.0, on_error=None, render=None):
        import threading  # only a long-lived process debounces: a command never pays for it

        self.memory = memory
        self.interval = interval
        self.on_error = on_error or _stderr_line
        self._render = render or refresh_mirror_if_enabled
        self._lock = threading.Lock()
        self._render_lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._pending = False
        self.renders = 0

    def touch(self) -> None:
        import threading

        with self._lock:
            self._pending = True
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.interval, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # a background thread has no caller to raise to
            self.on_error(exc)

    def flush(self):
        """Render now if a write is pending; returns what the render returned (None if nothing to do)."""
        # a render already running in the timer thread finishes before flush returns
        with self._render_lock:
            with self._lock:
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
                pending, self._pending = self._pending, False
            if not pending:
                return None
            result = self._render(self.memory)
            self.renders += 1
            return result

    def close(self):
        return self.flush()


def _stderr_line(exc: Exception) -> None:
    print(f"warning: the export mirror was not re-rendered: {exc}", file=sys.stderr)
