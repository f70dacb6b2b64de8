"""Matches bounded: a waiting match (a seat still open) expires after a
short time unless someone joins, one address may keep only so many waiting
at once, and creating matches has its own rate limit (issue 15, point 5)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from service.http.addresses import client_key
from tests.support.client import ApiClient
from tests.support.problems import assert_problem
from tests.support.servers import PUBLIC, LiveServer

GAME = "dekal"
WAITING = {"players": [{"name": "Ada"}, {}]}
STARTED = {"players": [{"name": "Ada"}, {"name": "Bob"}]}


class Address:
    """A client seen from its own address (the server trusts one proxy)."""

    def __init__(self, base: str) -> None:
        self.api = ApiClient(base)
        # a /64 of its own: an IPv6 client is counted per /64 (service.http.addresses)
        self.api.http.headers["X-Forwarded-For"] = f"2001:db8:{uuid.uuid4().hex[:4]}::1"

    def create(self, body: dict) -> tuple[int, dict]:
        answer = self.api.create(GAME, body)
        return answer.status_code, answer


def server(live_server: Callable[..., LiveServer], **config: object) -> LiveServer:
    """A live server with the default limits, behind one proxy (and ``config``)."""
    return live_server(**PUBLIC, **config)


def ttl(redis_client, match_id: str) -> int:
    return redis_client.ttl(f"m:{{{match_id}}}")


def test_waiting_matches_are_capped_per_address(live_server):
    live = server(live_server, MAX_WAITING_PER_ADDRESS=3)
    client, neighbour = Address(live.base), Address(live.base)
    codes = [client.create(WAITING)[0] for _ in range(3)]
    _, refused = client.create(WAITING)
    assert codes == [201, 201, 201]
    assert assert_problem(refused, 429, "too_many_waiting_matches")["max_waiting"] == 3
    assert 3500 <= int(refused.headers["Retry-After"]) <= 3600
    # a match that starts at once waits for nobody; another address has its own cap
    assert client.create(STARTED)[0] == 201
    assert neighbour.create(WAITING)[0] == 201


def test_a_match_that_starts_no_longer_counts_against_the_cap(live_server):
    live = server(live_server, MAX_WAITING_PER_ADDRESS=2)
    client = Address(live.base)
    first = client.create(WAITING)[1].json()
    assert client.create(WAITING)[0] == 201
    assert client.create(WAITING)[0] == 429
    stranger = ApiClient(live.base)  # joining is anybody's right, from anywhere
    assert stranger.join(GAME, first["id"], 1, "Bob").status_code == 201
    assert client.create(WAITING)[0] == 201
    assert client.create(WAITING)[0] == 429


def test_a_waiting_match_expires_when_nobody_joins(live_server, redis_client):
    live = server(live_server, MAX_WAITING_PER_ADDRESS=1, WAITING_TTL=1)
    client = Address(live.base)
    match = client.create(WAITING)[1].json()
    assert 0 < ttl(redis_client, match["id"]) <= 1  # the store's own TTL, not a sweep
    assert client.create(WAITING)[0] == 429
    time.sleep(1.5)
    assert client.api.get(GAME, match["id"]).status_code == 404
    assert client.api.join(GAME, match["id"], 1, "Bob").status_code == 404
    assert client.create(WAITING)[0] == 201  # its place in the cap is free again


def test_a_match_lives_the_idle_ttl_once_started(live_server, redis_client):
    live = server(live_server, WAITING_TTL=60, IDLE_TTL=7200)
    client = Address(live.base)
    three = client.create({"players": [{"name": "Ada"}, {}, {}]})[1].json()
    assert 0 < ttl(redis_client, three["id"]) <= 60
    assert client.api.join(GAME, three["id"], 1, "Bob").status_code == 201
    assert 0 < ttl(redis_client, three["id"]) <= 60  # still waiting: a short life again
    assert client.api.join(GAME, three["id"], 2, "Cy").status_code == 201
    assert 60 < ttl(redis_client, three["id"]) <= 7200
    started = client.create(STARTED)[1].json()
    assert 60 < ttl(redis_client, started["id"]) <= 7200


def test_creating_matches_has_its_own_rate_limit(live_server):
    live = server(live_server, RATE_LIMIT_CREATE="2/minute")
    client = Address(live.base)
    codes = [client.create(STARTED)[0] for _ in range(3)]
    assert codes == [201, 201, 429]
    refused = client.create(STARTED)[1]
    assert refused.json()["code"] == "too_many_matches_created"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    # the address may still do everything else
    assert client.api.http.get(f"{live.base}/v1/games").status_code == 200


def test_the_creator_address_is_stored_but_never_shown(live_server, redis_client):
    live = server(live_server)
    client = Address(live.base)
    match = client.create(WAITING)[1].json()
    stored = redis_client.hget(f"m:{{{match['id']}}}", "d").decode()
    address = client.api.http.headers["X-Forwarded-For"]
    assert client_key(address) in stored  # its /64, as every count per address
    shown = client.api.get(GAME, match["id"]).text + str(match)
    assert address not in shown and address.removesuffix("::1") not in shown
    assert "creator" not in shown
