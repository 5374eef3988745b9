"""The viewer's history pages over real HTTP and real git: files and their commits, activity, one search, a
session opened, the text along a supersession chain, tabs with content only, and the change stream."""

from __future__ import annotations

import os
import re
import socket
import time

import pytest
from history_project import IDENTITY, SECRET, build_history
from web_project import fetch, running, without_refresh

from memory_custodian import Memory


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    saved = {k: os.environ.get(k) for k in IDENTITY}
    os.environ.update(IDENTITY)
    root = tmp_path_factory.mktemp("history")
    try:
        ids = build_history(root)
        with running(root) as server:
            server.viewer.live.check_seconds = 0.05
            yield server, ids, root
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def page(server, path) -> str:
    status, _, body = fetch(server, path)
    assert status == 200, (path, body[-400:])
    assert SECRET not in body.lower(), f"forgotten text on {path}"
    assert "<script" not in without_refresh(body)
    return body


def test_the_files_page_and_a_file_through_its_commits(project):
    server, _, _ = project
    files = page(server, "/files")
    assert 'href="/file/decisions.md"' in files and "Loopback viewer; forget the signing key" in files
    body = page(server, "/file/decisions.md")
    assert body.index("Loopback viewer; forget the signing key") < body.index("Project memory for the key-value")
    assert "Serve the viewer on loopback only" in body and "change-added" in body
    assert "an entry forgotten since (its text is not shown)" in body  # the forgotten decision, in both commits
    assert "Entries now (" in body and 'href="#c-' in body
    constraints = page(server, "/file/constraints.md")
    assert "uncommitted change in the working tree" in constraints and "Keep one writer per shard" in constraints
    older = page(server, "/file/decisions.md?skip=1")
    assert "Project memory for the key-value" in older and "Loopback viewer; forget" not in older
    assert "\u2190 newer" in older and "no older commit" in older
    one = Memory.open(project[2]).file_history("decisions.md", limit=1)
    assert one.more and [c.commit is None for c in one.commits] == [False]  # decisions.md has no uncommitted change
    assert fetch(server, "/file/decisions.md?skip=x")[0] == 400
    assert fetch(server, "/file/ledger/2026-12.jsonl")[0] == 400
    assert fetch(server, "/file/../../etc/passwd.md")[0] == 400


def test_activity_by_day_with_filters(project):
    server, ids, _ = project
    body = page(server, "/activity")
    assert re.search(r"<h3 class=day>\d{4}-\d\d-\d\d</h3>", body)
    assert f'href="/note/{ids["newer"]}"' in body and "<b>supersede</b>" in body and "<b>commit</b>" in body
    assert f"#{ids['secret']} <span class=muted>(forgotten: its text is not shown)" in body
    directives = page(server, "/activity?kind=directive")
    assert f'href="/note/{ids["rule"]}"' in directives and ids["lock"] not in directives
    assert "<b>commit</b>" not in directives
    commits = page(server, "/activity?op=commit")
    assert "<b>commit</b>" in commits and "<b>create</b>" not in commits
    agent = page(server, "/activity?actor=agent")
    assert ids["stale"] in agent and ids["lock"] not in agent
    assert "nothing happened in this range" in page(server, "/activity?since=2999-01-01")
    status, _, bad = fetch(server, "/activity?since=yesterday")
    assert status == 400 and "is not a date" in bad


def test_one_search_over_both_tiers(project):
    server, ids, _ = project
    body = page(server, "/search?q=journal+append-only")
    assert "Curated entries (2)" in body and 'href="/file/decisions.md"' in body and 'href="/file/brief.md"' in body
    retry = page(server, "/search?q=retry+backoff")
    assert f'href="/note/{ids["newer"]}"' in retry and "Not shown:" in retry
    assert "One search over both tiers" in page(server, "/search")


def test_a_session_opens_to_what_it_injected_and_wrote(project):
    server, ids, _ = project
    stats = page(server, "/stats")
    assert 'href="/session/' in stats
    session = re.search(r'href="/session/([^"]+)"', stats).group(1)
    body = page(server, f"/session/{session}")
    assert "What it injected" in body and f'href="/note/{ids["rule"]}"' in body
    assert "SessionStart" in body and "UserPromptSubmit" in body
    assert fetch(server, "/session/nobody")[0] == 404


def test_the_note_page_shows_the_text_along_the_chain(project):
    server, ids, _ = project
    body = page(server, f"/note/{ids['new']}")
    assert "Text along the chain" in body
    assert '<span class="add">+Retries back off exponentially, capped at 90 s, with jitter.</span>' in body
    assert '<span class="del">-Retries back off linearly up to 30 s.</span>' in body


def test_tabs_only_where_they_have_content(project, tmp_path):
    server, _, _ = project
    nav = re.search(r"<nav>(.*?)</nav>", page(server, "/files")).group(1)
    assert "Recall misses" not in nav and "Adoption" in nav and "Activity" in nav and "Files" in nav
    bare = tmp_path / "bare"
    bare.mkdir()
    Memory.open(bare).init()
    with running(bare) as other:
        nav = re.search(r"<nav>(.*?)</nav>", fetch(other, "/")[2]).group(1)
        assert "Recall misses" not in nav and "Adoption" not in nav  # no truth set, no session logged
        assert "not a git repository" in fetch(other, "/activity")[2]


def _stream(server, since: str) -> socket.socket:
    address, port = server.server_address[:2]
    conn = socket.create_connection((address, port), timeout=5)
    conn.sendall(f"GET /events?since={since} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    return conn


def _read_until(conn: socket.socket, marker: bytes, seconds: float) -> bytes:
    got, end = b"", time.monotonic() + seconds
    conn.settimeout(0.1)
    while marker not in got and time.monotonic() < end:
        try:
            chunk = conn.recv(4096)
        except TimeoutError:
            continue
        if not chunk:
            break
        got += chunk
    return got


def test_a_page_hears_when_memory_changes_and_not_before(project):
    server, _, root = project
    stamp = re.search(r'data-stamp="([0-9a-f]{16})"', page(server, "/activity")).group(1)
    conn = _stream(server, stamp)
    try:
        quiet = _read_until(conn, b"event: change", 0.6)
        assert b"text/event-stream" in quiet and b"retry: 5000" in quiet and b"event: change" not in quiet
        page(server, "/ledger?q=retry")  # a page the viewer builds (it logs the read in .cache/) is no change
        assert b"event: change" not in _read_until(conn, b"event: change", 0.4)
        Memory.open(root).remember("The daemon restarts in under a second.", kind="finding")
        assert b"event: change" in _read_until(conn, b"event: change", 3)
    finally:
        conn.close()
    stale = _stream(server, stamp)  # the page's stamp is old now: told at once
    try:
        assert b"event: change" in _read_until(stale, b"event: change", 2)
    finally:
        stale.close()
    assert fetch(server, "/events?since=nonsense")[0] == 400
    status, headers, script = fetch(server, "/live.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript") and "EventSource" in script
