"""Adversary round on a player's events and an app's webhook (issue 37,
point 1), written from the outside: docs/clients/players.md ("My events"),
docs/clients/webhooks.md ("An app's webhook") and a running server. Each
test reproduces a finding against a real server, Redis and database, with
the worker's app webhook lane and matchmaker beside it, as
tests/background/test_app_webhooks.py does."""

from __future__ import annotations

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
from tests.support.queue import bearer, join, matchmaking, queue_server, ticket
from tests.support.receivers import Quiet, Served
from tests.support.servers import LiveServer
from tests.support.waiting import wait_until

RUN = uuid.uuid4().hex[:8]
PRESET = f"adv{RUN}"
PRESETS = {"dekal": {PRESET: {"players": 2}}}


class Receiver(Served):
    """Keeps every call (headers, body) and answers 200 at once."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(Quiet):
            def do_POST(self) -> None:
                outer.calls.append((dict(self.headers), self.read_body()))
                self.answer(200)

        handler: type[BaseHTTPRequestHandler] = Handler
        super().__init__(handler)

    def bodies(self) -> list[dict[str, Any]]:
        return [orjson.loads(body) for _, body in self.calls]


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
    """The worker's app webhook lane, with the deployed settings."""
    extensions = server.app.extensions
    hooks = AppWebhooks(extensions["ludotheque.player_events"], extensions["ludotheque.players"])
    stopping = threading.Event()
    thread = threading.Thread(target=hooks.run, args=(stopping,), daemon=True)
    thread.start()
    yield hooks
    stopping.set()
    thread.join(timeout=10)


def app_player(server: LiveServer, key: str) -> dict[str, Any]:
    answer = server.http.post(
        server.url("/v1/apps/me/players"),
        json={"external_id": uuid.uuid4().hex, "name": "Una"},
        headers=bearer(key),
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def matched_with_a_guest(server: LiveServer, token: str) -> tuple[str, str]:
    """``token``'s player queued with a new guest: the match id, the guest's token."""
    guest = server.http.post(server.url("/v1/players"), json={"name": "G"}).json()["token"]
    tickets = [join(server, t, PRESET).json()["id"] for t in (token, guest)]
    found = wait_until(lambda: (a := ticket(server, token, tickets[0], 5).json())["match"] and a)
    return found["match"]["id"], guest


def resign(server: LiveServer, token: str, match_id: str) -> None:
    answer = server.http.post(
        server.url(f"/v1/games/dekal/matches/{match_id}/resign"), json={}, headers=bearer(token)
    )
    assert answer.status_code == 200, answer.text


def signs(secret: str, call: tuple[dict[str, str], bytes]) -> bool:
    headers, body = call
    try:
        Webhook(secret).verify(body, headers)
    except Exception:
        return False
    return True


def test_a_new_webhook_url_stops_the_old_url_and_secret_at_once(server, matchmaker, lane):
    """webhooks.md: "Setting a URL again makes a new secret (the old one
    stops signing at once)". The operator moves the app's webhook (a leaked
    secret, a receiver handed over); the player's next event, a second
    later, still goes to the OLD receiver, signed with the OLD secret: the
    lane keeps each player's (URL, secret) for 5 s."""
    old, new = Receiver(), Receiver()
    try:
        operator = server.app.extensions["ludotheque.players"]
        app_id, key = operator.create_app(f"adv-{uuid.uuid4().hex[:6]}")
        old_secret = operator.set_webhook(app_id, old.url)
        una = app_player(server, key)
        match_id, _ = matched_with_a_guest(server, una["token"])
        wait_until(lambda: len(old.calls) == 1, timeout=5)  # its ticket_matched
        new_secret = operator.set_webhook(app_id, new.url)  # the operator moves it
        assert new_secret != old_secret
        resign(server, una["token"], match_id)  # her `rated` event
        wait_until(lambda: len(old.calls) + len(new.calls) == 2, timeout=10)
        time.sleep(0.5)
        assert [b["type"] for b in new.bodies()] == ["rated"], (
            f"the rated event went to the old URL: {[b['type'] for b in old.bodies()]}"
        )
        assert len(old.calls) == 1, "nothing more to the old URL"
        assert not signs(old_secret, new.calls[0]), "the old secret signs nothing more"
        assert signs(new_secret, new.calls[0])
    finally:
        old.stop()
        new.stop()


def test_a_revoked_apps_webhook_hears_nothing_more(server, matchmaker, lane):
    """`apps revoke APP_ID` ends the app "at once, on every server
    process"; an event of its player right after (the match its player was
    in ends: `rated`) is still POSTed to the revoked app's webhook within
    the lane's 5 s lookup cache."""
    receiver = Receiver()
    try:
        operator = server.app.extensions["ludotheque.players"]
        app_id, key = operator.create_app(f"adv-{uuid.uuid4().hex[:6]}")
        operator.set_webhook(app_id, receiver.url)
        una = app_player(server, key)
        match_id, guest = matched_with_a_guest(server, una["token"])
        wait_until(lambda: len(receiver.calls) == 1, timeout=5)  # its ticket_matched
        operator.revoke_app(app_id)
        resign(server, guest, match_id)  # the match ends: Una is rated
        time.sleep(3)
        sent = [b["type"] for b in receiver.bodies()]
        assert sent == ["ticket_matched"], f"a revoked app was sent {sent}"
    finally:
        receiver.stop()


def test_a_deleted_players_events_are_not_posted_to_its_app(server, matchmaker, lane):
    """players.md: at a deletion "its app and its app's id for it are
    dropped", and an app hears of "its players'" events. An app deletes its
    player while the player's rated match is live (well past the lane's 5 s
    cache): the deletion resigns the seat, and the resulting `rated` event
    of the deleted player is POSTed to the app, because the seat is
    stepped down before the player's app is dropped. A race with the lane's
    database read: it failed every SQLite run and 4 of 5 PostgreSQL runs
    in the round (and on a live `ludotheque serve`)."""
    receiver = Receiver()
    try:
        operator = server.app.extensions["ludotheque.players"]
        app_id, key = operator.create_app(f"adv-{uuid.uuid4().hex[:6]}")
        operator.set_webhook(app_id, receiver.url)
        una = app_player(server, key)
        matched_with_a_guest(server, una["token"])
        wait_until(lambda: len(receiver.calls) == 1, timeout=5)  # its ticket_matched
        time.sleep(5.5)  # past the lane's lookup cache: the database says
        gone = server.http.delete(
            server.url(f"/v1/apps/me/players/{una['id']}"), headers=bearer(key)
        )
        assert gone.status_code == 204, gone.text
        time.sleep(3)
        after = [b["type"] for b in receiver.bodies()[1:] if b["player"] == una["id"]]
        assert after == [], f"the deleted player's {after} went to its app"
    finally:
        receiver.stop()


@pytest.mark.parametrize(
    "url",
    [
        "https://127.1/hook",  # loopback, short dotted form
        "https://2130706433/hook",  # 127.0.0.1 as one decimal number
        "https://0x7f000001/hook",  # ... in hexadecimal
        "https://0177.0.0.1/hook",  # ... in octal
        "https://169.254.169.254./latest",  # the metadata address, a trailing dot
        "https://0/hook",  # 0.0.0.0: "this network", reaches the host itself
    ],
)
def test_an_internal_address_spelt_otherwise_is_refused_when_set(server, url, monkeypatch):
    """webhooks.md: the URL follows the outbound rules "when it is set
    (https; an internal address written as such is refused ...)". Each of
    these spellings is an IPv4 literal that every resolver (inet_aton)
    reads as loopback, 0.0.0.0 or the metadata address, yet
    `apps webhook --url` accepts it as a host name and prints a secret.
    (The worker's call-time check did refuse `0` in the round: the call is
    dropped `internal_address`; the set-time promise is what fails.)"""
    from tests.server.test_players_cli import ludotheque, printed

    monkeypatch.setenv("LUDOTHEQUE_OUTBOUND_ALLOW", "")  # the command's own allowances
    app_id = printed(ludotheque(server, "apps", "create", f"adv-{uuid.uuid4().hex[:6]}"))["app"]
    refused = ludotheque(server, "apps", "webhook", app_id, "--url", url)
    assert refused.returncode != 0, f"set: {refused.stdout.splitlines()[0]}"
    assert "secret" not in refused.stdout
