"""Shared fixtures: a real Redis (REDIS_URL, else a private embedded server)
and the app served over real HTTP on a loopback port."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests
from werkzeug.serving import make_server

from service.app import create_app
from service.background import outbound
from service.store.embedded import EmbeddedRedis


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    with EmbeddedRedis(tmp_path_factory.mktemp("redis"), persist=False) as url:
        yield url


@pytest.fixture(scope="session")
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


class LiveServer:
    """The app on a real socket; ``url(path)`` and a requests session."""

    def __init__(self, app_config: dict, port: int = 0) -> None:
        # Rate limits and the cap of bot seats are tested on their own;
        # elsewhere they would only get in the way.
        quotas_off = {"RATELIMIT_ENABLED": False, "BOT_SEATS_PER_ADDRESS": 0}
        self.app = create_app({**quotas_off, **app_config})
        self.server = make_server("127.0.0.1", port, self.app, threaded=True)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.http = requests.Session()

    def url(self, path: str) -> str:
        return self.base + path

    def stop(self) -> None:
        """Stop as a server process stops: no new connection, and the
        streams and long polls it holds end (werkzeug alone would let them
        run on the stopped app)."""
        self.server.shutdown()
        self.app.extensions["ludotheque.live"].hub.stop()
        self.http.close()


@pytest.fixture(scope="session")
def live(redis_url: str) -> Iterator[LiveServer]:
    server = LiveServer({"REDIS_URL": redis_url})
    yield server
    server.stop()


@pytest.fixture
def matches(live: LiveServer):
    """The live server's match logic (service.domain.matches.Matches), for what a
    worker process does beside it: webhook deliveries (its bot turns:
    ``live.app.extensions["ludotheque.turns"]``)."""
    return live.app.extensions["ludotheque.matches"]


@pytest.fixture
def loopback_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outbound calls (webhooks, HTTP bots) to the tests' loopback servers
    (this process's allowances: LUDOTHEQUE_OUTBOUND_ALLOW's, for a process)."""
    monkeypatch.setattr(outbound, "allowed", outbound.parse_allow("http,127.0.0.0/8,::1"))


# Debian's Chromium, driven by Playwright for Python (never `playwright install`).
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser() -> Iterator:
    if not Path(CHROMIUM).exists():
        message = f"no Chromium at {CHROMIUM}: install it with `apt-get install -y chromium`"
        if os.environ.get("LUDOTHEQUE_REQUIRE_BROWSER") == "1":
            pytest.fail(message + " (LUDOTHEQUE_REQUIRE_BROWSER=1)")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()
