"""The next lines of a shard the index has not read, as many as one command may read, streamed.

A command reads at most `limits.INDEX_LINES_PER_COMMAND` lines and `limits.INDEX_BYTES_PER_COMMAND`
bytes of shards it has not indexed yet (`Index.catch_up`), so no input size makes a command wait:
a million-line shard merged in costs each command one step, not minutes. Memory holds one step,
never the file: the bytes already indexed are hashed as they stream past (a rewrite under them
means a rebuild), and of a line over `limits.SHARD_LINE_BYTES` only its first bytes are kept — the
reader skips it and names it as over-size, as every reader does.
"""

from __future__ import annotations

import hashlib
import os

from ...base.limits import SHARD_LINE_BYTES
from ..storage.store import whole_event

CHUNK = 1 << 20


class Span:
    """What one step read of a shard: `data` for `parse_lines` (whole lines, at the file's own offsets
    from where the step began; an over-size line cut to one byte past the limit, so it is still
    skipped as over-size, and only ever as a step's last line), the file offset it reached
    (`consumed`), its line count and the hash of the file's bytes up to there, and whether the
    shard was read to its end (`whole`)."""

    def __init__(self, data: bytes, consumed: int, lines: int, digest: str, whole: bool, size: int):
        self.data, self.consumed, self.lines, self.digest, self.whole = data, consumed, lines, digest, whole
        self.size = size  # the file's size as the step ended


def read_span(path: str, consumed: int, old_digest: str | None, max_lines: int | None,
              max_bytes: int | None) -> Span | None:
    """The lines of `path` after byte `consumed`, up to `max_lines` lines and about `max_bytes` bytes
    (None: no limit; a step always takes at least one line). None when the bytes before `consumed`
    are no longer the ones indexed (their hash is not `old_digest`), or when bytes were added to a
    last line that had no newline: not a pure append, so the caller rebuilds."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        left = consumed
        last = b""
        while left:
            block = fh.read(min(CHUNK, left))
            if not block:
                return None  # shorter than what was indexed
            digest.update(block)
            last = block[-1:]
            left -= len(block)
        if consumed and digest.hexdigest() != old_digest:
            return None
        head = fh.read(1)
        if consumed and last != b"\n" and head not in (b"", b"\n"):
            # the last event read had no newline and bytes were added to its very line: that line is
            # no longer the event indexed, so read it whole again
            return None
        return _read_lines(fh, head, digest, consumed, max_lines, max_bytes)


def _read_lines(fh, first: bytes, digest, consumed: int, max_lines: int | None, max_bytes: int | None) -> Span:
    out: list[bytes] = []
    kept = 0  # bytes of `out`
    lines = 0
    pending, pos = first + fh.read(CHUNK), 0  # the chunk being read, and how far
    line: list[bytes] = []  # the line being read: at most SHARD_LINE_BYTES + 1 of its bytes
    line_kept = 0
    line_bytes = 0  # its real length
    offset = consumed
    while True:
        if pos >= len(pending):
            pending, pos = fh.read(CHUNK), 0
            if not pending:
                break  # the end (a last line without its newline is decided below)
        nl = pending.find(b"\n", pos)
        end = len(pending) if nl < 0 else nl
        if line_kept <= SHARD_LINE_BYTES:
            part = pending[pos:min(end, pos + SHARD_LINE_BYTES + 1 - line_kept)]
            line.append(part)
            line_kept += len(part)
        line_bytes += end - pos
        pos = end
        if nl < 0:
            continue
        pos += 1
        # a whole line: the file advances by it and its newline
        _hash_line(digest, fh, offset, line_bytes + 1, line, line_kept)
        out.append(b"".join(line) + b"\n")
        kept += line_kept + 1
        offset += line_bytes + 1
        lines += 1
        cut = line_bytes > SHARD_LINE_BYTES  # a step ends after a line it cut: the offsets in `data` stay the file's
        line, line_kept, line_bytes = [], 0, 0
        if cut or (max_lines is not None and lines >= max_lines) or (max_bytes is not None and kept >= max_bytes):
            if pos >= len(pending):
                pending, pos = fh.read(1), 0
                fh.seek(-len(pending), 1)
            if pending:
                return Span(b"".join(out), offset, lines, digest.hexdigest(), False, os.fstat(fh.fileno()).st_size)
            break
    if line_bytes:
        tail = b"".join(line)
        if line_bytes > SHARD_LINE_BYTES:
            fh.seek(offset + line_bytes - 64)
            tail += fh.read(64)  # an over-size last line: `whole_event` decides on its end alone
        if whole_event(tail):
            _hash_line(digest, fh, offset, line_bytes, line, line_kept)
            out.append(b"".join(line) if line_bytes <= SHARD_LINE_BYTES else tail)
            offset += line_bytes  # a line, though not counted as one: `lines` counts newlines
        else:
            out.append(tail)  # torn: `parse_lines` reports it and does not consume it
    return Span(b"".join(out), offset, lines, digest.hexdigest(), True, os.fstat(fh.fileno()).st_size)


def _hash_line(digest, fh, offset: int, length: int, line: list[bytes], kept: int) -> None:
    """Hash the file's own bytes of a line (and its newline): the kept ones, or for an over-size line
    the file read again past what was kept, a chunk at a time (rare: only a line no v1 writer makes)."""
    if kept + 1 >= length:
        digest.update(b"".join(line) + (b"\n" if length > kept else b""))
        return
    here = fh.tell()
    fh.seek(offset)
    left = length
    while left:
        block = fh.read(min(CHUNK, left))
        digest.update(block)
        left -= len(block)
    fh.seek(here)
