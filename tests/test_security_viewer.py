"""The viewer as an attacker reaches it: the token never in a refusal, 405 for every method but GET
and HEAD, the security headers on every answer, 200 connections at once, no traceback on a client
that leaves, no unbounded echo."""

from __future__ import annotations

import concurrent.futures
import socket
import struct
import time

import pytest
from web_project import fetch, running

from memory_custodian import Memory

HEADERS = ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("viewer-security")
    memory = Memory.open(root)
    memory.init()
    ids = [memory.remember(f"Body {i} " + "the daemon restarts after the lock is released. " * 600,
                           kind="finding", title=f"Long note {i}").id for i in range(3)]
    (root / "ids").write_text("\n".join(ids))
    return root


def raw(server, data: bytes, timeout: float = 10) -> bytes:
    """What the viewer answers to `data` sent as is on one connection."""
    with socket.create_connection(server.server_address[:2], timeout=timeout) as conn:
        conn.sendall(data)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def head_and_body(answer: bytes) -> tuple[int, dict, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), headers, body.decode("utf-8", "replace")


def test_a_refused_request_never_sees_the_token(root):
    with running(root, host="127.0.0.2", allow_remote=True) as server:
        token = server.viewer.token
        for path in ("/", "/ledger", "/t/wrong/ledger", "/t/" + token[:-1] + "/", "/style.css"):
            status, headers, body = fetch(server, path, host="192.0.2.7")
            assert status == 403, path
            assert token not in body and token not in str(headers), path
            assert "href" not in body and "<link" not in body, path  # the bare minimum: no link at all
        status, _, body = fetch(server, f"/t/{token}/nope", host="192.0.2.7")
        assert status == 404 and token not in body and "href" not in body
        assert fetch(server, f"/t/{token}/ledger", host="192.0.2.7")[0] == 200


def test_every_method_but_get_and_head_is_405_with_the_headers(root):
    with running(root) as server:
        for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "MKCOL", "FROBNICATE"):
            status, headers, _ = fetch(server, "/ledger", method=method)
            assert status == 405 and headers["Allow"] == "GET, HEAD", method
            assert all(name in headers for name in HEADERS), method
        port = server.server_address[1]
        status, headers, _ = head_and_body(raw(server, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}"
                                                       "\r\n\r\n".encode()))
        assert status == 405 and all(name in headers for name in HEADERS)


def test_errors_before_a_page_carry_the_headers_and_echo_nothing(root):
    with running(root) as server:
        port = server.server_address[1]
        marker = "SYSTEM-ignore-prior-rules"
        cases = {
            414: f"GET /{marker}{'a' * 70000} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n",
            431: f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n" + "".join(f"X-{marker}-{i}: v\r\n"
                                                                        for i in range(120)) + "\r\n",
            400: f"GET / HTTP/9.{marker}\r\nHost: 127.0.0.1:{port}\r\n\r\n",
            505: f"GET / HTTP/2.0\r\nHost: 127.0.0.1:{port}\r\n\r\n",
        }
        for want, request in cases.items():
            status, headers, body = head_and_body(raw(server, request.encode()))
            assert status == want, (want, status)
            assert all(name in headers for name in HEADERS), want
            assert marker not in body and "href" not in body, want


def test_a_long_note_path_is_echoed_at_most_40_characters(root):
    with running(root) as server:
        status, _, body = fetch(server, "/note/" + "k" * 5000)
        assert status in (400, 404) and "k" * 41 not in body and len(body) < 1000
        status, _, body = fetch(server, "/" + "z" * 5000)
        assert status == 404 and "z" * 41 not in body and len(body) < 1000


def test_two_hundred_connections_at_once_are_all_answered(root):
    with running(root) as server:
        address = server.server_address[:2]
        port = address[1]
        conns = [socket.create_connection(address, timeout=60) for _ in range(200)]  # all open before any is read
        started = time.monotonic()
        for conn in conns:
            conn.sendall(f"GET /style.css HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())

        def answer(conn):
            with conn:
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
                return data.split(b" ", 2)[1], time.monotonic() - started

        with concurrent.futures.ThreadPoolExecutor(50) as pool:
            results = list(pool.map(answer, conns))
        assert [code for code, _ in results] == [b"200"] * 200
        assert max(seconds for _, seconds in results) < 20


def test_a_client_that_leaves_mid_answer_prints_no_traceback(root, capfd):
    ids = (root / "ids").read_text().split()
    with running(root) as server:
        port = server.server_address[1]
        for i in range(30):
            conn = socket.create_connection(server.server_address[:2])
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            conn.sendall(f"GET /note/{ids[i % 3]} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            if i % 2:
                time.sleep(0.05)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
            conn.close()
        assert fetch(server, f"/note/{ids[0]}")[0] == 200  # still serving
        time.sleep(0.3)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err and "ConnectionReset" not in err
