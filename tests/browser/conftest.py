"""Debian's Chromium driven by Playwright for Python (never `playwright
install`), against a live server, from a page served on another origin."""

from __future__ import annotations

import http.server
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import LiveServer

PAGE = Path(__file__).with_name("page.html")


class Counting:
    """WSGI middleware: the requests a browser page made, preflights apart."""

    def __init__(self, app) -> None:
        self.app = app
        self.counts: Counter[str] = Counter()

    def __call__(self, environ, start_response):
        if environ.get("HTTP_ORIGIN"):
            preflight = environ["REQUEST_METHOD"] == "OPTIONS"
            self.counts["preflight" if preflight else "request"] += 1
        return self.app(environ, start_response)


@pytest.fixture(scope="session")
def api_server(redis_url: str) -> Iterator[LiveServer]:
    with LiveServer({"REDIS_URL": redis_url}) as server:
        server.counting = Counting(server.app.wsgi_app)
        server.app.wsgi_app = server.counting
        yield server


@pytest.fixture(scope="session")
def page_origin() -> Iterator[str]:
    """The page, served from another origin (another loopback port)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = PAGE.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://localhost:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def page(browser, page_origin):
    context = browser.new_context()
    page = context.new_page()
    page.goto(page_origin + "/")
    yield page
    context.close()
