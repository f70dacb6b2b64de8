"""Servers the tests start: the app on a loopback socket in this process
(``LiveServer``), `ludotheque serve` as a process of its own (``start_serve``,
``interrupt``), and bot workers beside an app (``bot_workers``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
from werkzeug.serving import make_server

from service.app import create_app
from service.background.webhooks import Deliverer, DeliverySettings
from service.background.worker import Worker

LUDOTHEQUE = str(Path(sys.executable).with_name("ludotheque"))
# A Redis nobody listens on: the store is down.
STORE_DOWN = "redis://127.0.0.1:1/0"
# The server as deployed in the open: its default limits, behind one proxy
# (each client names its address in X-Forwarded-For).
PUBLIC = {"RATELIMIT_ENABLED": True, "TRUSTED_PROXIES": 1}


def url_of(client: Any) -> str:
    """The URL of the Redis database a redis-py client is connected to."""
    kwargs = client.connection_pool.connection_kwargs
    return f"redis://{kwargs['host']}:{kwargs['port']}/{kwargs.get('db', 0)}"


class LiveServer:
    """The app on a real socket; ``url(path)`` and a requests session. Also a
    context manager that stops it."""

    def __init__(self, app_config: dict, port: int = 0) -> None:
        # Rate limits and the cap of bot seats are tested on their own;
        # elsewhere they would only get in the way.
        quotas_off = {"RATELIMIT_ENABLED": False, "BOT_SEATS_PER_ADDRESS": 0}
        self.app = create_app({**quotas_off, **app_config})
        self.server = make_server("127.0.0.1", port, self.app, threaded=True)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        # polled often, so that stopping takes a moment, not half a second
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()
        self.http = requests.Session()
        self.stopped = False

    @property
    def matches(self) -> Any:
        """The app's match logic (service.domain.matches.Matches)."""
        return self.app.extensions["ludotheque.matches"]

    @property
    def turns(self) -> Any:
        """The turns the server plays (service.background.turns.ServerTurns)."""
        return self.app.extensions["ludotheque.turns"]

    def url(self, path: str) -> str:
        return self.base + path

    def stop(self) -> None:
        """Stop as a server process stops: no new connection, and the
        streams and long polls it holds end (werkzeug alone would let them
        run on the stopped app). Once: again, it does nothing."""
        if self.stopped:
            return
        self.stopped = True
        self.server.shutdown()
        self.app.extensions["ludotheque.live"].hub.stop()
        if (tokens := self.app.extensions["ludotheque.tokens"]) is not None:
            tokens.stop()  # its listener would retry a Redis gone after the test for ever
        self.http.close()
        if (archive := self.app.extensions["ludotheque.archive"]) is not None:
            archive.engine.dispose()  # before its database is dropped

    def __enter__(self) -> LiveServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def bot_workers(
    app: Any,
    count: int = 1,
    budget_s: float = 0.01,
    deliveries: DeliverySettings | None = None,
) -> Iterator[list[Worker]]:
    """What worker processes run, in threads beside ``app``: ``count`` bot
    workers playing the turns its matches are owed and, given ``deliveries``
    settings, a webhook deliverer; stopped and joined on the way out."""
    stopping = threading.Event()
    turns = app.extensions["ludotheque.turns"]
    workers = [
        Worker(turns, budget_s=budget_s, idle_s=0.01, stopping=stopping) for _ in range(count)
    ]
    threads = [threading.Thread(target=worker.run, daemon=True) for worker in workers]
    if deliveries is not None:
        deliverer = Deliverer(app.extensions["ludotheque.matches"], deliveries)
        threads.append(threading.Thread(target=deliverer.run, args=(stopping, 0.01), daemon=True))
    for thread in threads:
        thread.start()
    try:
        yield workers
    finally:
        stopping.set()
        for thread in threads:
            thread.join(timeout=15)


def start_serve(
    data_dir: Path, port: int, env: dict[str, str], workers: int = 2
) -> subprocess.Popen:
    """`ludotheque serve` in its own session; its stderr goes to ``<data_dir>.log``."""
    log_path = data_dir.with_name(data_dir.name + ".log")
    command = [LUDOTHEQUE, "serve", "--port", str(port), "--data-dir", str(data_dir)]
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [*command, "--workers", str(workers)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    process.log_path = log_path
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/v1/games", timeout=1).ok:
                return process
        except requests.RequestException:
            time.sleep(0.1)
    # SIGTERM, not SIGKILL: `serve` then stops the servers it started too
    process.terminate()
    process.wait(timeout=30)
    raise AssertionError(f"no start:\n{log_path.read_text()}")


def interrupt(process: subprocess.Popen) -> str:
    """Ctrl-C, as a terminal sends it: SIGINT to the whole foreground group.

    Returns what the server wrote on stderr."""
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=30)
    return process.log_path.read_text()


def create_from(server: LiveServer, address: str, game: str, body: dict) -> requests.Response:
    """Create a match as a client at ``address`` (behind the one trusted
    proxy, which names it in X-Forwarded-For)."""
    return server.http.post(
        server.url(f"/v1/games/{game}/matches"),
        json=body,
        headers={"X-Forwarded-For": address},
        timeout=30,
    )
