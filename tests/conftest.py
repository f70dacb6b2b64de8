"""Shared fixtures: a real Redis (REDIS_URL, else a private embedded server),
the app served over real HTTP on a loopback port (``live``, shared by the
session; ``live_server``, with given settings, per test), SQL databases
made and dropped per test (SQLite, and PostgreSQL: tests/support/databases.py),
and Chromium."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from service.background import outbound
from service.store.database import migrate
from service.store.embedded import EmbeddedRedis
from tests.support import databases
from tests.support.client import ApiClient
from tests.support.clusters import Cluster
from tests.support.servers import LiveServer, bot_workers

# Tests stop the servers they start with Ctrl-C (SIGINT), as a terminal
# does. A shell's background job (`pytest &` without job control) starts
# with SIGINT ignored, and the processes it starts inherit that: `serve`
# then never heard Ctrl-C and outlived its test, playing and archiving the
# next tests' matches. A handler, unlike "ignore", is not inherited.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    with EmbeddedRedis(tmp_path_factory.mktemp("redis"), persist=False) as url:
        yield url


@pytest.fixture(scope="module")
def module_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis of the test module's own, for a module whose bot workers must
    not play the turns earlier modules left in the session's Redis (where
    they queue ahead: a browser test once waited 20 s for its bot's move)."""
    with EmbeddedRedis(tmp_path_factory.mktemp("redis"), persist=False) as url:
        yield url


@pytest.fixture(scope="session")
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture(scope="session")
def live(redis_url: str) -> Iterator[LiveServer]:
    server = LiveServer({"REDIS_URL": redis_url})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis Cluster: three masters, the slots split in three, met with
    CLUSTER MEET; one for the session (for each xdist worker that needs one)."""
    cluster = Cluster(tmp_path_factory.mktemp("cluster"), primaries=3).start()
    yield cluster.url
    cluster.close()


@pytest.fixture(scope="session")
def cluster_live(cluster_url: str) -> Iterator[LiveServer]:
    """The app on that cluster."""
    with LiveServer({"REDIS_URL": cluster_url, "REDIS_CLUSTER": True}) as server:
        yield server


@pytest.fixture
def live_server(redis_url: str) -> Iterator[Callable[..., LiveServer]]:
    """Start the app on a loopback port with the given settings (the app's
    config keys: ``live_server(FOLLOWERS_PER_TOKEN=1)``), on the session's
    Redis unless REDIS_URL says otherwise; each one stops after the test."""
    started: list[LiveServer] = []

    def start(port: int = 0, **settings: object) -> LiveServer:
        server = LiveServer({"REDIS_URL": redis_url, **settings}, port=port)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    """An admin URL of a PostgreSQL server: LUDOTHEQUE_TEST_POSTGRES_URL, else
    the machine's, else a private one for the session; skips without one
    (fails when LUDOTHEQUE_REQUIRE_POSTGRES=1)."""
    with databases.postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new, empty database for the test, on SQLite then on PostgreSQL
    (dropped afterwards); only the PostgreSQL one can skip."""
    if request.param == "sqlite":
        yield databases.sqlite_url(tmp_path)
        return
    with databases.fresh_database(request.getfixturevalue("postgres_admin_url")) as url:
        yield url


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def module_db_url(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[str]:
    """A migrated database for the test module, on SQLite then on PostgreSQL
    (a database of its own on the tests' server, dropped after)."""
    if request.param == "sqlite":
        url = databases.sqlite_url(tmp_path_factory.mktemp("database"))
        migrate(url)
        yield url
        return
    with databases.fresh_database(request.getfixturevalue("postgres_admin_url")) as url:
        migrate(url)
        yield url


@pytest.fixture
def migrated_database_url(database_url: str) -> str:
    """``database_url``, migrated to the newest revision."""
    migrate(database_url)
    return database_url


@pytest.fixture
def api(live: LiveServer) -> ApiClient:
    """A client of the session's live server."""
    return ApiClient(live.base, live.http)


@pytest.fixture
def matches(live: LiveServer):
    """The live server's match logic (service.domain.matches.Matches), for what a
    worker process does beside it: bot turns, webhook deliveries."""
    return live.matches


@pytest.fixture
def live_bots(live: LiveServer) -> Iterator[None]:
    """A bot worker playing the live server's bot turns during the test."""
    with bot_workers(live.app):
        yield


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
