"""Folding a rebuild's notes into index rows (`fold_chunk`), here or in worker processes that each
fold chunks of notes from the shards and send their rows back; see `rebuild._folding`.

The protocol is length-prefixed pickles over the worker's stdin and stdout, between a parent and
children running this same code: first the shards to open (name, device, inode), then chunks in,
rows or an error out. Each worker holds one chunk at a time; the parent hands a worker its next
chunk as soon as it has read its rows, so the workers fold while the parent inserts.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import signal
import struct
import subprocess
import sys

from ...base.errors import Refused
from ...base.fsutil import BINARY, read_at
from ..storage.fold import fold_note_events
from .index_rows import note_row_parts

_HEADER = struct.Struct("<Q")
_EOF = object()  # what `_recv` gives when the other side has gone


def _send(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _to_worker(proc: subprocess.Popen, obj) -> None:
    try:
        _send(proc.stdin, obj)
    except BrokenPipeError:
        raise _failed(f"a rebuild worker stopped (exit code {proc.wait()})") from None


def _recv(stream):
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return _EOF
    (size,) = _HEADER.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return _EOF
    return pickle.loads(data)


def _failed(why: str):
    return Refused(f"the index rebuild failed: {why}; nothing in the ledger was changed — run `reindex` again")


@contextlib.contextmanager
def _ctrl_c_blocked():
    """SIGINT blocked in this thread while a worker is started: the child inherits the mask, so a
    Ctrl-C during its interpreter's start-up (before `main` ignores it) stays pending, not a second
    traceback. The parent's own Ctrl-C is delivered when the mask is restored."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no POSIX signal masks
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Workers:
    """`n` worker processes folding chunks for one rebuild."""

    def __init__(self, n: int, shards: list[tuple]):
        package_parent = os.path.abspath(__file__).rsplit(os.sep + "memory_custodian" + os.sep, 1)[0]
        code = (f"import sys; sys.path.insert(0, {package_parent!r}); "
                "from memory_custodian.ledger.index.rebuild_worker import main; main()")
        self.procs: list[subprocess.Popen] = []
        try:
            for _ in range(n):
                # -I: no current directory on the path (a stray json.py there must not shadow
                # the standard library) and no PYTHON* variables; the package path is given above
                with _ctrl_c_blocked():  # listed before the mask lifts: a Ctrl-C then still kills it in close()
                    self.procs.append(subprocess.Popen([sys.executable, "-I", "-c", code], stdin=subprocess.PIPE,
                                                       stdout=subprocess.PIPE))
                _to_worker(self.procs[-1], shards)
        except BaseException:
            self.close()
            raise

    def map_in_order(self, chunks):
        """Each chunk's rows, in the order of `chunks`."""
        procs, n = self.procs, len(self.procs)
        for k in range(min(n, len(chunks))):
            _to_worker(procs[k], chunks[k])
        for k in range(len(chunks)):
            proc = procs[k % n]
            got = _recv(proc.stdout)
            if got is _EOF:
                raise _failed(f"a rebuild worker stopped (exit code {proc.wait()})")
            if isinstance(got, tuple) and got[:1] == ("error",):
                raise _failed(got[1])
            if k + n < len(chunks):
                _to_worker(proc, chunks[k + n])  # it folds the next chunk while the rows here are inserted
            yield got

    def close(self, failed: bool = True) -> None:
        """End the workers: a worker between chunks exits at EOF; after a failure here the rows
        still being folded are not wanted, so every worker is killed."""
        for proc in self.procs:
            if failed:
                proc.kill()
            if proc.stdin:
                try:
                    proc.stdin.close()
                except BrokenPipeError:  # a killed worker's pipe: nothing is left to flush
                    pass
        for proc in self.procs:
            proc.wait()
            if proc.stdout:
                proc.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(failed=exc_type is not None)


def fold_chunk(chunk, files: list[int]) -> list[tuple]:
    """The rows of each note in `chunk` (its events' places in the shards) that folds to a note."""
    out = []
    for places in chunk:
        note, _ = fold_note_events([json.loads(read_at(files[shard], length, off)) for shard, off, length in places])
        if note is not None:
            out.append(note_row_parts(note))
    return out


def main() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers itself (one message
    # from it, not a traceback from each worker as well)
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout is the protocol: a stray print must not land in it
    files: list[int] = []
    shards = _recv(inp)
    if shards is _EOF:
        return
    try:
        for path, dev, ino in shards:
            fd = os.open(path, os.O_RDONLY | BINARY)
            files.append(fd)
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (dev, ino):
                raise OSError(f"{path} was replaced while the index was being rebuilt")
        while True:
            chunk = _recv(inp)
            if chunk is _EOF:
                return
            _send(out, fold_chunk(chunk, files))
    except Exception as exc:  # reported to the parent, which raises it: never lost
        _send(out, ("error", str(exc) if isinstance(exc, OSError) and exc.errno is None else
                    f"{type(exc).__name__}: {exc}"))
