"""Pages that refresh when memory changes, without a reload loop or a busy poll of the disk.

Each page carries the memory's change stamp as it was built and a small script (served from the viewer
itself, the only script the Content-Security-Policy allows) that opens one server-sent-events stream,
`/events?since=STAMP`. The stream's thread compares the stamp with the disk's every `check_seconds`
(a few dozen `stat` calls: the memory folder, its subfolders, each curated file and each ledger shard;
never a read), and sends one `change` event when it differs; the script then reloads the page once. The
viewer's own writes (the usage log, the index) are in `.cache/`, which the stamp leaves out, so a reload
never causes another. A stream ends after `STREAM_SECONDS` (the browser reconnects with the stamp it
has) and at shutdown, and at most `STREAMS` are open at once, so streams never take every handler.
"""

from __future__ import annotations

import hashlib
import os
import select
import socket
import threading
import time

STREAMS = 8
CHECK_SECONDS = 5.0
STREAM_SECONDS = 300.0
KEEPALIVE_SECONDS = 30.0
SUBFOLDERS = ("rules", "profiles", "areas", "archive", "ledger")

SCRIPT = """(function () {
  var me = document.currentScript;
  if (!me || !window.EventSource) { return; }
  var stream = new EventSource(me.dataset.events + "?since=" + encodeURIComponent(me.dataset.stamp));
  stream.addEventListener("change", function () { stream.close(); window.location.reload(); });
})();
"""


def stamp(memory_dir: str) -> str:
    """A short digest of what a change to memory moves: the mtimes and sizes of the folders and files."""
    parts = []
    for folder in ("", *SUBFOLDERS):
        path = os.path.join(memory_dir, folder) if folder else memory_dir
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or not entry.name.endswith((".md", ".jsonl", ".txt", ".json")):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            parts.append(f"{folder}/{entry.name}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


class Live:
    """The change signal of one viewer, and the streams that carry it."""

    def __init__(self, memory_dir: str):
        self.memory_dir = memory_dir
        self.check_seconds = CHECK_SECONDS
        self.stream_seconds = STREAM_SECONDS
        self.slots = threading.BoundedSemaphore(STREAMS)
        self.closing = threading.Event()
        self.opened = 0  # streams opened since start (a page whose script ran under the policy opens one)
        self._wake_r, self._wake_w = os.pipe()  # written once at shutdown: every stream's wait returns

    def close(self) -> None:
        if not self.closing.is_set():
            self.closing.set()
            os.write(self._wake_w, b"x")

    def release(self) -> None:
        """Close the wake-up pipe, once no stream can wait on it (after the handlers are joined)."""
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def wait(self, conn: socket.socket, seconds: float) -> bool:
        """Sleep up to `seconds` without polling: True when the client has gone (its socket reads as closed)
        or the viewer is shutting down."""
        ready, _, _ = select.select([conn.fileno(), self._wake_r], [], [], seconds)
        if self._wake_r in ready or self.closing.is_set():
            return True
        if conn.fileno() in ready:
            try:
                return conn.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True
        return False

    def stamp(self) -> str:
        return stamp(self.memory_dir)

    def stream(self, since: str, write, conn: socket.socket) -> None:
        """Send `change` once the stamp differs from `since` (at once if it already does); `write(bytes)`
        raises when the client has gone. Returns at the change, at the stream's end, when the client
        closes `conn`, or at shutdown."""
        self.opened += 1
        write(b"retry: 5000\n\n")
        deadline = time.monotonic() + self.stream_seconds
        quiet_since = time.monotonic()
        while not self.closing.is_set() and time.monotonic() < deadline:
            now = self.stamp()
            if since != now:
                write(f"id: {now}\nevent: change\ndata: {now}\n\n".encode())
                return
            if time.monotonic() - quiet_since >= KEEPALIVE_SECONDS:
                write(b": still watching\n\n")
                quiet_since = time.monotonic()
            if self.wait(conn, self.check_seconds):
                return
