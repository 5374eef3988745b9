"""The ledger as text: export (the read-only Markdown mirror) and edit check-out/check-in.

The mirror is rendered from the folded ledger (the index when it is current, else a replay of
the shards), never from itself: nothing reads MEMORY.md back. A check-in replays the ledger,
checks for conflicts and appends its one txn under the same project lock, so it lands whole or
not at all.
"""

from __future__ import annotations

import contextlib
import difflib
import gc
import os
import re
import stat

from ...base import fsutil, limits
from ...base.errors import Conflict, CustodianError, InvalidInput
from ...base.project import require_memory_dir
from ...base.scrub import exported_paths, holds, remember_export
from ...base.secrets import refuse_secrets
from ..index.index import INDEX_FILE
from ..results import CheckedIn, CheckedOut, Exported
from ..storage.config import config_path, load_config, update_config
from ..storage.ids import new_note_id, now_iso
from ..storage.inputs import BODY_MAX, TITLE_MAX, bounded, choice, clean_paths, clean_tags
from ..storage.model import ACTORS
from ..storage.store import Ledger
from .edit import CHECKOUT_TAG, build_events, describe_since, parse_buffer, plan_changes, render_checkout
from .export import note_row, render_rows
from .mirror import forget_export_digest, record_export

DEFAULT_EXPORT = "MEMORY.md"  # inside the memory folder


# ---- export -------------------------------------------------------------------------------------

def _export_target(notes, path) -> str:
    if path is None:
        # a committed config.json comes from a pull request like any file: held to the same rules
        path = (load_config(notes.memory_dir).get("export") or {}).get("path") or None
        if path is not None:
            return _configured_output_path(notes.root, notes.memory_dir, path)
    if path is None:
        path = os.path.join(notes.memory_dir, DEFAULT_EXPORT)
    return safe_output_path(notes.root, notes.memory_dir, path)


def _current_index(notes):
    """The index, caught up, when it exists and holds the whole ledger (several times cheaper than a
    replay at 75k notes); None when there is none (a fresh clone in CI) or it holds part of a big
    backlog (`Index.unread`), so that an export never waits for building one."""
    if not os.path.exists(os.path.join(notes.memory_dir, fsutil.CACHE_DIR, INDEX_FILE)):
        return None
    index = notes.index()
    return None if index.unread()[0] else index


def _current_notes(notes) -> list:
    """Every note that is not forgotten, as folded now (from the index, or a replay of the shards)."""
    index = _current_index(notes)
    if index is not None:
        return [n for n in index.all_notes() if n.state != "forgotten"]
    return [n for n in Ledger(notes.memory_dir).load().notes.values() if n.state != "forgotten"]

def _export_rows(notes) -> list:
    """`_current_notes` as the renderer's rows, without a `Note` per row when the index is current
    (its stored rows are handed over as they are: ~2x quicker at 75k notes)."""
    index = _current_index(notes)
    if index is not None:
        return index.export_rows()
    found = Ledger(notes.memory_dir).load().notes.values()
    return [note_row(n) for n in found if n.state != "forgotten"]


def _render_export(notes) -> tuple[str, int]:
    require_memory_dir(notes.memory_dir)
    rel = os.path.relpath(notes.memory_dir, notes.root).replace(os.sep, "/")
    if rel.startswith(".."):
        rel = os.path.basename(notes.memory_dir)
    with _no_cyclic_gc():
        rows = _export_rows(notes)
        count = len(rows)
        text = render_rows(rows, source=f"{rel}/ledger/")
        del rows  # freed while the collector is paused, so its first pass after never scans them
    return text, count


def export(notes, path=None, check: bool = False):
    """Render the ledger to Markdown (default `<memory dir>/MEMORY.md`, or the configured path).

    With `check`, write nothing and report whether the file on disk matches (`up_to_date`)
    with a short unified diff when it does not.
    """
    target = _export_target(notes, path)
    fsutil.check_name_lengths(target)
    if check:
        # a read: no project lock, so `--check` in CI or a pre-commit hook never waits on a writer
        text, count = _render_export(notes)
        data = text.encode("utf-8")
        on_disk = _read_or_none(target)
        return Exported(path=str(target), notes=count, bytes=len(data), up_to_date=on_disk == data,
                        diff="" if on_disk == data else _short_diff(on_disk, text, target))
    with fsutil.project_lock(notes.memory_dir):
        text, count = _render_export(notes)
        data = text.encode("utf-8")
        del text  # 45 MB at 75k notes: not kept alive through the write
        written = not _holds(target, data)
        # a hand export anywhere is a copy a hard delete must find again: recorded before it is made,
        # so a full disk stops the export before the copy exists rather than after
        remember_export(fsutil.cache_dir(notes.memory_dir), str(target))
        if written:
            fsutil.atomic_write(target, data)
        _record_export(notes.memory_dir, target, written)
    return Exported(path=str(target), notes=count, bytes=len(data), written=written)


def _record_export(memory_dir, target, written: bool) -> None:
    """Remember the digest of what was exported (so the next automatic refresh can tell a hand edit)."""
    try:
        record_export(memory_dir, target)
    except CustodianError as exc:
        if not written:
            raise
        forget_export_digest(memory_dir)  # a stale digest would read the new file as a hand edit
        raise fsutil.stopped_part_way(exc, f"{target} was written", "its digest in .cache/ is not (a hand edit "
                                      "of it cannot be told from an export until it is)", "run the same export again") \
            from exc.__cause__


def export_enable(notes, path=None):
    """Turn the mirror on (recorded in the committed `config.json`) and render it now."""
    require_memory_dir(notes.memory_dir)
    target = _export_target(notes, path)
    rel = os.path.relpath(target, os.path.realpath(notes.root)).replace(os.sep, "/")
    with fsutil.project_lock(notes.memory_dir):
        # config.json last, once it is known to parse and the export has landed: a refused or
        # failed export leaves the mirror off, not on and failing after every write
        load_config(notes.memory_dir)
        result = export(notes, path=target)
        try:
            update_config(notes.memory_dir, "export", {"enabled": True, "path": rel})
        except CustodianError as exc:
            if not result.written:
                raise
            raise fsutil.stopped_part_way(exc, f"{target} was written", "the mirror is not turned on (config.json "
                                          "is as it was)", "run {verb:export} with {field:enable} again") \
                from exc.__cause__
    return result.replace(enabled=True, config=str(config_path(notes.memory_dir)))


def export_disable(notes):
    """Stop re-rendering the mirror after writes; the file itself is left as it is."""
    require_memory_dir(notes.memory_dir)
    update_config(notes.memory_dir, "export", {"enabled": False})
    return Exported(enabled=False, config=str(config_path(notes.memory_dir)))


# ---- edit ---------------------------------------------------------------------------------------

def edit_checkout(notes, path):
    """Write the active (and stale) notes to `path` as an edit buffer."""
    require_memory_dir(notes.memory_dir)
    target = checkout_target(notes.memory_dir, path)
    with fsutil.project_lock(notes.memory_dir):
        now = now_iso()
        shown = [n for n in _current_notes(notes) if n.state_at(now) in ("active", "stale")]
        text = render_checkout(shown, checked_out_at=now)
    fsutil.atomic_write(target, text)
    return CheckedOut(path=str(target), notes=len(shown), checked_out_at=now)


def edit_checkin(notes, path, reason=None, actor: str = "human"):
    """Turn the edited buffer at `path` into one txn of `actor`'s events; refuse it whole on any conflict."""
    fsutil.check_name_lengths(str(path))
    require_memory_dir(notes.memory_dir)
    choice(actor, ACTORS, "actor")
    shown = str(path)
    buf = parse_buffer(fsutil.read_utf8(os.path.expanduser(shown), limit=limits.EDIT_FILE_BYTES), shown)
    reason = " ".join(str(reason).split()) if reason is not None and str(reason).strip() else None
    ledger = Ledger(notes.memory_dir)
    with fsutil.project_lock(notes.memory_dir):
        # read under the lock that the append below holds too: no write can slip in between
        current = {n.id: n for n in _current_notes(notes)}
        changes = plan_changes(buf, current, reason=reason, path=shown)
        _refuse_conflicts(notes, changes, current, shown)
        _clean_changes(changes, shown)
        events, report = build_events(changes, current, new_note_id=new_note_id, actor=actor,
                                      supersede_reason="edited with `memory-custodian edit`")  # --reason: plan_changes
        written = ledger.append_txn(events, lookup=current.get) if events else []
    counts = {"create": 0, "supersede": 0, "revoke": 0}
    for row in report:
        counts[row["action"]] += 1
    return CheckedIn(path=shown, events=len(written), txn=written[0]["txn"] if written else None, changes=report,
                     counts=counts, unchanged=len(buf.manifest) - counts["supersede"] - counts["revoke"])


def _refuse_conflicts(notes, changes, current: dict, shown: str) -> None:
    """Refuse the whole check-in when a note it changes was changed or forgotten since the check-out."""
    conflicts = []
    for ch in changes:
        if ch.note is None:
            continue
        now = current.get(ch.note)
        if now is None:
            conflicts.append(f"#{ch.note} was forgotten")
        elif now.last_event != ch.recorded_last_event:
            since = describe_since(notes.history(ch.note).events, ch.recorded_last_event)
            conflicts.append(f"#{ch.note} changed ({since})")
    if conflicts:
        raise Conflict(f"{len(conflicts)} note(s) changed in the ledger since check-out: {'; '.join(conflicts)} "
                       "— nothing was written; check out again and redo those edits", path=shown)


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
                bounded(b.body.strip("\n").rstrip(), BODY_MAX, "the note's text")  # as `remember` holds it
                refuse_secrets("\n".join([b.title, b.body, *b.tags, *b.paths, ch.reason or ""]), "the note")
            elif ch.reason:
                refuse_secrets(ch.reason, "the reason")
        except CustodianError as exc:
            raise exc.at(path=shown, line=ch.line) from exc


def safe_output_path(root, memory_dir, raw):
    """Where an export may be written: inside the project, never over memory (only `MEMORY.md` there).

    Relative paths are taken from the project root. Refused: `..`, backslashes and drive letters,
    anything resolving outside the project (symlinks included), and any file in the memory folder
    but its `MEMORY.md` — an export aimed at a shard or a curated file would destroy memory.
    """
    text = str(raw)
    if not text.strip() or "\\" in text or re.match(r"^[A-Za-z]:", text) or ".." in text.split("/"):
        raise InvalidInput(f"export path {text!r} must be a POSIX path inside the project without '..', "
                           "such as docs/memory/MEMORY.md")
    root_r = os.path.realpath(root)
    target = _resolved_parent(os.path.join(root_r, os.path.expanduser(text)))
    if not fsutil.inside(target, root_r):
        raise InvalidInput(f"export path {text!r} is outside the project; the mirror is committed with it — "
                           "give a path under the project root", path=target)
    memory_r = os.path.realpath(memory_dir)
    if (memory_r == target or fsutil.inside(target, memory_r)) and target != os.path.join(memory_r, DEFAULT_EXPORT):
        raise InvalidInput(f"export path {text!r} is inside the memory folder, which holds memory itself; only "
                           f"{DEFAULT_EXPORT} may be written there", path=target)
    _require_folders(target, f"export path {text!r}")
    if os.path.isdir(target):
        raise InvalidInput("is a directory; give a file path for the export", path=target)
    return target


def _resolved_parent(path: str) -> str:
    """`path` with its folder's symlinks resolved and its own name kept (a symlink there is written through)."""
    folder, name = os.path.split(path.rstrip(os.sep) or os.sep)
    return os.path.join(os.path.realpath(folder), name)


def _configured_output_path(root, memory_dir, raw):
    """`safe_output_path` for the path in config.json: a refusal names that file and how to fix it."""
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
    folder = target
    while os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
        try:
            st = os.stat(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue  # made by the write, or under a file that the next ancestor up shows
        except OSError as exc:
            raise InvalidInput(f"{what}: its folder {folder} cannot be checked ({exc.strerror}); fix its permissions "
                               "or give another path", path=target) from exc
        if not stat.S_ISDIR(st.st_mode):
            raise InvalidInput(f"{what} is under {folder}, which is a file, not a folder; give a path whose folders "
                               "are folders or do not exist yet", path=target)
        return


def checkout_target(memory_dir, raw):
    """An edit buffer goes anywhere but into the memory folder, and never over a file that is not one."""
    fsutil.check_name_lengths(str(raw))
    target = _resolved_parent(os.path.abspath(os.path.expanduser(str(raw))))
    memory_r = os.path.realpath(memory_dir)
    if memory_r == target or fsutil.inside(target, memory_r):
        raise InvalidInput("an edit check-out may not be written inside the memory folder; give a path outside it",
                           path=target)
    _require_folders(target, "the check-out file")
    if os.path.isdir(target):
        raise InvalidInput("is a directory; give a file path for the check-out", path=target)
    if os.path.exists(target):
        with open(target, "rb") as fh:
            head = fh.read(len(CHECKOUT_TAG) + 3).decode("utf-8", errors="replace").lstrip("\ufeff")
        if not head.startswith(CHECKOUT_TAG):
            raise InvalidInput("exists and is not an edit check-out; give a new file name (nothing was overwritten)",
                               path=target)
    return target


def _holds(target, data: bytes) -> bool:
    """Whether the file holds exactly `data` (a size that differs answers without reading it)."""
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):  # not there: the write says why if it cannot make it
        return False
    if st.st_size != len(data) and not stat.S_ISDIR(st.st_mode):  # a directory: refused by the read
        return False
    return _read_or_none(target) == data


def _read_or_none(target) -> bytes | None:
    try:
        with open(target, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise InvalidInput("is a directory; give a file path for the export", path=str(target)) from exc
    except OSError as exc:
        raise InvalidInput(f"cannot be read ({exc.strerror}); fix it or give another path", path=str(target)) from exc


def _short_diff(old: bytes | None, new: str, target, limit: int = 40) -> str:
    if old is None:
        return f"{target} does not exist; run `memory-custodian export` to create it\n"
    old_text = old.decode("utf-8", errors="replace")
    lines = list(difflib.unified_diff(old_text.splitlines(True), new.splitlines(True),
                                      fromfile=f"{os.path.basename(target)} (on disk)",
                                      tofile=f"{os.path.basename(target)} (ledger)", n=1))
    if len(lines) > limit:
        more = len(lines) - limit
        lines = lines[:limit] + [f"… {more} more diff lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def rerender_mirrors(notes, marks: list[bytes]) -> list[str]:
    """Re-export every mirror this tool wrote that still holds one of `marks` (a hard delete's
    text, the configured mirror aside: the facade refreshes it); what could not be, as warnings."""
    known = {*exported_paths(fsutil.cache_dir(notes.memory_dir)), os.path.join(notes.memory_dir, DEFAULT_EXPORT)}
    problems = []
    for path in sorted(known):
        if marks and holds(path, marks):
            try:
                export(notes, path=path)
            except CustodianError as exc:
                problems.append(f"a copy of the text remains in {path}, which could not be re-rendered "
                                f"({exc.one_line()}) — delete it or run `export --path` to it")
    return problems
