"""The ledger on disk: monthly JSONL shards, appended to one txn at a time, replayed in full.

A txn is one `os.write` of all its lines to an O_APPEND file under the project lock, then fsync:
a crash leaves the txn whole or a torn last line, never a half-applied change. Replay reads every
shard, ignores (and reports) a torn last line and incomplete txns, and is loud about anything
else it cannot read. The one rewrite is `forget`, the hard delete.
"""

from __future__ import annotations

import json
import os
import sys

from ...base import fsutil
from ...base.errors import Corrupt, CustodianError, InvalidInput, NotFound, Refused
from ...base.limits import SHARD_LINE_BYTES
from ...base.records import Record, field
from .fold import Problem, apply, replay, shape_error, transition_error
from .ids import iso_to_ms, ms_to_iso, new_ulids
from .model import FORMAT_VERSION, INDEX_FILE, Note, copy_note, encode_event

LEDGER_DIR = "ledger"
TORN_DIR = "torn"  # under .cache/: fragments a writer trimmed, kept for inspection


class Replay(Record):
    notes: dict[str, Note] = field(default_factory=dict)
    events_by_note: dict[str, list[dict]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def is_shard_name(name: str) -> bool:
    """The one definition of a shard's file name: `*.jsonl`, not hidden. A dot-file (a person's
    hidden copy, an editor's or a tool's temporary file) is no part of the ledger; `doctor` names it."""
    return name.endswith(".jsonl") and not name.startswith(".")


def whole_event(fragment: bytes) -> bool:
    """Whether a last line without its newline is a whole event rather than a torn write.

    Every reader and the writer's tail fix decide it here, so a complete event that only lacks its
    final newline (an editor that drops it) is read, indexed and kept by all of them alike.
    """
    if len(fragment) > SHARD_LINE_BYTES:
        return fragment.rstrip().endswith(b"}")  # never parsed: the reader skips and names it as over-size
    try:
        ev = json.loads(fragment.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    if isinstance(ev, dict) and isinstance(ev.get("v"), int) and ev["v"] > FORMAT_VERSION:
        return True  # a newer format's event: read as a line, so the reader says to upgrade
    return shape_error(ev) is None


def split_shard(data: bytes) -> tuple[list[bytes], bytes]:
    """A shard's lines (without their newlines) and its torn tail (b"" when there is none).

    A last line without its newline is a line when it is a whole event (`whole_event`), else torn.
    """
    end = data.rfind(b"\n") + 1
    lines, tail = data[:end].split(b"\n")[:-1], data[end:]
    if tail and whole_event(tail):
        lines.append(tail)
        tail = b""
    return lines, tail


def stream_blocks(path: str, chunk: int = 1 << 20):
    """The file at `path` as blocks of whole lines (each block's lines are `block.split(b"\\n")`), read a
    chunk at a time, the way `split_shard` cuts it: memory holds one chunk and the line being read,
    not the file, and a caller can skip a block with one substring test (the first session start
    reads every shard)."""
    pieces: list[bytes] = []
    with open(path, "rb") as fh:
        while data := fh.read(chunk):
            nl = data.rfind(b"\n")
            if nl < 0:
                pieces.append(data)  # inside one long line: joined once its newline comes
                continue
            pieces.append(data[:nl])
            yield b"".join(pieces)
            pieces = [data[nl + 1:]]
    tail = b"".join(pieces)
    if tail and whole_event(tail):
        yield tail



def parse_lines(rel: str, data: bytes, *, lenient: bool = False, start_line: int = 1, raw: bool = False):
    """Parse shard bytes. Returns (events, locations, problems, consumed_bytes).

    A last line without its newline is read when it is a whole event (`whole_event`); else it is
    torn: ignored, reported and not consumed. A line this version cannot read (not JSON, not a
    well-formed event, a newer format's event, longer than `limits.SHARD_LINE_BYTES`) costs only
    that line: it is skipped and reported as a problem naming file, line and kind, never its
    content (see `docs/compatibility.md`). `lenient` is kept for callers that said so; every reader
    is lenient now.
    """
    events: list[dict] = []
    locations: dict[str, str] = {}
    problems: list[Problem] = []
    lines, tail = split_shard(data)
    end = len(data) - len(tail)
    lineno = start_line - 1
    offset = 0
    for line in lines:
        lineno += 1
        line_start = offset
        offset += len(line) + 1
        if not line.strip():
            continue
        where = f"{rel}:{lineno}"
        ev, why = _event_of(line, SHARD_LINE_BYTES)
        if why is not None:
            code = "unknown-version" if why.startswith("written in") else "bad-event"
            problems.append(Problem(code, f"{why}; this line was skipped (it costs only this line) — "
                                    + ("upgrade memory-custodian" if code == "unknown-version" else
                                       "fix or remove it by hand, then run `doctor`"), where=where,
                                    event=ev["id"] if code == "bad-event" and isinstance(ev, dict)
                                    and _is_ulid(ev.get("id")) else None))
            continue
        assert ev is not None  # an event with no reason to skip it was parsed
        if raw:
            ev["_line"] = line.decode("utf-8")
            ev["_off"] = line_start
        events.append(ev)
        locations[ev["id"]] = where
    if tail:
        problems.append(Problem("torn-tail", f"torn last line ({len(tail)} bytes, an interrupted write) ignored — "
                                "`doctor --repair` removes it", where=f"{rel}:{lineno + 1}"))
    return events, locations, problems, end


def _is_ulid(value) -> bool:
    return isinstance(value, str) and len(value) == 26 and value.isascii() and value.isalnum()


def _event_of(line: bytes, max_bytes: int) -> tuple[dict | None, str | None]:
    """(the event, None) or (what could be parsed, why the line cannot be read: its kind of fault only)."""
    if len(line) > max_bytes:
        return None, f"bad ledger event: the line is {len(line):,} bytes, over the limit of {max_bytes:,}"
    try:
        ev = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, "bad ledger event: not a JSON line"
    if isinstance(ev, dict) and isinstance(ev.get("v"), int) and not isinstance(ev["v"], bool) \
            and ev["v"] > FORMAT_VERSION:
        return ev, (f"written in a newer ledger format (v{min(ev['v'], 10**6)}) than this memory-custodian "
                    f"reads (v{FORMAT_VERSION})")
    why = shape_error(ev)
    return (ev, None) if why is None else (ev, f"bad ledger event: {why}")


class Ledger:
    """The shards of one memory folder."""

    def __init__(self, memory_dir):
        # plain strings: the prompt hook must not import pathlib (see fsutil); `Path` views on request
        self.memory_dir_str = os.fspath(memory_dir)
        self.dir_str = os.path.join(self.memory_dir_str, LEDGER_DIR)

    memory_dir = fsutil.path_property("memory_dir_str", "The memory folder.")
    dir = fsutil.path_property("dir_str", "The folder of the shards (ledger/).")

    def check_inside(self) -> None:
        """Refuse a `ledger/` (or shard) that leads out of the memory folder through a symlink."""
        base = os.path.realpath(self.memory_dir_str) + os.sep
        for path in (self.dir_str, *self.shards()):
            if os.path.islink(path) or (os.path.exists(path) and not os.path.realpath(path).startswith(base)):
                raise InvalidInput("leaves the memory folder through a symlink; replace the link with a real "
                                   "folder or file", path=path)

    def rel(self, path) -> str:
        return f"{LEDGER_DIR}/{os.path.basename(os.fspath(path))}"

    def shard_stats(self) -> dict:
        """{name: stat} of the shards (`is_shard_name`, regular files), in one directory scan: every
        recall checks them (see `Index`), so no glob and no `Path` per file."""
        out = {}
        try:
            with os.scandir(self.dir_str) as entries:
                for entry in entries:
                    if is_shard_name(entry.name) and entry.is_file():
                        out[entry.name] = entry.stat()
        except (FileNotFoundError, NotADirectoryError):
            return {}
        return out

    def shards(self) -> list[str]:
        """The shards' paths, sorted."""
        return [os.path.join(self.dir_str, name) for name in sorted(self.shard_stats())]

    def hidden_files(self) -> list[str]:
        """Hidden `*.jsonl` files in ledger/: not shards (see `is_shard_name`), named by `doctor`."""
        try:
            with os.scandir(self.dir_str) as entries:
                return sorted(e.path for e in entries if e.name.startswith(".") and e.name.endswith(".jsonl")
                              and e.is_file())
        except (FileNotFoundError, NotADirectoryError):
            return []

    def read_events(self, *, lenient: bool = False):
        events: list[dict] = []
        locations: dict[str, str] = {}
        problems: list[Problem] = []
        for path in self.shards():
            evs, locs, probs, _ = parse_lines(self.rel(path), _read(path), lenient=lenient)
            events.extend(evs)
            locations.update(locs)
            problems.extend(probs)
        return events, locations, problems

    def load(self, *, lenient: bool = False) -> Replay:
        events, locations, problems = self.read_events(lenient=lenient)
        notes, by_note, fold_problems = replay(events, locations=locations)
        return Replay(notes, by_note, problems + fold_problems)

    # ---- writing ------------------------------------------------------------------------------

    def append_txn(self, events: list[dict], *, lookup=None) -> list[dict]:
        """Validate and append `events` as one txn; returns them completed (v, id, at, txn, txn_n).

        Each event's transition is checked against the current fold: `lookup(note_id)` (e.g. the
        index, caught up under this lock) gives a note's current state; without it the ledger is
        replayed. Notes created in this txn need no lookup (their ids are fresh and random).
        Nothing is written unless every event is legal.
        """
        if not events:
            raise InvalidInput("nothing to write")
        with fsutil.project_lock(self.memory_dir_str):
            finished = None
            if events[0].get("op") != "forget":
                try:
                    finished = self.finish_pending_forget()
                except CustodianError as exc:
                    # a note write (MCP's too): the advice is this write again, not a CLI command
                    raise exc.after("this write was not made: an interrupted forget had to be finished first",
                                    (FINISH_FORGET, "run this write again: it finishes the forget first")) from exc
            try:
                return self._append_locked(events, lookup)
            except CustodianError as exc:
                if finished is None:
                    raise
                raise exc.after(f"finished an interrupted forget of #{finished} first") from exc

    def _append_locked(self, events: list[dict], lookup) -> list[dict]:
        path, done, payload = self._prepare_txn(events, lookup)
        self._append_bytes(path, payload)
        return done

    def _prepare_txn(self, events: list[dict], lookup) -> tuple[str, list[dict], bytes]:
        """The shard a txn goes to, its completed events and their bytes; nothing is written."""
        created = [ev["note"] for ev in events if ev.get("op") == "create"]
        needed = sorted({ev["note"] for ev in events if ev.get("note") not in created})
        current: dict[str, Note | None] = {}
        if needed:
            if lookup is None:
                notes = self.load().notes
                lookup = notes.get
            for note_id in needed:
                current[note_id] = lookup(note_id)
        not_before = max((iso_to_ms(n.updated_at) for n in current.values() if n is not None and n.updated_at),
                         default=0)
        ms, ids = new_ulids(len(events) + 1, not_before)
        at = ms_to_iso(ms)
        done = []
        for ev, eid in zip(events, ids[1:]):
            full = {k: v for k, v in ev.items() if v is not None}
            full.update(v=FORMAT_VERSION, id=eid, at=at, txn=ids[0], txn_n=len(events))
            done.append(full)
        state = dict(current)
        for ev in done:
            why = shape_error(ev)
            if why is not None:
                raise InvalidInput(f"cannot write event: {why}")
            note = state.get(ev["note"])
            why = transition_error(note, ev)
            if why is not None:
                raise Refused(f"{why}; nothing was written")
            state[ev["note"]] = apply(None if note is None else copy_note(note), ev)
        payload = "".join(encode_event(ev) for ev in done).encode("utf-8")
        return os.path.join(self.dir_str, f"{at[:7]}.jsonl"), done, payload

    def _append_bytes(self, path, payload: bytes) -> None:
        self.check_inside()
        try:
            os.makedirs(self.dir_str, exist_ok=True)
            existed = os.path.exists(path)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | fsutil.BINARY, 0o644)
        except OSError as exc:
            raise fsutil.disk_error(path, exc) from exc
        size = None
        try:
            size = os.fstat(fd).st_size
            if size and fsutil.read_at(fd, 1, size - 1) != b"\n":
                payload = self._fix_tail(fd, path, size) + payload
                size = os.fstat(fd).st_size
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:
            if size is not None:
                # a short write (full disk, file-size limit) must not leave part of a txn behind
                try:
                    os.ftruncate(fd, size)
                    os.fsync(fd)
                except OSError:
                    pass
            raise fsutil.disk_error(path, exc) from exc
        finally:
            os.close(fd)
        if not existed:
            fsutil.fsync_dir(self.dir_str)

    def _fix_tail(self, fd: int, path, size: int) -> bytes:
        """A shard not ending in a newline: end a whole last event, or move a torn one aside."""
        line_start, pos = 0, size
        while pos > 0:  # back to the start of the last line, however long it is
            lo = max(0, pos - (1 << 20))
            newline = fsutil.read_at(fd, pos - lo, lo).rfind(b"\n")
            if newline >= 0:
                line_start = lo + newline + 1
                break
            pos = lo
        fragment = fsutil.read_at(fd, size - line_start, line_start)
        if whole_event(fragment):
            return b"\n"
        torn = os.path.join(fsutil.cache_dir(self.memory_dir_str), TORN_DIR)
        fsutil.private_dir(torn)
        stem = os.path.splitext(os.path.basename(path))[0]
        fsutil.atomic_write(os.path.join(torn, f"{stem}-{line_start}.bin"), fragment)
        os.ftruncate(fd, line_start)
        print(f"warning: {self.rel(path)}: trimmed a torn last line ({len(fragment)} bytes) left by an "
              f"interrupted write; saved to .cache/{TORN_DIR}/", file=sys.stderr)
        return b""

    # ---- the hard delete ---------------------------------------------------------------------

    def forget(self, note_id: str, *, actor: str = "human") -> dict:
        """Remove every event of `note_id` from the shards and leave one content-free `forget` event.

        A marker in `.cache/` (the note id, no text) is written first and removed once the shards
        and the cache are scrubbed, so a crash part-way is finished by the next write. The forget
        event lands in the same rename as its shard's stripped lines where it can (`strip_note`), so
        a full disk mostly stops the delete before anything changed. `stripped` names the txns that
        lost events, so their other events still count as complete. `marks` are the byte forms of
        the deleted text, for the caller's mirrors.
        """
        with fsutil.project_lock(self.memory_dir_str):
            self.check_inside()
            if self.pending_forget() not in (None, note_id):
                self.finish_pending_forget()  # one marker at a time: another note's forget is finished first
            rep = self.load()
            note = rep.notes.get(note_id)
            if note is None:
                raise NotFound(f"no note #{note_id} in the ledger")
            inherited = bool(note.extra.get("forgotten_with"))  # forgotten with a note it supersedes: no event yet
            if note.state == "forgotten" and not inherited and len(rep.events_by_note.get(note_id, ())) <= 1:
                raise Refused(f"note #{note_id} is already forgotten")
            txns = sorted({ev["txn"] for ev in rep.events_by_note.get(note_id, ()) if ev["op"] != "forget"})
            if note.state != "forgotten" or inherited:
                target, done, payload = self._prepare_txn(
                    [{"op": "forget", "note": note_id, "actor": actor, "stripped": txns}], rep.notes.get)
                event = (target, payload)
                keep = done[0]["id"]
            else:
                event, keep = None, rep.events_by_note[note_id][-1]["id"]
            fsutil.atomic_write(self._pending_path(), json.dumps({"note": note_id}) + "\n")
            rewritten, marks = self._finish_forget(rep, note_id, keep, event)
        return {"note": note_id, "forget_event": keep, "rewritten": rewritten, "marks": marks,
                "warning": "git history still holds the old text; rewrite history (e.g. git filter-repo) "
                           "if it must be gone everywhere"}

    def _pending_path(self) -> str:
        from ...base.scrub import PENDING_FORGET

        return os.path.join(fsutil.cache_dir(self.memory_dir_str), PENDING_FORGET)

    def _finish_forget(self, rep, note_id: str, keep: str, event=None) -> tuple[list[str], list[bytes]]:
        """Strip the note's lines (writing `event`, the forget's (shard, bytes), if it is not on disk
        yet), scrub `.cache/` of its text, then drop the pending marker."""
        from ...base.scrub import needles, scrub_cache

        texts = [str(ev.get(k) or "") for ev in rep.events_by_note.get(note_id, ())
                 for k in ("title", "body", "quote", "reason")]
        marks = needles(*texts)
        try:
            rewritten = self.strip_note(note_id, keep_event=keep, event=event)
        except _NothingLanded as stop:
            os.unlink(self._pending_path())  # nothing to finish: the marker goes too
            raise stop.error from stop.error.__cause__
        scrub_cache(fsutil.cache_dir(self.memory_dir_str), marks, (INDEX_FILE,), texts=texts)
        os.unlink(self._pending_path())
        return rewritten, marks

    def pending_forget(self) -> str | None:
        """The note an interrupted `forget` left its marker for, or None."""
        try:
            with open(self._pending_path(), encoding="utf-8") as fh:
                return json.loads(fh.read())["note"]
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError) as exc:
            raise Corrupt("is not a pending forget marker; delete it and run `forget --note` again",
                          path=self._pending_path()) from exc

    def finish_pending_forget(self) -> str | None:
        """Finish a `forget` a crash interrupted (call under the lock); the note id, or None."""
        note_id = self.pending_forget()
        if note_id is None:
            return None
        rep = self.load()
        forget = [ev for ev in rep.events_by_note.get(note_id, ()) if ev["op"] == "forget"]
        if not forget:  # killed before the forget event landed: nothing was deleted, nothing to finish
            os.unlink(self._pending_path())
            return None
        self._finish_forget(rep, note_id, forget[-1]["id"])
        return note_id

    def strip_note(self, note_id: str, *, keep_event: str, event=None) -> list[str]:
        """Atomically rewrite each shard holding `note_id`'s events without them (except `keep_event`).

        `event` (shard, bytes), a forget event not yet on disk, joins its shard's rewrite when that
        shard is rewritten anyway (and has no torn tail), else it is appended first. Every temp file
        is written before the event lands and before any rename, so a full disk mostly stops here
        with nothing changed (`_NothingLanded`); after that, a failure says what landed."""
        plan: list[tuple[str, bytes]] = []  # (path, new bytes), the forget event's shard first
        landed = event is None  # finishing a forget whose event is already on disk
        for path in self.shards():
            data = _read(path)
            lines, tail = split_shard(data)
            kept = [raw + b"\n" for raw in lines if not _is_stripped(raw, note_id, keep_event)]
            if len(kept) == len(lines):
                continue
            if event is not None and path == event[0] and not tail:
                plan.insert(0, (path, b"".join(kept) + event[1]))
                event = None
            else:
                plan.append((path, b"".join(kept) + tail))
        temps: list[str] = []
        try:
            for path, new in plan:
                temps.append(fsutil.write_temp(path, new))
            if event is not None:
                self._append_bytes(*event)
                landed = True
        except CustodianError as exc:
            for tmp in temps:
                fsutil.discard_temp(tmp)
            if not landed:
                raise _NothingLanded(exc) from exc.__cause__
            raise self._text_left(exc, note_id, [], [p for p, _ in plan]) from exc.__cause__
        rewritten: list[str] = []
        for i, ((path, _), tmp) in enumerate(zip(plan, temps)):
            try:
                fsutil.commit_temp(tmp, path)
            except CustodianError as exc:
                for rest in temps[i + 1:]:
                    fsutil.discard_temp(rest)
                if not landed:
                    raise _NothingLanded(exc) from exc.__cause__
                raise self._text_left(exc, note_id, rewritten, [p for p, _ in plan[i:]]) from exc.__cause__
            rewritten.append(self.rel(path))
            landed = True
        return rewritten

    def _text_left(self, exc: CustodianError, note_id: str, rewritten: list[str], left: list[str]):
        done = f"the forget event of #{note_id} is written" + (f" and {', '.join(rewritten)} rewritten"
                                                              if rewritten else "")
        where = ", ".join(self.rel(p) for p in left)
        return fsutil.stopped_part_way(exc, done, f"the note's text is still in {where} and .cache/", FINISH_FORGET)


# what finishes a forget a full disk stopped part-way (the marker in .cache/ names the note)
FINISH_FORGET = "forget the note again, run any other note write, or {verb:doctor} with {field:repair}, to finish it"


class _NothingLanded(Exception):
    """A forget stopped before its event or any rewrite reached the ledger: `error` says nothing changed."""

    def __init__(self, error: CustodianError):
        super().__init__(error.one_line())
        self.error = error


def _is_stripped(raw: bytes, note_id: str, keep_event: str) -> bool:
    try:
        ev = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(ev, dict) and ev.get("note") == note_id and ev.get("id") != keep_event


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()
