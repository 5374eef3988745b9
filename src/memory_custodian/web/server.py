"""The viewer's HTTP server: loopback by default, read-only, and refusing what a page must not get.

Safe by default: it binds 127.0.0.1; a request whose `Host` header is not a loopback name is
refused (a web page elsewhere cannot reach it by DNS rebinding); only GET and HEAD are answered;
every response forbids scripts, framing and outside resources. Serving beyond loopback takes an
explicit `allow_remote`, and then every URL must carry a random token.

Requests are read by one thread each (so an idle browser connection blocks nobody), and every page
is built on one worker thread that owns the `Memory`: its SQLite connection stays on one thread.
The reading threads are a bounded pool (`HANDLERS`) behind a real listen backlog (`BACKLOG`), so a
burst of connections waits its turn instead of being dropped, and a flood cannot spawn threads
without end.

Every answer that is not a page (a refusal, an error, an unsupported method, a request too long)
is the bare minimum: a status line, one sentence and no link, so it never carries the token of an
`allow_remote` viewer to someone who was refused, and it carries the same security headers as a page.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import socket
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from ..base.errors import CustodianError, InvalidInput, NotFound, Refused
from ..base.textsafe import shown
from ..session.usage_log import store_path
from . import history_pages, pages, reports
from .html import CONTEXT, STYLE, WEB_TERMS, esc
from .live import SCRIPT, Live

LOOPBACK = ("127.0.0.1", "localhost", "::1")
SECURITY_HEADERS = {
    # the one script is the viewer's own refresh (`live.SCRIPT`, served from /live.js): no inline script runs
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
                               "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}
READ_TIMEOUT = 15  # seconds a connection may take to send its request
BACKLOG = 512  # connections the kernel holds while every handler is busy (socketserver's default is 5)
HANDLERS = 32  # threads reading requests; more connections wait in the backlog, not in new threads
ALLOWED = "GET, HEAD"


class Page(Exception):
    """A response other than a page: `status` and the text shown."""

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status, self.text = status, text


class Viewer:
    """What the handler needs: the memory, the truth set, the URL prefix (the token's) and the Host names allowed."""

    def __init__(self, memory, *, truth=None, token=None, port=0):
        self.memory, self.truth, self.token = memory, truth, token
        self.base = f"/t/{token}" if token else ""
        self.port = port
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-custodian-viewer")
        self.live = Live(memory.memory_dir_str)

    def host_allowed(self, host: str | None) -> bool:
        if self.token:  # beyond loopback the token is the guard: any Host may carry it
            return True
        if not host:
            return False
        name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        if not name:
            name, port = host, ""
        if port and port != str(self.port):
            return False
        return name.strip("[]").lower() in LOOPBACK

    def route(self, target: str) -> tuple[str, str]:
        """(content type, body) for a request target, or raises `Page`."""
        path, params = self.target(target)
        if path == "/style.css":
            return "text/css; charset=utf-8", STYLE
        if path == "/live.js":
            return "text/javascript; charset=utf-8", SCRIPT
        return "text/html; charset=utf-8", self.worker.submit(self._built, path, params).result()

    def target(self, target: str) -> tuple[str, dict]:
        """The path inside the viewer (the token checked and cut) and the query's parameters."""
        parts = urlsplit(target)
        path = unquote(parts.path)
        if self.base:
            if not hmac.compare_digest(path[:len(self.base)].encode(), self.base.encode()):
                raise Page(403, "this viewer needs the URL with its token, as `serve` printed it")
            path = path[len(self.base):] or "/"
        return path, parse_qs(parts.query, keep_blank_values=False)

    def _built(self, path: str, params: dict) -> str:
        """A page built with what the layout needs to know: the tabs that have content, the change stamp."""
        tabs = {"pack", "ledger", "files", "activity", "search", "doctor"}
        if self.truth is not None:
            tabs.add("eval")
        if os.path.isfile(store_path(self.memory.memory_dir_str, create=False)):
            tabs.add("stats")
        CONTEXT.tabs, CONTEXT.stamp = frozenset(tabs), self.live.stamp()
        try:
            return self._page(path, params)
        finally:
            CONTEXT.tabs = CONTEXT.stamp = None

    def _page(self, path: str, params: dict) -> str:
        memory, base = self.memory, self.base
        if path in ("/", "/pack"):
            return pages.pack_page(memory, params, base)
        if path == "/ledger":
            return pages.ledger_page(memory, params, base)
        if path.startswith("/note/") and path.count("/") == 2:
            return pages.note_page(memory, path[len("/note/"):], base)
        if path == "/eval":
            return reports.eval_page(memory, self.truth, base)
        if path == "/doctor":
            return reports.doctor_page(memory, base)
        if path == "/stats":
            return reports.stats_page(memory, base)
        if path == "/files":
            return history_pages.files_page(memory, base)
        if path.startswith("/file/"):
            return history_pages.file_page(memory, history_pages.check_name(path, "/file/"), params, base)
        if path == "/activity":
            return history_pages.activity_page(memory, params, base)
        if path == "/search":
            return history_pages.search_page(memory, params, base)
        if path.startswith("/session/") and path.count("/") == 2:
            return history_pages.session_page(memory, path[len("/session/"):], base)
        raise Page(404, f"no page at {shown(path)}")


class Handler(BaseHTTPRequestHandler):
    timeout = READ_TIMEOUT
    server: ViewerServer  # the one server that makes these handlers

    def version_string(self):
        return "memory-custodian"

    def do_GET(self):
        self._answer(body=True)

    def do_HEAD(self):
        self._answer(body=False)

    def __getattr__(self, name: str):
        # every method but GET and HEAD (POST, TRACE, CONNECT, PROPFIND, an invented one) is 405, as
        # documented; the standard handler would answer an unknown one 501
        if name.startswith("do_"):
            return self._refuse_method
        raise AttributeError(name)

    def _refuse_method(self):
        self._send(405, "text/html; charset=utf-8", bare_page(405, "the viewer is read-only: change memory "
                   "with the command line, the MCP server or `edit`"), extra={"Allow": ALLOWED})

    def _answer(self, body: bool):
        viewer = self.server.viewer
        if not viewer.host_allowed(self.headers.get("Host")):
            self._send(403, "text/plain; charset=utf-8", "refused: the Host header is not a loopback name\n", body)
            return
        if body and urlsplit(self.path).path.endswith("/events"):
            try:
                path, params = viewer.target(self.path)
            except Page as page:
                self._send(page.status, "text/html; charset=utf-8", bare_page(page.status, page.text))
                return
            if path == "/events":
                self._stream(params)
                return
        try:
            ctype, text = viewer.route(self.path)
            status = 200
        except Page as page:
            status, ctype, text = page.status, "text/html; charset=utf-8", bare_page(page.status, page.text)
        except CustodianError as exc:
            status = 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, InvalidInput) else 500
            ctype, text = "text/html; charset=utf-8", bare_page(status, exc.one_line(WEB_TERMS))
            if status == 500:
                sys.stderr.write(f"memory-custodian serve: {exc.one_line(WEB_TERMS)}\n")
        except Exception as exc:  # a bug: the page says so and the traceback goes to the console
            traceback.print_exc()
            status, ctype = 500, "text/html; charset=utf-8"
            text = bare_page(500, f"internal error ({type(exc).__name__}): see the console running `serve`")
        self._send(status, ctype, text, body)

    def _stream(self, params: dict):
        """The change signal as server-sent events (`live.Live.stream`), on this request's own thread."""
        live = self.server.viewer.live
        since = (params.get("since") or [""])[-1]
        if len(since) != 16 or any(c not in "0123456789abcdef" for c in since):
            self._send(400, "text/html; charset=utf-8", bare_page(400, "since must be the stamp a page carries"))
            return
        if not live.slots.acquire(blocking=False):
            self._send(503, "text/html; charset=utf-8", bare_page(503, "too many pages are watching for changes"),
                       extra={"Retry-After": "30"})
            return
        self.close_connection = True
        try:
            self.send_response(200)
            for name, value in {**SECURITY_HEADERS, "Content-Type": "text/event-stream; charset=utf-8",
                                "Connection": "close"}.items():
                self.send_header(name, value)
            self.end_headers()

            def write(data: bytes) -> None:
                self.wfile.write(data)
                self.wfile.flush()

            live.stream(since, write, self.connection)
        except (ConnectionError, TimeoutError):
            pass  # the page went away: the stream ends with it
        finally:
            live.slots.release()

    def send_error(self, code, message=None, explain=None):
        # the standard error page (400, 414, 431, 505, ...) echoes the request and has no security
        # headers; ours says the status only, with the headers every answer carries
        self.close_connection = True
        body = self.command != "HEAD" and code >= 200 and code not in (204, 304)
        self._send(code, "text/html; charset=utf-8", bare_page(code, ""), body, extra={"Connection": "close"})

    def _send(self, status: int, ctype: str, text: str, body: bool = True, extra=None):
        data = text.encode("utf-8")
        if self.request_version == "HTTP/0.9":  # unparsed or 0.9: still a status line and the headers
            self.request_version = "HTTP/1.0"
        try:
            self.send_response(status)
            for name, value in {**SECURITY_HEADERS, "Content-Type": ctype, "Content-Length": str(len(data)),
                                **(extra or {})}.items():
                self.send_header(name, value)
            self.end_headers()
            if body:
                self.wfile.write(data)
        except (ConnectionError, TimeoutError):  # the client left mid-answer: nothing to tell anyone
            self.close_connection = True

    def log_message(self, format, *args):
        if self.server.quiet:
            return
        super().log_message(format, *args)


def bare_page(status: int, text: str) -> str:
    """A page that is not memory: the status and one sentence, no link, no style sheet, no token."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    said = f"<p>{esc(text)}</p>" if text else ""
    return (f"<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>{status} {esc(phrase)}</title>"
            f"</head><body><h1>{status} {esc(phrase)}</h1>{said}</body></html>\n")


class ViewerServer(HTTPServer):
    request_queue_size = BACKLOG

    def __init__(self, address, viewer: Viewer, quiet: bool):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.viewer, self.quiet = viewer, quiet
        self.handlers = ThreadPoolExecutor(max_workers=HANDLERS, thread_name_prefix="memory-custodian-request")
        self.slots = threading.BoundedSemaphore(HANDLERS)
        super().__init__(address, Handler)
        viewer.port = self.server_address[1]

    def process_request(self, request, client_address):
        # the accepting loop waits for a free handler, so what cannot be served yet stays in the
        # kernel's backlog (bounded by BACKLOG) rather than in threads or memory
        while not self.slots.acquire(timeout=0.5):
            if getattr(self, "_BaseServer__shutdown_request", False):
                self.shutdown_request(request)
                return
        self.handlers.submit(self._handle, request, client_address)

    def _handle(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self.slots.release()

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # a client that went away mid-request is not an error of the viewer
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        host = self.server_address[0]
        host = host.decode() if isinstance(host, bytes) else host  # typed for any socket family; an IP one's is text
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.server_address[1]}{self.viewer.base}/"

    def server_close(self):
        self.viewer.live.close()  # open change streams end now, so their handlers can be joined
        super().server_close()
        self.handlers.shutdown(wait=True)
        self.viewer.worker.shutdown(wait=True)
        self.viewer.live.release()


def _warm_up(memory) -> None:
    """Begin the background read for fast recall; a fault is left for the first page, which shows it."""
    with contextlib.suppress(Exception):  # the first page meets the same fault and says so
        memory.warm()


def make_server(memory, *, host: str = "127.0.0.1", port: int = 0, truth=None, allow_remote: bool = False,
                quiet: bool = False) -> ViewerServer:
    """A viewer bound to `host:port` (0: a free port); run it with `serve_forever()`, stop it with
    `shutdown()` and `server_close()`. A host beyond loopback is refused unless `allow_remote`,
    which also puts a random token in every URL."""
    if host not in LOOPBACK and not allow_remote:
        raise Refused(f"{host} is not a loopback address: the viewer serves 127.0.0.1 only unless {{field}} is "
                      "given (and then every URL carries a random token)", field="allow_remote")
    viewer = Viewer(memory, truth=truth, token=secrets.token_urlsafe(18) if host not in LOOPBACK else None)
    try:
        if truth is not None:  # a bad truth file is refused now, not on the first visit of its page
            viewer.worker.submit(memory.evaluate, truth).result()
        memory.prime()  # before the first page is asked for (`Memory.prime`)
        viewer.worker.submit(_warm_up, memory)  # on the worker, which owns the connection; no page waits for it
        return ViewerServer((host, port), viewer, quiet)
    except BaseException as exc:
        viewer.worker.shutdown()
        if isinstance(exc, OSError):
            raise Refused(f"cannot listen on {host}:{port}: {exc.strerror or exc} — pick another {{field}}",
                          field="port") from exc
        raise
