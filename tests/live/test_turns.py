"""A turn's long poll (``GET .../matches/{id}?wait=``, ``service.live.turns``):
its follower's release travels while the answer is laid out (issue 34),
and is done before the answer leaves; no pooled connection is kept."""

from __future__ import annotations

import threading

import redis

from service.app import create_app
from service.domain.tokens import token_hash
from service.http import matches as match_routes
from service.store.allowances import holder_key
from tests.support.waiting import wait_until


def started(redis_url: str):
    app = create_app({"REDIS_URL": redis_url, "RATELIMIT_ENABLED": False})
    http = app.test_client()
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 4}
    match = http.post("/v1/games/dekal/matches", json=body).get_json()
    url = f"/v1/games/dekal/matches/{match['id']}"
    tokens = [seat["token"] for seat in match["seats"]]
    headers = [{"Authorization": f"Bearer {token}"} for token in tokens]
    # both seats reveal at once: seat 0 reveals, then waits for seat 1's reveal
    reveals = [
        http.get(url + "/legal-actions", headers=headers[seat]).get_json()["actions"][0]
        for seat in (0, 1)
    ]
    assert http.post(url + "/actions", json=reveals[0], headers=headers[0]).status_code == 200
    return app, http, url, tokens, headers, reveals[1]


def free_connections(app) -> int:
    return app.extensions["ludotheque.live"].store.client.connection_pool.pool.qsize()


def test_a_long_poll_is_released_before_its_answer_and_keeps_no_connection(redis_url):
    app, http, url, tokens, headers, reveal = started(redis_url)
    hub = app.extensions["ludotheque.live"].hub
    client = redis.Redis.from_url(redis_url)
    held = holder_key("token", token_hash(token_hash(tokens[0])))
    answer: dict = {}

    def wait() -> None:
        polled = app.test_client().get(url + "?wait=10&legal_actions=true", headers=headers[0])
        # the moment the answer is back, the follower is no longer held
        answer.update(view=polled.get_json(), held=client.zcard(held))

    try:
        waiting = threading.Thread(target=wait)
        waiting.start()
        wait_until(lambda: hub.count() == 1 and client.zcard(held) == 1, timeout=5)
        free = free_connections(app)
        assert http.post(url + "/actions", json=reveal, headers=headers[1]).status_code == 200
        waiting.join(timeout=15)
        assert answer["view"]["to_act"] == [0] and answer["view"]["legal_actions"]
        assert answer["held"] == 0
        assert free_connections(app) >= free  # the release's connection went back
    finally:
        hub.stop()
        client.close()


def test_a_long_poll_whose_answer_fails_still_releases_and_returns_its_connection(
    redis_url, monkeypatch
):
    app, http, url, tokens, headers, reveal = started(redis_url)
    hub = app.extensions["ludotheque.live"].hub
    client = redis.Redis.from_url(redis_url)
    held = holder_key("token", token_hash(token_hash(tokens[0])))

    def broken(*args, **kwargs):
        raise RuntimeError("the view could not be laid out")

    answer: dict = {}

    def wait() -> None:
        answer["status"] = app.test_client().get(url + "?wait=10", headers=headers[0]).status_code

    try:
        waiting = threading.Thread(target=wait)
        waiting.start()
        wait_until(lambda: hub.count() == 1 and client.zcard(held) == 1, timeout=5)
        free = free_connections(app)
        monkeypatch.setattr(match_routes, "present", broken)
        assert http.post(url + "/actions", json=reveal, headers=headers[1]).status_code == 200
        waiting.join(timeout=15)
        assert answer["status"] == 500
        assert client.zcard(held) == 0
        assert free_connections(app) >= free
    finally:
        hub.stop()
        client.close()
