"""Live play over HTTP: Server-Sent Events and long polling, driven by Redis."""

from __future__ import annotations

import threading
import time

from service.domain.access import ends_following, may_follow_as, private_to
from tests.support.client import ApiClient
from tests.support.matches import create_match, events_of, play_out
from tests.support.problems import assert_problem
from tests.support.streams import sse_events
from tests.support.waiting import wait_until

GAME = "dekal"


def test_stream_delivers_every_visible_event_in_order_and_ends(api, live):
    match_id, tokens = create_match(api, GAME, seed=3)
    url = f"{api.base}/v1/games/{GAME}/matches/{match_id}/stream"
    received: dict[str | None, list] = {}

    def follow(who: str | None) -> None:
        headers = {"Authorization": f"Bearer {who}"} if who else {}
        with api.http.get(url, headers=headers, stream=True, timeout=60) as response:
            assert response.headers["Content-Type"].startswith("text/event-stream")
            received[who] = sse_events(response)

    followers = [threading.Thread(target=follow, args=(who,)) for who in [None, *tokens]]
    for follower in followers:
        follower.start()
    wait_until(
        lambda: live.app.extensions["ludotheque.live"].hub.count() >= len(followers), timeout=10
    )
    play_out(api, GAME, match_id, tokens, 3)
    for follower in followers:
        follower.join(timeout=60)
    for who in [None, *tokens]:
        expected = events_of(api, GAME, match_id, who)
        got = received[who]
        assert [data for _, data in got] == expected
        assert [i for i, _ in got] == [e["index"] for e in expected]
        assert got[-1][1]["type"] == "match_over"


def test_stream_resumes_after_last_event_id(api):
    match_id, tokens = create_match(api, GAME, seed=4)
    play_out(api, GAME, match_id, tokens, 4)
    url = f"{api.base}/v1/games/{GAME}/matches/{match_id}/stream"
    everything = sse_events(api.http.get(url, timeout=30))
    middle = everything[len(everything) // 2][0]
    resumed = sse_events(api.http.get(url, headers={"Last-Event-ID": str(middle)}, timeout=30))
    assert resumed == [e for e in everything if e[0] > middle]
    by_query = sse_events(api.http.get(url, params={"after": middle}, timeout=30))
    assert by_query == resumed
    bad = api.http.get(url, headers={"Last-Event-ID": "twelve"})
    assert bad.status_code == 400


def test_idle_stream_sends_keep_alive_comments(live_server):
    api = ApiClient(live_server(SSE_KEEPALIVE_S=0.2).base)
    match_id, _ = create_match(api, GAME, seed=3)
    url = f"{api.base}/v1/games/{GAME}/matches/{match_id}/stream"
    with api.http.get(url, stream=True, timeout=10) as response:
        lines = response.iter_lines(decode_unicode=True)
        seen: list[str] = []
        while sum(line == ": keep-alive" for line in seen) < 2:
            seen.append(next(lines))
    assert "retry: 1000" in seen


def test_long_poll_answers_as_soon_as_an_event_exists(api):
    match_id, tokens = create_match(api, GAME, seed=5)
    last = events_of(api, GAME, match_id, tokens[0])[-1]["index"]
    answer: dict = {}

    def poll() -> None:
        started = time.monotonic()
        response = api.http.get(
            f"{api.base}/v1/games/{GAME}/matches/{match_id}/events",
            params={"after": last, "wait": 20},
            headers={"Authorization": f"Bearer {tokens[1]}"},
            timeout=30,
        )
        answer["elapsed"] = time.monotonic() - started
        answer["body"] = response.json()

    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(0.5)
    legal = api.legal(GAME, match_id, tokens[0]).json()["actions"]
    assert api.act(GAME, match_id, tokens[0], legal[0]).status_code == 200
    poller.join(timeout=30)
    assert 0.4 < answer["elapsed"] < 5
    # seat 0's own action record is hidden from seat 1; the public event is not
    assert [e["type"] for e in answer["body"]["events"]] == ["chosen"]


def test_long_poll_times_out_with_no_events(api):
    match_id, _ = create_match(api, GAME, seed=6)
    last = events_of(api, GAME, match_id, None)[-1]["index"]
    started = time.monotonic()
    response = api.http.get(
        f"{api.base}/v1/games/{GAME}/matches/{match_id}/events",
        params={"after": last, "wait": 0.5},
    )
    assert 0.4 < time.monotonic() - started < 3
    assert response.json() == {"events": [], "next": last}
    too_long = api.http.get(
        f"{api.base}/v1/games/{GAME}/matches/{match_id}/events", params={"wait": 31}
    )
    assert too_long.status_code == 422


def test_a_follower_follows_as_a_seat_only_while_its_token_holds_it():
    """service.domain.access's following rules, as the streams and long polls use them."""
    seats = [{"token": "h0"}, {"token": None}, {"token": "h2"}]
    assert may_follow_as(seats, None, None)  # a spectator: anyone
    assert may_follow_as(seats, 0, "h0")
    assert not may_follow_as(seats, 0, "h2")  # another token's seat
    assert not may_follow_as(seats, 1, "h1")  # left: open now
    assert not may_follow_as(seats, 5, "h0")
    left = {"type": "seat_left", "seat": 1, "version": 7}
    assert ends_following(left, 1, 6)
    assert not ends_following(left, 1, 7)  # before the check: history, not a change
    assert not ends_following(left, 0, 6) and not ends_following(left, None, 6)
    assert ends_following({"type": "seat_joined", "seat": 1, "version": 8}, 1, 7)
    assert not ends_following({"type": "match_started", "version": 8}, 1, 7)
    assert private_to({"type": "action", "to": [1]}, 1)
    assert not private_to({"type": "action", "to": [1]}, 0)
    assert not private_to({"type": "chosen"}, 1)


def test_an_events_long_poll_as_a_seat_ends_with_its_seat_left(live):
    """Issue 31, point 2: the long poll of seat 1's holder answers with the
    events up to the seat's ``seat_left``; the next one with that token is
    refused, as every request with it."""
    api = ApiClient(live.base, live.http)
    created = api.create(GAME, {"players": [{"name": "Host"}, {}, {}]}).json()
    match_id = created["id"]
    token = api.join(GAME, match_id, 1, "A").json()["token"]
    last = events_of(api, GAME, match_id, token)[-1]["index"]
    answer: dict = {}

    def poll() -> None:
        answer["response"] = api.http.get(
            f"{api.base}/v1/games/{GAME}/matches/{match_id}/events",
            params={"after": last, "wait": 10},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )

    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(0.3)
    left = api.http.delete(
        f"{api.base}/v1/games/{GAME}/matches/{match_id}/seats/1",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert left.status_code == 200
    poller.join(timeout=15)
    events = answer["response"].json()["events"]
    assert events[-1]["type"] == "seat_left" and events[-1]["seat"] == 1
    again = api.http.get(
        f"{api.base}/v1/games/{GAME}/matches/{match_id}/events",
        params={"after": events[-1]["index"], "wait": 1},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert_problem(again, 403, "invalid_token")
