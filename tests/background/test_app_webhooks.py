"""An app's webhook (service/background/app_webhooks.py): its players'
``ticket_matched`` and ``rated`` events, signed with the app's secret,
POSTed by the worker's lane to real loopback receivers, against real Redis
and a real database; a slow receiver delays nobody, a failing one is tried
a few times then dropped."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import orjson
import pytest
from standardwebhooks.webhooks import Webhook

from service.background.app_webhooks import AppWebhooks
from service.store.player_events import JOBS
from tests.support.queue import bearer, join, matchmaking, queue_server, ticket
from tests.support.receivers import Quiet, Served
from tests.support.servers import LiveServer
from tests.support.waiting import wait_until

RUN = uuid.uuid4().hex[:8]
PRESETS = {"dekal": {f"hook{RUN}": {"players": 2}}}


class Receiver(Served):
    """Keeps every call (headers, body); answers ``status`` after ``delay_s``."""

    def __init__(self, status: int = 200, delay_s: float = 0.0) -> None:
        self.calls: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(Quiet):
            def do_POST(self) -> None:
                body = self.read_body()
                outer.calls.append((dict(self.headers), body))
                time.sleep(delay_s)
                self.answer(status)

        handler: type[BaseHTTPRequestHandler] = Handler
        super().__init__(handler)


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    with queue_server(redis_url, module_db_url, PRESETS) as live:
        yield live


@pytest.fixture(scope="module")
def matchmaker(server: LiveServer) -> Iterator[Any]:
    with matchmaking(server) as found:
        yield found


@pytest.fixture
def lane(server: LiveServer, loopback_allowed: None) -> Iterator[AppWebhooks]:
    """The worker's app webhook lane, quick to retry."""
    extensions = server.app.extensions
    hooks = AppWebhooks(
        extensions["ludotheque.player_events"],
        extensions["ludotheque.players"],
        base_s=0.05,
        attempts=3,
    )
    stopping = threading.Event()
    thread = threading.Thread(target=hooks.run, args=(stopping,), daemon=True)
    thread.start()
    yield hooks
    stopping.set()
    thread.join(timeout=10)


def app_with_webhook(server: LiveServer, url: str) -> tuple[str, str, str]:
    """A new app whose webhook is ``url``: its id, key and secret."""
    operator = server.app.extensions["ludotheque.players"]
    app_id, key = operator.create_app(f"app-{uuid.uuid4().hex[:6]}")
    return app_id, key, operator.set_webhook(app_id, url)


def app_player(server: LiveServer, key: str) -> dict[str, Any]:
    answer = server.http.post(
        server.url("/v1/apps/me/players"),
        json={"external_id": uuid.uuid4().hex, "name": "Una"},
        headers=bearer(key),
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def matched(server: LiveServer, tokens: list[str]) -> list[dict[str, Any]]:
    """The tokens' players queued together: each ticket, matched."""
    tickets = [join(server, t, f"hook{RUN}").json()["id"] for t in tokens]
    return [
        wait_until(lambda t=t, i=i: (a := ticket(server, t, i, 5).json())["match"] and a)
        for t, i in zip(tokens, tickets, strict=True)
    ]


def test_an_apps_player_matched_is_posted_to_its_webhook_signed(server, matchmaker, lane):
    receiver = Receiver()
    try:
        _, key, secret = app_with_webhook(server, receiver.url)
        assert secret.startswith("whsec_")
        una = app_player(server, key)
        guest = server.http.post(server.url("/v1/players"), json={"name": "G"}).json()
        una_ticket, _ = matched(server, [una["token"], guest["token"]])
        headers, body = wait_until(lambda: receiver.calls and receiver.calls[0])
        Webhook(secret).verify(body, headers)  # raises unless signed with the secret
        sent = orjson.loads(body)
        assert sent["type"] == "ticket_matched"
        assert sent["player"] == una["id"]
        assert sent["ticket"] == una_ticket["id"]
        assert sent["match"] == una_ticket["match"]
        assert headers["webhook-id"] == f"evt_{una['id']}_{sent['index']}"
        time.sleep(0.5)
        assert len(receiver.calls) == 1, "the guest's event goes to no app"
    finally:
        receiver.stop()


def test_a_slow_receiver_delays_neither_the_match_nor_another_apps_calls(server, matchmaker, lane):
    slow, quick = Receiver(delay_s=6), Receiver()
    try:
        _, slow_key, _ = app_with_webhook(server, slow.url)
        _, quick_key, _ = app_with_webhook(server, quick.url)
        started = time.monotonic()
        matched(server, [app_player(server, slow_key)["token"] for _ in range(2)])
        wait_until(lambda: len(slow.calls) == 2, timeout=5)  # both calls hang now
        assert time.monotonic() - started < 3, "the match was made without waiting on them"
        started = time.monotonic()
        matched(server, [app_player(server, quick_key)["token"] for _ in range(2)])
        wait_until(lambda: len(quick.calls) == 2, timeout=5)
        assert time.monotonic() - started < 2.5
    finally:
        slow.stop()
        quick.stop()


def test_a_failing_receiver_is_retried_then_dropped_with_a_log_line(
    server, matchmaker, lane, caplog
):
    failing = Receiver(status=503)
    caplog.set_level(logging.WARNING, "service.background.app_webhooks")
    try:
        _, key, _ = app_with_webhook(server, failing.url)
        guest = server.http.post(server.url("/v1/players"), json={"name": "G"}).json()
        una = app_player(server, key)
        matched(server, [una["token"], guest["token"]])
        dropped = f"of player {una['id']} dropped after 3 attempts (http_5xx)"
        wait_until(lambda: dropped in caplog.text, timeout=10)
        assert len(failing.calls) == 3
        assert len({h["webhook-id"] for h, _ in failing.calls}) == 1, "one event, tried thrice"
        client = server.matches.store.client
        assert not [j for j in client.zrange(JOBS, 0, -1) if una["id"].encode() in j]
    finally:
        failing.stop()


def test_an_idle_lane_waits_at_its_doorbell_and_stops_at_once(server):
    """Nothing owed: its thread waits (no look every second), wakes when a
    job is owed, and returns at once when the worker stops."""
    extensions = server.app.extensions
    hooks = AppWebhooks(extensions["ludotheque.player_events"], extensions["ludotheque.players"])
    looked: list[float] = []
    run_once = hooks.run_once
    hooks.run_once = lambda: looked.append(time.monotonic()) or run_once()  # type: ignore[method-assign]
    stopping = threading.Event()
    thread = threading.Thread(target=hooks.run, args=(stopping,), daemon=True)
    thread.start()
    try:
        time.sleep(0.5)
        before = len(looked)
        time.sleep(2)
        assert len(looked) - before <= 2, "idle, it waits for a ring or for the first due job"
        owed = len(looked)
        extensions["ludotheque.player_events"].owe(uuid.uuid4().hex, {"type": "rated", "index": 1})
        wait_until(lambda: len(looked) > owed, timeout=1)
    finally:
        stopping.set()
        started = time.monotonic()
        thread.join(timeout=10)
        assert time.monotonic() - started < 1.5, "an idle lane stops at once"
