"""A project for the viewer's tests: real notes in every state, a supersession chain, hostile texts, a
truth set; and a viewer serving it on a free port in a thread."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import threading

from conftest import run_cli

from memory_custodian import Memory
from memory_custodian.web.server import make_server

SCRIPT = "<script>alert('pwned')</script>"
ATTRIBUTE = "\"><img src=x onerror=alert(1)> ' onmouseover='alert(2)"
BIDI = "safe\u202etxt.exe"
DECISIONS = ("SQLite WAL", "one writer lock", "ULID event ids", "UTC timestamps", "JSON lines", "monthly shards",
             "FTS5 ranking", "atomic renames", "flock locking", "union merges", "export mirrors", "typed records")


def build_project(root) -> dict:
    """The memory of a small service, with three hostile notes; returns the note ids by role."""
    memory = Memory.open(root)
    memory.init()
    (root / "docs" / "memory" / "brief.md").write_text(
        "# Project Brief\n\nA small key-value service: an append-only journal, a daemon, a retrying client.\n")
    memory.add("Keep the store's journal append-only", "decision", reasons=["crash safety comes first"])
    for topic in DECISIONS:  # enough that the decisions file runs over its budget and the pack says what it left
        memory.add(f"Use {topic} for the service and keep the choice documented in its module, with the "
                   "measurement that chose it and the alternative it was weighed against", "decision",
                   reasons=[f"{topic} was measured against the alternatives on the production workload"])
    ids = {}
    ids["rule"] = memory.remember("Never edit a ledger shard by hand; use edit.", kind="directive", priority="high",
                                  title="Never edit a ledger shard by hand", tags=("ledger",)).id
    ids["lock"] = memory.remember("The workspace lock is released before the daemon restarts; wait for it.",
                                  kind="gotcha", priority="high", title="Workspace lock released before restart",
                                  tags=("daemon", "lock"), paths=("src/daemon/**",)).id
    ids["old"] = memory.remember("Retries back off linearly up to 30 s.", kind="decision",
                                 title="Retry backoff is linear", tags=("net",)).id
    ids["new"] = memory.supersede(ids["old"], "Retries back off exponentially, capped at 60 s.",
                                  reason="linear backoff stormed the gateway", title="Retry backoff is exponential"
                                  ).id
    ids["stale"] = memory.remember("CI caches the wheel folder between runs.", kind="finding", actor="agent",
                                   title="CI caches wheels").id
    memory.flag_stale(ids["stale"], reason="the CI image changed")
    ids["revoked"] = memory.remember("Port 8080 is free on the runners.", kind="finding",
                                     title="Port 8080 is free").id
    memory.revoke(ids["revoked"], reason="it is taken by the proxy")
    ids["script"] = memory.remember(f"Body {SCRIPT} end.", kind="finding", title=f"Title {SCRIPT}",
                                    tags=("hostile",)).id
    ids["attribute"] = memory.remember(f"Body {ATTRIBUTE}", kind="gotcha", title=f"Attr {ATTRIBUTE}",
                                       paths=("src/a.py",)).id
    ids["bidi"] = memory.remember(f"Open {BIDI} to check.", kind="finding", title=f"Bidi {BIDI}").id
    for event, extra in (("SessionStart", {}), ("UserPromptSubmit", {"prompt": "why does the daemon restart hang?"})):
        payload = {"session_id": "s-viewer-1", "cwd": str(root), "hook_event_name": event, **extra}
        assert run_cli("hook", event, cwd=root, input=json.dumps(payload)).returncode == 0  # the usage log `stats` reads
    truth = root / "truth.jsonl"
    truth.write_text("\n".join(json.dumps(row) for row in (
        {"query": "workspace lock daemon restart", "relevant": [ids["lock"]]},
        {"query": "retry backoff", "relevant": [ids["new"]]},
        {"query": "proxy port runners", "relevant": [ids["revoked"]]},
        {"query": "wheel cache", "relevant": [ids["stale"]]},
        {"query": "kubernetes helm chart", "relevant": [ids["rule"]]},
    )) + "\n")
    ids["truth"] = str(truth)
    return ids


@contextlib.contextmanager
def running(root, **options):
    """A viewer of the project at `root` on a free loopback port, served by a thread, stopped after."""
    server = make_server(Memory.open(root), port=0, quiet=True, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def fetch(server, path, *, host=None, method="GET"):
    """(status, headers, body text) of one real HTTP request to the viewer."""
    address, port = server.server_address[:2]
    conn = http.client.HTTPConnection(address, port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        conn.endheaders()
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode("utf-8")
    finally:
        conn.close()


REFRESH = re.compile(r'<script src="(?:/t/[\w-]+)?/live\.js" data-events="(?:/t/[\w-]+)?/events" '
                     r'data-stamp="[0-9a-f]{16}" defer></script>')


def without_refresh(body: str) -> str:
    """A page without the one script the viewer puts in it (its refresh): what is left must hold no script."""
    assert len(REFRESH.findall(body)) <= 1
    return REFRESH.sub("", body)
