"""`serve`: the local, read-only web view; it prints its URL and serves until interrupted."""

from __future__ import annotations

import sys
import webbrowser

from ..web.server import make_server
from .output import echo, emit_json, open_memory


def serve(port, host, allow_remote, truth, open_, fmt, project_root, memory_dir):
    server = make_server(open_memory(project_root, memory_dir), host=host, port=port, truth=truth,
                         allow_remote=allow_remote)
    if fmt == "json":
        emit_json({"url": server.url, "host": server.server_address[0], "port": server.server_address[1]})
    else:
        echo(f"memory-custodian viewer (read-only) at {server.url} — Ctrl-C to stop")
    sys.stdout.flush()  # a script waiting for the URL gets it now, not when the server stops
    if open_:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.stderr.write("stopped\n")
    finally:
        server.server_close()
