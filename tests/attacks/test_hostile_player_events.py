"""Attacks on a player's events and an app's webhook (issue 37): reading
another player's events, an app webhook aimed at an internal address,
flooding the events' long poll. Each row of docs/operators/security.md's
table for them names its test here."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from service.background import outbound
from service.background.app_webhooks import AppWebhooks
from tests.support.queue import bearer, guest, queue_server
from tests.support.receivers import Quiet, Served
from tests.support.servers import LiveServer
from tests.support.waiting import wait_until


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    with queue_server(redis_url, module_db_url, {}, FOLLOWERS_PER_TOKEN=2) as live:
        yield live


def events(server: LiveServer, token: str, **params: object):
    return server.http.get(
        server.url("/v1/players/me/events"), params=params, headers=bearer(token)
    )


def test_another_players_events_cannot_be_named_or_guessed(server):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    bob_id = server.http.get(server.url("/v1/players/me"), headers=bearer(bob)).json()["id"]
    server.app.extensions["ludotheque.player_events"].append(
        bob_id, {"type": "ticket_expired", "ticket": "secret-ticket"}
    )
    # no route names a player's events; a parameter naming one is ignored
    assert server.http.get(server.url(f"/v1/players/{bob_id}/events")).status_code in (404, 405)
    theirs = server.http.get(
        server.url(f"/v1/players/{bob_id}/events"), headers=bearer(ada)
    ).status_code
    assert theirs in (404, 405)
    mine = events(server, ada, player=bob_id, after=0)
    assert mine.status_code in (200, 422)
    assert "secret-ticket" not in mine.text
    # a forged or revoked token reads nothing
    assert events(server, "ldq_player_" + "A" * 43).status_code == 401
    # nor a cursor from the far past or the far future
    assert "secret-ticket" not in events(server, ada, after=0).text
    assert events(server, ada, after=-1).status_code == 422
    assert events(server, ada, after=10**15).json()["events"] == []
    assert events(server, ada, after=10**25).status_code == 422, "not a 500 from Redis"


def test_an_apps_webhook_aimed_at_an_internal_address_is_never_called(server, caplog, monkeypatch):
    """Set behind the command's back (the command refuses literals): a name
    that resolves to loopback, with the deployment's default allowances
    (none). Each call is refused before connecting, then dropped."""
    hits: list[bytes] = []

    class Handler(Quiet):
        def do_POST(self) -> None:
            hits.append(self.read_body())
            self.answer(200)

    receiver = Served(Handler)
    operator = server.app.extensions["ludotheque.players"]
    app_id, key = operator.create_app("inside")
    port = receiver.server.server_port
    operator.set_webhook(app_id, f"https://localhost:{port}/hook")
    player = server.http.post(
        server.url("/v1/apps/me/players"),
        json={"external_id": uuid.uuid4().hex, "name": "Una"},
        headers=bearer(key),
    ).json()
    monkeypatch.setattr(outbound, "allowed", outbound.Allowed())  # the default: none
    caplog.set_level(logging.WARNING, "service.background.app_webhooks")
    hooks = AppWebhooks(
        server.app.extensions["ludotheque.player_events"], operator, base_s=0.01, attempts=2
    )
    stopping = threading.Event()
    thread = threading.Thread(target=hooks.run, args=(stopping,), daemon=True)
    thread.start()
    try:
        server.app.extensions["ludotheque.player_events"].append(
            player["id"],
            {"type": "ticket_matched", "ticket": "t", "match": {"id": "m", "seat": 0}},
        )
        wait_until(lambda: "dropped after 2 attempts (internal_address)" in caplog.text, 10)
        assert hits == []
    finally:
        stopping.set()
        thread.join(timeout=10)
        receiver.stop()


def test_flooding_the_events_long_poll_is_capped_per_token(server):
    """Long polls held at once are followers: past the per-token cap, 429
    `too_many_followers`; the others wait out their wait and answer."""
    ada = guest(server)
    codes: list[int] = []

    def poll() -> None:
        codes.append(events(server, ada, wait=2).status_code)

    threads = [threading.Thread(target=poll) for _ in range(4)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [200, 200, 429, 429], codes
    assert time.monotonic() - started < 10
    assert events(server, ada, wait=31).status_code == 422, "a wait over 30 s"
