"""Memory methods for: export, edit check-out/check-in (ledger as text).

The mirror is rendered from the folded ledger (the index when it is current, else a replay of
the shards), never from itself: nothing reads MEMORY.md back. A check-in replays the ledger,
checks for conflicts and appends its one txn under the same project lock, so it lands whole or
not at all.
"""

from __future__ import annotations

import contextlib
import gc
import threading

DEFAULT_EXPORT = "MEMORY.md"  # inside the memory folder


class LedgerTextAPI:
    root: "object"
    memory_dir: "object"

    # ---- export -----------------------------------------------------------------------------

    def _export_target(self, path):
        from pathlib import Path  # here, not at import: see fsutil

        from .config import load_config

        if path is None:
            # a committed config.json comes from a pull request like any file: held to the same rules
            path = (load_config(self.memory_dir).get("export") or {}).get("path") or None
            if path is not None:
                return _configured_output_path(self.root, self.memory_dir, path)
        if path is None:
            path = Path(self.memory_dir) / DEFAULT_EXPORT
        return safe_output_path(self.root, self.memory_dir, path)

    def _current_notes(self) -> list:
        """Every note that is not forgotten, as folded now.

        From the index when it exists and only needs catching up (several times cheaper than a
        replay at 75k notes); from a full replay of the shards when there is no index (a fresh
        clone in CI) or it would need a rebuild (`Index._plan`), so an export never pays for
        building one.
        """
        from pathlib import Path  # here, not at import: see fsutil

        from .. import fsutil
        from .index import INDEX_FILE
        from .store import Ledger

        if (Path(self.memory_dir) / fsutil.CACHE_DIR / INDEX_FILE).exists():
            index = self._index()
            if index._plan()[0] != "rebuild":
                index.catch_up()
                return [n for n in index.all_notes() if n.state != "forgotten"]
        return [n for n in Ledger(self.memory_dir).load().notes.values() if n.state != "forgotten"]

    def _export_rows(self) -> list:
        """`_current_notes` as the renderer's rows, without a `Note` per row when the index is current."""
        from pathlib import Path  # here, not at import: see fsutil

        from .. import fsutil
        from .export import note_row
        from .index import INDEX_FILE
        from .store import Ledger

        if (Path(self.memory_dir) / fsutil.CACHE_DIR / INDEX_FILE).exists():
            index = self._index()
            if index._plan()[0] != "rebuild":
                index.catch_up()
                return index.export_rows()
        notes = Ledger(self.memory_dir).load().notes.values()
        return [note_row(n) for n in notes if n.state != "forgotten"]

    def _render_export(self) -> tuple[str, int]:
        from pathlib import Path  # here, not at import: see fsutil

        from ..project import require_memory_dir
        from .export import render_rows

        require_memory_dir(self.memory_dir)
        try:
            rel = Path(self.memory_dir).relative_to(Path(self.root)).as_posix()
        except ValueError:
            rel = Path(self.memory_dir).name
        with _no_cyclic_gc():
            rows = self._export_rows()
            count = len(rows)
            text = render_rows(rows, source=f"{rel}/ledger/")
            del rows  # freed while the collector is paused, so its first pass after never scans them
        return text, count

    def export(self, path=None, check: bool = False) -> dict:
        """Render the ledger to Markdown (default `<memory dir>/MEMORY.md`, or the configured path).

        With `check`, write nothing and report whether the file on disk matches (`up_to_date`)
        with a short unified diff when it does not.
        """
        from .. import fsutil

        target = self._export_target(path)
        if check:
            # a read: no project lock, so `--check` in CI or a pre-commit hook never waits on a writer
            text, count = self._render_export()
            data = text.encode("utf-8")
            on_disk = _read_or_none(target)
            return {"path": str(target), "notes": count, "bytes": len(data), "up_to_date": on_disk == data,
                    "diff": "" if on_disk == data else _short_diff(on_disk, text, target)}
        with fsutil.project_lock(self.memory_dir):
            text, count = self._render_export()
            data = text.encode("utf-8")
            del text  # 45 MB at 75k notes: not kept alive through the write
            result = {"path": str(target), "notes": count, "bytes": len(data)}
            result["written"] = not _holds(target, data)
            if result["written"]:
                fsutil.atomic_write(target, data)
        return result

    def export_enable(self, path=None) -> dict:
        """Turn the mirror on (recorded in the committed `config.json`) and render it now."""
        from pathlib import Path  # here, not at import: see fsutil

        from .. import fsutil
        from ..project import require_memory_dir
        from .config import config_path, load_config, update_config

        require_memory_dir(self.memory_dir)
        target = self._export_target(path)
        rel = target.relative_to(Path(self.root).resolve()).as_posix()
        with fsutil.project_lock(self.memory_dir):
            # config.json last, once it is known to parse and the export has landed: a refused or
            # failed export leaves the mirror off, not on and failing after every write
            load_config(self.memory_dir)
            result = self.export(path=target)
            update_config(self.memory_dir, "export", {"enabled": True, "path": rel})
        result["enabled"] = True
        result["config"] = str(config_path(self.memory_dir))
        return result

    def export_disable(self) -> dict:
        """Stop re-rendering the mirror after writes; the file itself is left as it is."""
        from ..project import require_memory_dir
        from .config import config_path, update_config

        require_memory_dir(self.memory_dir)
        update_config(self.memory_dir, "export", {"enabled": False})
        return {"enabled": False, "config": str(config_path(self.memory_dir))}

    # ---- edit ---------------------------------------------------------------------------------

    def edit_checkout(self, path) -> dict:
        """Write the active (and stale) notes to `path` as an edit buffer."""
        from .. import fsutil
        from ..project import require_memory_dir
        from .edit import render_checkout
        from .ids import now_iso

        require_memory_dir(self.memory_dir)
        target = checkout_target(self.memory_dir, path)
        with fsutil.project_lock(self.memory_dir):
            now = now_iso()
            notes = [n for n in self._current_notes() if n.state_at(now) in ("active", "stale")]
            text = render_checkout(notes, checked_out_at=now)
        fsutil.atomic_write(target, text)
        return {"path": str(target), "notes": len(notes), "checked_out_at": now}

    def edit_checkin(self, path, reason=None) -> dict:
        """Turn the edited buffer at `path` into one txn of events; refuse it whole on any conflict."""
        from pathlib import Path  # here, not at import: see fsutil

        from .. import fsutil
        from ..project import require_memory_dir
        from .edit import build_events, describe_since, parse_buffer, plan_changes
        from .ids import new_note_id
        from .store import Ledger

        require_memory_dir(self.memory_dir)
        target = Path(path).expanduser()
        shown = str(path)
        buf = parse_buffer(fsutil.read_utf8(target), shown)
        reason = " ".join(str(reason).split()) if reason is not None and str(reason).strip() else None
        ledger = Ledger(self.memory_dir)
        with fsutil.project_lock(self.memory_dir):
            # read under the lock that the append below holds too: no write can slip in between
            notes = {n.id: n for n in self._current_notes()}
            changes = plan_changes(buf, notes, reason=reason, path=shown)
            conflicts = []
            for ch in changes:
                if ch.note is None:
                    continue
                current = notes.get(ch.note)
                if current is None:
                    conflicts.append(f"#{ch.note} was forgotten")
                elif current.last_event != ch.recorded_last_event:
                    since = describe_since(self.history(ch.note), ch.recorded_last_event)
                    conflicts.append(f"#{ch.note} changed ({since})")
            if conflicts:
                from ..errors import Conflict

                raise Conflict(f"{len(conflicts)} note(s) changed in the ledger since check-out: {'; '.join(conflicts)} "
                               "— nothing was written; check out again and redo those edits", path=shown)
            _clean_changes(changes, shown)
            events, report = build_events(changes, notes, new_note_id=new_note_id,
                                          supersede_reason=reason or "edited with `memory-custodian edit`")
            written = ledger.append_txn(events, lookup=notes.get) if events else []
        counts = {"create": 0, "supersede": 0, "revoke": 0}
        for row in report:
            counts[row["action"]] += 1
        return {"path": shown, "events": len(written), "txn": written[0]["txn"] if written else None,
                "changes": report, "counts": counts, "unchanged": len(buf.manifest) - counts["supersede"] - counts["revoke"]}


@contextlib.contextmanager
def _no_cyclic_gc():
    """Pause the cyclic garbage collector around an export's bulk read and render.

    At 75k notes the export allocates a few hundred thousand lists, tuples and dicts that hold no
    reference cycles; the collector's repeated passes over them cost as much as the work itself
    (measured: 3.1 s -> 1.6 s of CPU). Reference counting still frees everything; the collector
    is switched back on (if it was on) however the block ends. Free the bulk objects inside the
    block: whatever outlives it is scanned by the collector's first pass after.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _clean_changes(changes, shown: str) -> None:
    """Hold each new or changed block to the rules `remember` applies; errors name the block's line."""
    from ..errors import CustodianError, InvalidInput
    from ..secrets import refuse_secrets
    from .inputs import TITLE_MAX, clean_paths, clean_tags

    for ch in changes:
        try:
            if ch.block is not None and ch.action != "revoke":
                b = ch.block
                b.tags = tuple(clean_tags(b.tags))
                b.paths = tuple(clean_paths(b.paths))
                title = " ".join(b.title.split())
                if len(title) > TITLE_MAX:
                    raise InvalidInput(f"the title is {len(title)} characters; keep it to {TITLE_MAX}")
                if not b.body.strip():
                    raise InvalidInput("the note has no body; write its text below the fields")
                refuse_secrets("\n".join([b.title, b.body, *b.tags, *b.paths, ch.reason or ""]), "the note")
            elif ch.reason:
                refuse_secrets(ch.reason, "the reason")
        except CustodianError as exc:
            raise type(exc)(exc.message, path=shown, line=ch.line) from exc


def safe_output_path(root, memory_dir, raw):
    """Where an export may be written: inside the project, never over memory (only `MEMORY.md` there).

    Relative paths are taken from the project root. Refused: `..`, backslashes and drive letters,
    anything resolving outside the project (symlinks included), and any file in the memory folder
    but its `MEMORY.md` — an export aimed at a shard or a curated file would destroy memory.
    """
    import re
    from pathlib import Path, PurePosixPath  # here, not at import: see fsutil

    from ..errors import InvalidInput

    text = str(raw)
    if not text.strip() or "\\" in text or re.match(r"^[A-Za-z]:", text) or ".." in PurePosixPath(text).parts:
        raise InvalidInput(f"export path {text!r} must be a POSIX path inside the project without '..', "
                           "such as docs/memory/MEMORY.md")
    root_r = Path(root).resolve()
    given = Path(text).expanduser()
    given = given if given.is_absolute() else root_r / given
    target = given.parent.resolve() / given.name
    if root_r not in target.parents:
        raise InvalidInput(f"export path {text!r} is outside the project; the mirror is committed with it — "
                           "give a path under the project root", path=str(target))
    memory_r = Path(memory_dir).resolve()
    if (memory_r == target or memory_r in target.parents) and target != memory_r / DEFAULT_EXPORT:
        raise InvalidInput(f"export path {text!r} is inside the memory folder, which holds memory itself; only "
                           f"{DEFAULT_EXPORT} may be written there", path=str(target))
    _require_folders(target, f"export path {text!r}")
    if target.is_dir():
        raise InvalidInput("is a directory; give a file path for the export", path=str(target))
    return target


def _configured_output_path(root, memory_dir, raw):
    """`safe_output_path` for the path in config.json: a refusal names that file and how to fix it."""
    from ..errors import CustodianError
    from .config import config_path

    try:
        return safe_output_path(root, memory_dir, raw)
    except CustodianError as exc:
        raise type(exc)(f"{exc.message} — fix \"export\".\"path\" here (`memory-custodian export --enable "
                        "--path FILE`) or turn the mirror off (`memory-custodian export --disable`)",
                        path=str(config_path(memory_dir))) from exc


def _require_folders(target, what: str) -> None:
    """Refuse a file path under something that is not a folder (`afile/x.md`), before anything is written.

    The nearest existing ancestor must be a folder; the ones after it are made by the write.
    """
    import os
    import stat

    from ..errors import InvalidInput

    for folder in target.parents:
        try:
            st = os.stat(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue  # made by the write, or under a file that the next ancestor up shows
        except OSError as exc:
            raise InvalidInput(f"{what}: its folder {folder} cannot be checked ({exc.strerror}); fix its permissions "
                               "or give another path", path=str(target)) from exc
        if not stat.S_ISDIR(st.st_mode):
            raise InvalidInput(f"{what} is under {folder}, which is a file, not a folder; give a path whose folders "
                               "are folders or do not exist yet", path=str(target))
        return


def checkout_target(memory_dir, raw):
    """An edit buffer goes anywhere but into the memory folder, and never over a file that is not one."""
    from pathlib import Path  # here, not at import: see fsutil

    from ..errors import InvalidInput
    from .edit import CHECKOUT_TAG

    given = Path(str(raw)).expanduser()
    target = given.parent.resolve() / given.name
    memory_r = Path(memory_dir).resolve()
    if memory_r == target or memory_r in target.parents:
        raise InvalidInput("an edit check-out may not be written inside the memory folder; give a path outside it",
                           path=str(target))
    _require_folders(target, "the check-out file")
    if target.is_dir():
        raise InvalidInput("is a directory; give a file path for the check-out", path=str(target))
    if target.exists():
        with open(target, "rb") as fh:
            head = fh.read(len(CHECKOUT_TAG) + 3).decode("utf-8", errors="replace").lstrip("\ufeff")
        if not head.startswith(CHECKOUT_TAG):
            raise InvalidInput("exists and is not an edit check-out; give a new file name (nothing was overwritten)",
                               path=str(target))
    return target


def _holds(target, data: bytes) -> bool:
    """Whether the file holds exactly `data` (a size that differs answers without reading it)."""
    import stat

    try:
        st = target.stat()
    except (FileNotFoundError, NotADirectoryError):  # not there: the write says why if it cannot make it
        return False
    if st.st_size != len(data) and not stat.S_ISDIR(st.st_mode):  # a directory: refused by the read
        return False
    return _read_or_none(target) == data


def _read_or_none(target) -> bytes | None:
    try:
        return target.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        from ..errors import InvalidInput

        raise InvalidInput("is a directory; give a file path for the export", path=str(target)) from exc
    except OSError as exc:
        from ..errors import InvalidInput

        raise InvalidInput(f"cannot be read ({exc.strerror}); fix it or give another path", path=str(target)) from exc


def _short_diff(old: bytes | None, new: str, target, limit: int = 40) -> str:
    import difflib

    if old is None:
        return f"{target} does not exist; run `memory-custodian export` to create it\n"
    old_text = old.decode("utf-8", errors="replace")
    lines = list(difflib.unified_diff(old_text.splitlines(True), new.splitlines(True),
                                      fromfile=f"{target.name} (on disk)", tofile=f"{target.name} (ledger)", n=1))
    if len(lines) > limit:
        more = len(lines) - limit
        lines = lines[:limit] + [f"… {more} more diff lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


# ---- the mirror kept fresh ---------------------------------------------------------------------

def refresh_mirror_if_enabled(memory) -> dict | None:
    """Re-render the mirror when `config.json` turns it on; one small read when it does not."""
    from .config import config_path, parse_config

    path = config_path(memory.memory_dir)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None
    export = parse_config(raw, path).get("export") or {}
    if not export.get("enabled"):
        return None
    return memory.export()  # the configured path, read again there so that a refusal names config.json


def mirror_warning(exc: Exception) -> str:
    """The warning line after a write landed but the mirror could not be re-rendered.

    The write is done and acknowledged (exit 0): an agent that saw a failure would write the note
    again. The line says what went wrong and what to do about the mirror.
    """
    return (f"the change was written to the ledger (do not repeat it), but the export mirror was not re-rendered: "
            f"{mirror_failure(exc)} — once that is fixed, run `memory-custodian export`")


def mirror_failure(exc: Exception) -> str:
    """Why a mirror re-render failed, in one line (a CustodianError's own line, or a disk error's path)."""
    from ..errors import CustodianError

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
    import sys

    print(f"warning: the export mirror was not re-rendered: {exc}", file=sys.stderr)
