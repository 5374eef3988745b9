"""The viewer over real HTTP: every page, hostile note texts escaped, the Host check, the token, 404s."""

from __future__ import annotations

import pytest
from conftest import run_cli
from web_project import ATTRIBUTE, BIDI, SCRIPT, build_project, fetch, running, without_refresh

from memory_custodian import Memory
from memory_custodian.base.errors import InvalidInput, Refused
from memory_custodian.web.server import make_server


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("viewer")
    ids = build_project(root)
    with running(root, truth=ids["truth"]) as server:
        yield server, ids


def pages(ids):
    return {"/": "What loaded and what did not", "/pack?task=implementation&path=src/daemon/x.py&q=lock":
            "Workspace lock released", "/ledger": "notes match, newest first",
            "/ledger?q=retry+backoff": "Not shown:", f"/note/{ids['new']}": "Supersession chain",
            "/eval": "Misses by stage", "/doctor": "every shard verified",
            "/stats": "Sessions, newest first"}


def test_every_page_answers_with_its_content(project):
    server, ids = project
    for path, expected in pages(ids).items():
        status, headers, body = fetch(server, path)
        assert status == 200, (path, body[-500:])
        assert expected in body, path
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        # the one script allowed is the viewer's own refresh, from itself: no inline script, nothing from elsewhere
        assert "script-src 'self';" in headers["Content-Security-Policy"]
        assert "unsafe-inline" not in headers["Content-Security-Policy"]
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert headers["X-Frame-Options"] == "DENY" and headers["Referrer-Policy"] == "no-referrer"
    status, headers, css = fetch(server, "/style.css")
    assert status == 200 and headers["Content-Type"].startswith("text/css") and "body" in css


def test_the_pack_draws_what_loaded_and_each_budget(project):
    server, _ = project
    _, _, body = fetch(server, "/pack?task=implementation&q=lock")
    assert "decisions.md" in body and "<meter" in body and "tokens" in body
    assert "ledger:directives" in body or "directives" in body
    assert "Never edit a ledger shard by hand" in body


def test_the_note_page_shows_the_timeline_the_chain_and_the_frame(project):
    server, ids = project
    _, _, body = fetch(server, f"/note/{ids['old']}")
    assert "WARNING: superseded" in body
    assert body.index(f"#{ids['old']}") < body.index(f'href="/note/{ids["new"]}"')
    assert "<b>create</b>" in body and "<b>supersede</b>" in body and "linear backoff stormed the gateway" in body
    _, _, stale = fetch(server, f"/note/{ids['stale']}")
    assert "memory to verify, recorded by an AI session" in stale and "<b>flag_stale</b>" in stale
    _, _, prefix = fetch(server, f"/note/{ids['stale'][:5]}")
    assert "CI caches wheels" in prefix


def test_ledger_filters_and_search(project):
    server, ids = project
    _, _, superseded = fetch(server, "/ledger?state=superseded")
    assert "1 note matches" in superseded and ids["old"] in superseded and ids["new"] not in superseded
    _, _, agent = fetch(server, "/ledger?provenance=agent")
    assert ids["stale"] in agent and ids["lock"] not in agent
    _, _, tagged = fetch(server, "/ledger?tag=lock")
    assert ids["lock"] in tagged and ids["rule"] not in tagged
    _, _, searched = fetch(server, "/ledger?q=port+runners")
    assert "1 excluded (1 revoked)" in searched  # the recall footer: nothing hidden silently
    _, _, both = fetch(server, "/ledger?q=lock&provenance=agent")
    assert "Recall never filters by provenance" in both
    status, _, bad = fetch(server, "/ledger?kind=nonsense")
    assert status == 400 and "the \u201ckind\u201d field" in bad
    for page in ("0", "x", "99999999999999999999", "20001"):
        status, _, bad = fetch(server, f"/ledger?page={page}")
        assert status == 400 and "the \u201cpage\u201d field must be a whole number" in bad, page
    assert "page 2 of 1" in fetch(server, "/ledger?page=2")[2]  # past the end: an empty page, said so


def test_hostile_note_texts_are_shown_as_text(project):
    server, ids = project
    paths = ["/ledger", "/ledger?q=title+attr+bidi", "/ledger?tag=hostile", f"/note/{ids['script']}",
             f"/note/{ids['attribute']}", f"/note/{ids['bidi']}"]
    for path in paths:
        _, _, body = fetch(server, path)
        body = without_refresh(body)
        assert "<script" not in body.lower() and "<img" not in body.lower(), path
        assert SCRIPT not in body and ATTRIBUTE not in body and "\u202e" not in body, path
    _, _, body = fetch(server, f"/note/{ids['script']}")
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in body
    _, _, body = fetch(server, f"/note/{ids['attribute']}")
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt; &#x27; onmouseover=&#x27;alert(2)" in body
    _, _, body = fetch(server, f"/note/{ids['bidi']}")
    assert BIDI.replace("\u202e", "\\u202e") in body
    _, _, pack = fetch(server, f"/pack?q={SCRIPT}")
    assert "<script" not in without_refresh(pack).lower()


def test_a_non_loopback_host_header_is_refused(project):
    server, _ = project
    port = server.server_address[1]
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}", f"127.0.0.1:{port + 1}",
                 ""):
        status, _, body = fetch(server, "/ledger", host=host)
        assert status == 403 and "Host" in body, host
    for host in (f"localhost:{port}", f"[::1]:{port}", "127.0.0.1"):
        assert fetch(server, "/ledger", host=host)[0] == 200, host


def test_unknown_pages_and_notes_are_404_and_writes_405(project):
    server, _ = project
    for path in ("/nope", "/note/zzzzzzzz", "/note/a/b", "/ledger/x", "/style.css/x"):
        status, _, body = fetch(server, path)
        assert status == 404, path
    status, _, body = fetch(server, "/pack?task=bogus")
    assert status == 400 and "unknown task" in body
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        status, headers, body = fetch(server, "/ledger", method=method)
        assert status == 405 and headers["Allow"] == "GET, HEAD" and "read-only" in body


def test_beyond_loopback_needs_the_flag_and_then_a_token(tmp_path):
    Memory.open(tmp_path).init()
    with pytest.raises(Refused, match="allow_remote"):
        make_server(Memory.open(tmp_path), host="0.0.0.0", port=0)
    with running(tmp_path, host="0.0.0.0", allow_remote=True) as server:
        base = server.viewer.base
        assert base.startswith("/t/") and len(base) > 20 and server.url.endswith(base + "/")
        assert fetch(server, "/ledger")[0] == 403
        assert fetch(server, "/t/wrong-token/ledger")[0] == 403
        status, _, body = fetch(server, base + "/ledger", host="192.0.2.7:1")
        assert status == 200 and f'href="{base}/note/' not in body and f'href="{base}/ledger' in body


def test_the_command_refuses_a_public_address_without_the_flag(tmp_path):
    Memory.open(tmp_path).init()
    proc = run_cli("serve", "--host", "0.0.0.0", "--project-root", str(tmp_path))
    assert proc.returncode == 1 and "--allow-remote" in proc.stderr, proc.stderr


def test_a_bad_truth_file_is_refused_before_serving(tmp_path):
    Memory.open(tmp_path).init()
    bad = tmp_path / "truth.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(InvalidInput):
        make_server(Memory.open(tmp_path), port=0, truth=str(bad))


def test_browse_pages_through_every_note_newest_first(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    made = [memory.remember(f"note {i}", kind="task" if i % 2 else "finding").id for i in range(7)]
    first = memory.browse(limit=3)
    assert first.total == 7 and [n.id for n, _ in first.notes] == made[::-1][:3]
    rest = memory.browse(limit=3, offset=3).notes + memory.browse(limit=3, offset=6).notes
    assert [n.id for n, _ in first.notes + rest] == made[::-1]
    assert memory.browse(kinds=["task"]).total == 3
    with pytest.raises(InvalidInput):
        memory.browse(states=["forgotten"])
    with pytest.raises(InvalidInput):
        memory.browse(limit=0)


def test_the_stats_page_draws_the_adoption_report(project):
    server, _ = project
    _, _, body = fetch(server, "/stats")
    assert "1 session(s) logged" in body and "s-viewer-1" in body and "SessionStart" in body and "<svg" in body


def test_the_doctor_page_lists_what_doctor_finds(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    memory.remember("a note")
    shard = next((tmp_path / "docs" / "memory" / "ledger").glob("*.jsonl"))
    with shard.open("a") as f:
        f.write('{"v":1,"id":"01JD')  # a torn last line, as a killed writer leaves it
    with running(tmp_path) as server:
        status, _, body = fetch(server, "/doctor")
    assert status == 200 and "problems" in body and "doctor --repair" in body and "torn" in body.lower()
    assert "The rest of the setup" in body and "curated files" in body and ">FAIL<" in body  # the template brief


def test_a_note_written_while_serving_shows_on_the_next_request(tmp_path):
    Memory.open(tmp_path).init()
    with running(tmp_path) as server:
        assert "0 notes match" in fetch(server, "/ledger")[2]
        note = Memory.open(tmp_path).remember("written by another process meanwhile", title="Late note")
        _, _, body = fetch(server, "/ledger")
        assert "1 note matches" in body and "Late note" in body
        status, headers, head = fetch(server, f"/note/{note.id}", method="HEAD")
        assert status == 200 and head == "" and int(headers["Content-Length"]) > 0
