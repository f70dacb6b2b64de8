"""Hostile clients, over HTTP alone (issue 15): each test is one of the
reproductions the issue reports, which broke the server before the fix.

- one address creating 1,000 six-seat waiting matches (each then kept 7 days);
- a browser's HTTP cache showing seat 0's view, Ducale hand included, to
  seat 1 and to a spectator;
- a wrong token with If-None-Match getting 304 instead of 403.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
import requests
from cachecontrol import CacheControl

from tests.support.client import ApiClient
from tests.support.servers import PUBLIC, LiveServer

DEFAULT_CAP = 20  # LUDOTHEQUE_MAX_WAITING_PER_ADDRESS's default (docs/operators/public-service.md)
ONE_HOUR = 3600  # LUDOTHEQUE_WAITING_TTL's default


@pytest.fixture
def public(live_server: Callable[..., LiveServer]) -> LiveServer:
    """The server as deployed in the open: default limits, behind one proxy."""
    return live_server(**PUBLIC)


def test_one_address_cannot_park_a_thousand_waiting_matches(public, redis_client):
    attacker = requests.Session()
    attacker.headers["X-Forwarded-For"] = f"2001:db8:{uuid.uuid4().hex[:4]}::1"  # its own /64
    body = {"players": [{"name": "bait"}, {}, {}, {}, {}, {}]}
    url = public.url("/v1/games/dekal/matches")
    answers = [attacker.post(url, json=body) for _ in range(1000)]
    created = [a.json()["id"] for a in answers if a.status_code == 201]
    refused = [a for a in answers if a.status_code != 201]
    assert len(created) == DEFAULT_CAP
    # first the cap, then (its attempts counted too) the creation rate limit
    codes = [(a.status_code, a.json()["code"]) for a in refused]
    assert codes[0] == (429, "too_many_waiting_matches")
    assert set(codes) == {(429, "too_many_waiting_matches"), (429, "too_many_matches_created")}
    assert all(0 < redis_client.ttl(f"m:{{{m}}}") <= ONE_HOUR for m in created)
    # everyone else still creates matches
    assert requests.post(url, json=body).status_code == 201


def test_a_browser_cache_never_shows_one_viewer_another_viewers_view(live):
    """Seat 0, then seat 1, then a spectator, then each again (revalidating
    with If-None-Match), through an HTTP cache that honours Cache-Control,
    ETag and Vary, as a browser's does."""
    created = ApiClient(live.base).create(
        "ducale", {"players": [{"name": "Ada"}, {"name": "Bob"}]}
    )
    match_id = created.json()["id"]
    tokens = [seat["token"] for seat in created.json()["seats"]]
    browser = CacheControl(requests.Session())
    url = live.url(f"/v1/games/ducale/matches/{match_id}")
    viewers = {0: tokens[0], 1: tokens[1], None: None}
    seen: dict[int | None, dict] = {}
    for _ in range(2):
        for seat, token in viewers.items():
            answer = browser.get(
                url, headers={"Authorization": f"Bearer {token}"} if token else {}
            )
            assert answer.status_code == 200 and answer.json()["your_seat"] == seat
            assert answer.json() == seen.setdefault(seat, answer.json())
    assert seen[0]["view"]["hand"] != seen[1]["view"]["hand"]
    assert seen[None]["view"].get("hand") is None
    # a viewer's own copy is still revalidated and reused: 304, no new body
    seat_1 = {"Authorization": f"Bearer {tokens[1]}"}
    browser.get(url, headers=seat_1)
    again = browser.get(url, headers=seat_1)
    assert again.from_cache and again.json() == seen[1]


def test_a_wrong_token_with_if_none_match_gets_403_not_304(live):
    api = ApiClient(live.base)
    created = api.create("ducale", {"players": [{"name": "Ada"}, {"name": "Bob"}]}).json()
    tag = api.get("ducale", created["id"], created["seats"][0]["token"]).headers["ETag"]
    version = f'"{created["version"]}"'
    for guess in (tag, version, "*"):
        answer = api.get("ducale", created["id"], "guessed-token", **{"If-None-Match": guess})
        assert answer.status_code == 403, guess
        assert answer.json()["code"] == "invalid_token"
