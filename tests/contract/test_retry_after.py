"""Retry-After is exact: a request made that many seconds later is accepted."""

from __future__ import annotations

import time

from tests.http.test_operations import rate_limited
from tests.support.problems import assert_problem

GAME = "dekal"


def test_a_request_made_retry_after_seconds_later_is_accepted(live_server):
    # windows of 3 s: a rounding down of the time left would send the client
    # back into the window that refused it
    api = rate_limited(live_server, "1000/minute", "2 per 3 seconds")
    created = api.create(GAME, {"players": [{"name": "A"}, {"name": "B"}]}).json()
    token = created["seats"][0]["token"]
    # start early in a window, when the time left is far from a whole number
    time.sleep((3 - time.time() % 3) + 0.2)
    answers = [api.get(GAME, created["id"], token) for _ in range(3)]
    refused = next(a for a in answers if a.status_code == 429)
    assert_problem(refused, 429, "too_many_requests")
    wait = int(refused.headers["Retry-After"])
    assert 1 <= wait <= 3
    time.sleep(wait)
    again = api.get(GAME, created["id"], token)
    assert again.status_code == 200, again.text
