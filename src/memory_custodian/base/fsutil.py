"""Atomic, locked writes: the only way this tool changes a file.

A write goes to a temp file in the same directory, is fsynced, renamed over the target, and the
directory is fsynced, so a crash leaves the old bytes or the new ones, never a mix. Every
read-modify-write holds the project lock (`.cache/lock`, `locking.py`), re-entrant inside one process
so a command can call helpers that lock too.

Paths are handled as strings (`os.path`): the prompt hook goes through here on every prompt, and
importing `pathlib` costs a fresh process 3-4 ms (measured). Callers may pass a `Path` or a string.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat

# the low-level module: `threading` costs every hook process ~0.8 ms, and only these two are needed
from _thread import _local, get_ident

from .errors import Corrupt, CustodianError, InvalidInput, PartlyWritten, Refused, unreadable

CACHE_DIR = ".cache"
LOCK_FILE = "lock"

# Re-entrancy is per thread: another thread of the same process must wait for the flock like
# any other process (flock locks belong to the open file, and each thread opens its own).
_held = _local()


# Windows opens descriptors in text mode (`\n` written as `\r\n`, offsets off) unless told otherwise
BINARY = getattr(os, "O_BINARY", 0)


NAME_MAX = 255  # bytes in one file or folder name, on every file system the tool runs on


def check_name_lengths(path) -> None:
    """Refuse, before anything is read or written, a path holding a name longer than `NAME_MAX` bytes."""
    for part in os.fspath(path).replace("\\", "/").split("/"):
        size = len(part.encode("utf-8", "surrogatepass"))
        if size > NAME_MAX:
            raise InvalidInput(f"the name {part[:40]!r}… is {size} bytes; file systems allow {NAME_MAX} — give a "
                               "shorter name (nothing was changed)")


def path_property(attr: str, doc: str) -> property:
    """A read-only `Path` view of the string path in `attr`, importing `pathlib` only when read."""
    def get(self):
        from pathlib import Path

        return Path(getattr(self, attr))

    return property(get, doc=doc)


# What `Path.exists()` and `Path.is_file()` read as "not there"; any other error is raised, so a
# path that cannot be looked up (no permission, a name too long) is never taken for a missing one.
_ABSENT_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _stat(path):
    """`os.stat(path)`, or None when the path is not there (as `Path.exists()` decides it)."""
    try:
        return os.stat(path)
    except OSError as exc:
        if exc.errno not in _ABSENT_ERRNOS:
            raise
    except ValueError:  # an embedded NUL: no such file
        pass
    return None


def exists(path) -> bool:
    return _stat(path) is not None


def is_file(path) -> bool:
    found = _stat(path)
    return found is not None and stat.S_ISREG(found.st_mode)


def real_path(path) -> str:
    """`os.path.realpath`, with a symlink loop raised as one line (`realpath` itself passes loops by)."""
    resolved = os.path.realpath(path)
    try:
        os.stat(resolved)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise unreadable(path, OSError(errno.ELOOP, "symlink loop")) from exc
    return resolved


def inside(path: str, folder: str) -> bool:
    """Whether resolved `path` lies strictly inside resolved `folder` (as `folder in path.parents`)."""
    return path.startswith(os.path.join(folder, ""))


def fsync_dir(directory) -> None:
    if os.name == "nt":
        return  # Windows cannot open a folder to fsync it; NTFS journals the rename itself
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_NOT_A_FOLDER = "a folder on this path is a file; give a path whose folders are folders — nothing was changed"


def _cause(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return f"disk full or file too large ({exc.strerror})"
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"cannot write ({exc.strerror})"
    return f"write failed ({exc.strerror})"


def disk_error(path, exc: OSError, leftover: str | None = None) -> CustodianError:
    """One write that failed and was undone: true of a single file, or of the first step of many."""
    if leftover is not None:
        return Refused(f"{_cause(exc)}; the file itself was not changed, but its temp file "
                       f"{leftover} could not be removed — delete it", path=str(path))
    if exc.errno == errno.ENOTDIR:
        return InvalidInput(_NOT_A_FOLDER, path=str(path))
    advice = {errno.ENOSPC: "free space and retry", errno.EDQUOT: "free space and retry",
              errno.EFBIG: "free space and retry", errno.EROFS: "check permissions",
              errno.EACCES: "check permissions", errno.EPERM: "check permissions"}.get(exc.errno or 0)
    return Refused(f"{_cause(exc)}; nothing was changed" + (f" — {advice}" if advice else ""), path=str(path))


def stopped_part_way(error: CustodianError, done: str, left: str, finish: str) -> PartlyWritten:
    """A write of several files stopped after some landed: `done` names what was written, `left`
    what is not yet, `finish` what completes it (placeholders allowed, as every message)."""
    cause = error.__cause__
    why = _cause(cause) if isinstance(cause, OSError) else error.template.split(" — nothing was changed")[0]
    return PartlyWritten(f"{why} part-way: {done}, but {left} — free space, then {finish}", path=error.path)


# `.NAME.tmp-PID-TID`: the writer's process id tells the next writer whether its owner is gone.
TEMP_RE = re.compile(r"^\..+\.tmp-(\d+)-(\d+)$")
_TEMP_STEM_MAX = 160  # bytes of NAME kept: the temp name stays under the file system's 255


def temp_name(name: str) -> str:
    stem = name.encode("utf-8", "surrogateescape")[:_TEMP_STEM_MAX].decode("utf-8", "ignore")
    return f".{stem}.tmp-{os.getpid()}-{get_ident()}"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # our own temp file is in use by this very write (or another thread's)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def temp_files(memory_dir: str, *, dead_only: bool = True) -> list[str]:
    """Temp files of atomic writes under `memory_dir` (those of gone writers with `dead_only`)."""
    found = []
    for folder, dirs, files in os.walk(memory_dir):
        dirs.sort()
        for name in sorted(files):
            m = TEMP_RE.match(name)
            if m and (not dead_only or not _alive(int(m.group(1)))):
                found.append(os.path.join(folder, name))
    return found


def sweep_temp_files(memory_dir: str) -> list[str]:
    """Remove the temp files of writers that are gone; call under the project lock."""
    removed = []
    for path in temp_files(memory_dir):
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def atomic_write(path, data: str | bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace `path` with `data` atomically (text is written as UTF-8 with `\\n` endings as given).
    `durable=False` skips the fsyncs: for caches that are rebuilt when a crash leaves them damaged."""
    commit_temp(write_temp(path, data, mode=mode, durable=durable), path, durable=durable)


def write_temp(path, data: str | bytes, *, mode: int | None = None, durable: bool = True) -> str:
    """The first half of `atomic_write`: `data` in a temp file beside `path`, which is not touched.

    A writer of several files writes every temp file first, so a full disk stops it before any file
    changed; on failure the temp file is removed and the error says nothing was changed."""
    path = os.fspath(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    directory, name = os.path.split(path)
    directory = directory or "."
    tmp = os.path.join(directory, temp_name(name))
    private = mode is None and in_cache(directory)
    try:
        os.makedirs(directory, mode=0o700 if private else 0o777, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:  # a file stands where a folder must be
        raise InvalidInput(_NOT_A_FOLDER, path=str(path)) from exc
    except OSError as exc:
        raise disk_error(path, exc) from exc
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | BINARY,
                     (0o600 if private else 0o644) if mode is None else mode)
        try:
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise disk_error(path, exc, discard_temp(tmp)) from exc
    return tmp


def commit_temp(tmp: str, path, *, durable: bool = True) -> None:
    """The second half of `atomic_write`: rename `tmp` over `path` (removing `tmp` if that fails)."""
    try:
        os.replace(tmp, path)
    except OSError as exc:
        raise disk_error(path, exc, discard_temp(tmp)) from exc
    if durable:
        try:
            fsync_dir(os.path.dirname(os.fspath(path)) or ".")
        except OSError as exc:  # the rename is done: saying "nothing was changed" would be false
            raise Refused(f"{_cause(exc)} after the file was replaced: it holds the new text, but a crash before "
                          "the disk catches up could lose it — check the disk", path=str(path)) from exc


def discard_temp(tmp: str) -> str | None:
    """Remove a temp file that will not be renamed; its path if it could not be removed, else None."""
    try:
        os.unlink(tmp)
    except (FileNotFoundError, NotADirectoryError):
        pass  # the temp file was never made (its folder is missing or is a file), or was renamed
    except OSError:
        return tmp
    return None


def _real_cache(memory_dir) -> str:
    """The `.cache/` path, refused when it is a symlink (it could lead a lock or a write elsewhere)."""
    cache = os.path.join(os.fspath(memory_dir), CACHE_DIR)
    if os.path.islink(cache):
        raise Corrupt(
            "is a symlink; the cache must be a real folder inside the memory folder — remove the link "
            "(the cache is disposable) and run the command again",
            path=str(cache),
        )
    return cache


def in_cache(path: str) -> bool:
    """Whether `path` lies inside a memory folder's `.cache/`: what is written there is owner-only
    (files 0600, folders 0700), since it holds every note's text, prompts and torn fragments."""
    return f"{os.sep}{CACHE_DIR}{os.sep}" in os.path.abspath(path) + os.sep


def private_dir(path: str) -> str:
    """`path`, a folder under `.cache/`, made owner-only if missing (and made so if it was not)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def owner_only(path: str, *, create: bool = False, also: tuple[str, ...] = ()) -> None:
    """Take group and other bits off a cache file (one an older version left 0644), and off the files
    named `path` + each of `also`; `create` makes `path` (empty, 0600) if it is missing, as before
    SQLite opens a database, whose -wal and -shm files SQLite then gives the same mode."""
    if create:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for name in (path, *(path + suffix for suffix in also)):
        try:
            if os.stat(name).st_mode & 0o077:
                os.chmod(name, 0o600)
        except FileNotFoundError:
            pass


def cache_dir(memory_dir) -> str:
    """`.cache/`, made if missing: derived and private, owner-only, ignored by git."""
    cache = _real_cache(memory_dir)
    if not os.path.isdir(cache):
        try:
            os.mkdir(cache, 0o700)
        except FileExistsError as exc:  # made meanwhile by another process: fine if it is a folder
            if not os.path.isdir(cache):
                raise disk_error(cache, exc) from exc
        except FileNotFoundError as exc:
            raise InvalidInput("memory folder does not exist — run {verb:init}", path=str(memory_dir)) from exc
        except OSError as exc:
            raise disk_error(cache, exc) from exc
    ignore = os.path.join(cache, ".gitignore")
    if not os.path.exists(ignore):
        try:
            with os.fdopen(os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                           encoding="utf-8") as fh:
                fh.write("*\n")
        except OSError as exc:
            raise disk_error(ignore, exc) from exc
    return cache


@contextlib.contextmanager
def project_lock(memory_dir, *, create: bool = True):
    """Hold the project's exclusive lock (re-entrant within one thread).

    `create=False` is for commands that only read (previews): they wait for a writer that holds the
    lock, but a folder no writer has touched yet gets no `.cache/` from them, so they write nothing."""
    from . import locking

    cache = cache_dir(memory_dir) if create else _real_cache(memory_dir)
    lock_path = os.path.join(cache, LOCK_FILE)
    key = os.path.realpath(lock_path)
    counts = getattr(_held, "counts", None)
    if counts is None:
        counts = _held.counts = {}
    if counts.get(key):
        counts[key] += 1
        try:
            yield
        finally:
            counts[key] -= 1
        return
    flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | BINARY | (os.O_CREAT if create else 0)
    try:
        fd = os.open(lock_path, flags, 0o600)
    except (FileNotFoundError, NotADirectoryError) as exc:
        if create:
            raise disk_error(lock_path, exc) from exc
        yield  # no writer ever ran here: there is nothing to wait for
        return
    except OSError as exc:
        raise disk_error(lock_path, exc) from exc
    try:
        locking.acquire(fd)
        counts[key] = 1
        # under the lock no other writer is between its temp file and its rename
        sweep_temp_files(os.fspath(memory_dir))
        try:
            yield
        finally:
            counts[key] = 0
            locking.release(fd)
    finally:
        os.close(fd)


def read_utf8(path, limit: int | None = None) -> str:
    """Read a memory file as UTF-8, loudly: a file that is not UTF-8 is named, with the byte offset.
    `limit`: refuse a file over that many bytes, reading no more than one past it."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read() if limit is None else fh.read(limit + 1)
        if limit is not None and len(raw) > limit:
            raise InvalidInput(f"is over {limit:,} bytes, the limit for this file; nothing was read into memory",
                               path=str(path))
    except FileNotFoundError as exc:
        raise InvalidInput("file not found", path=str(path)) from exc
    except IsADirectoryError as exc:
        raise InvalidInput("is a folder, not a file; give the path of a file", path=str(path)) from exc
    except NotADirectoryError as exc:
        raise InvalidInput("file not found (a folder on its path is a file)", path=str(path)) from exc
    return decode_utf8(raw, path)


def decode_utf8(raw: bytes, path) -> str:
    """`read_utf8` for bytes already read: `\n` endings, no byte-order mark."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInput(
            f"not valid UTF-8 (byte {exc.start}); re-save the file as UTF-8", path=str(path), line=line
        ) from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


def seek_read(fd: int, length: int, offset: int) -> bytes:
    """`os.pread` for a platform without it (Windows): a seek and a read on the same descriptor."""
    os.lseek(fd, offset, os.SEEK_SET)
    chunks, left = [], length
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# the ledger reads events at known offsets; POSIX has pread, Windows only seek-and-read
read_at = getattr(os, "pread", None) or seek_read
