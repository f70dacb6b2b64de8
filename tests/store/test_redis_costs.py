"""What one request costs in Redis round trips (a pipeline or a Lua script
is one): reading a match is one; playing an action is one on a match the
process remembers (it read or wrote it last), two on another (read, then
compare-and-set). Counted in process, with Flask's test client."""

from __future__ import annotations

import copy
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from engines import get_game
from service.app import create_app
from service.domain.tokens import token_hash
from service.live.hub import Listener
from service.store.allowances import holder_key

RAISED = "1000000000/minute"


class RoundTrips:
    def __init__(self) -> None:
        self.count = 0
        self.by_thread: Counter[int] = Counter()
        self.sent: list[tuple[int, bytes]] = []  # (thread, the command's start)


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[RoundTrips]:
    """Counts what redis-py sends: one packed send is one round trip (a new
    connection's handshake is not counted: how often one opens depends on
    the threads)."""
    counter = RoundTrips()
    connection_class = redis.connection.AbstractConnection
    original = connection_class.send_packed_command
    connect = connection_class.on_connect_check_health
    opening = threading.local()

    def send(connection: Any, command: Any, check_health: bool = True) -> None:
        if not getattr(opening, "now", False):
            counter.count += 1
            counter.by_thread[threading.get_ident()] += 1
            data = b"".join(command) if isinstance(command, list) else bytes(command)
            counter.sent.append((threading.get_ident(), data[:60]))
        return original(connection, command, check_health)

    def on_connect(connection: Any, check_health: bool = True) -> None:
        opening.now = True
        try:
            connect(connection, check_health)
        finally:
            opening.now = False

    monkeypatch.setattr(connection_class, "send_packed_command", send)
    monkeypatch.setattr(connection_class, "on_connect_check_health", on_connect)
    yield counter


def app_for(redis_url: str, rate_limits: bool) -> Any:
    return create_app(
        {
            "REDIS_URL": redis_url,
            "RATELIMIT_ENABLED": rate_limits,
            "RATE_LIMIT_PER_ADDRESS": RAISED,
            "RATE_LIMIT_PER_TOKEN": RAISED,
        }
    )


def costs(redis_url: str, round_trips: RoundTrips, rate_limits: bool) -> dict[str, int]:
    http = app_for(redis_url, rate_limits).test_client()
    # another process, which never saw the match
    other = app_for(redis_url, rate_limits).test_client()
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 2}
    spent: dict[str, int] = {}
    # The first match loads the scripts and opens the connections: not counted.
    for attempt in range(2):
        match = http.post("/v1/games/dekal/matches", json=body).get_json()
        url = f"/v1/games/dekal/matches/{match['id']}"
        headers = {"Authorization": f"Bearer {match['seats'][0]['token']}"}
        before = round_trips.count
        http.get(url, headers=headers)
        spent["view"] = round_trips.count - before
        before = round_trips.count
        action = http.get(url + "/legal-actions", headers=headers).get_json()["actions"][0]
        spent["legal"] = round_trips.count - before
        before = round_trips.count
        played = http.post(url + "/actions", json=action, headers=headers)
        spent["action"] = round_trips.count - before
        assert played.status_code == 200, played.get_data(as_text=True)
        headers = {"Authorization": f"Bearer {match['seats'][1]['token']}"}
        action = http.get(url + "/legal-actions", headers=headers).get_json()["actions"][0]
        before = round_trips.count
        played = other.post(url + "/actions", json=action, headers=headers)
        spent["action elsewhere"] = round_trips.count - before
        assert played.status_code == 200, played.get_data(as_text=True)
        if attempt == 0:
            spent.clear()
    return spent


@pytest.mark.parametrize("rate_limits", [False, True], ids=["no rate limits", "rate limits"])
def test_reading_a_match_costs_one_round_trip(redis_url, round_trips, rate_limits):
    spent = costs(redis_url, round_trips, rate_limits)
    assert spent["view"] == 1
    assert spent["legal"] == 1


@pytest.mark.parametrize("rate_limits", [False, True], ids=["no rate limits", "rate limits"])
def test_playing_an_action_costs_one_round_trip_or_two(redis_url, round_trips, rate_limits):
    spent = costs(redis_url, round_trips, rate_limits)
    assert spent["action"] == 1, spent
    assert spent["action elsewhere"] == 2, spent


@pytest.mark.parametrize("rate_limits", [False, True], ids=["no rate limits", "rate limits"])
@pytest.mark.parametrize("mover", ["elsewhere", "here"])
def test_a_long_poll_costs_four_round_trips_or_three(
    redis_url, round_trips, rate_limits, mover, monkeypatch
):
    """Issue 34: the waiting seat's ``?wait=`` reads the match once before it
    waits (it follows the match first, so no second read closes a gap), holds
    its follower, reads the match once woken, and releases the follower
    (five round trips until 2026-11-27). The match was followed a moment
    before, as a seat's next turn finds it: its channel is still subscribed.
    (Releasing in the last read's round trip, then holding again when the
    wait went on, let another request take the freed place: the wait then
    answered before its turn.) Woken by a move its own process made, it
    reads nothing once woken: the hub hands it the match as written (three
    round trips; 2026-12-07). Here the wake-up back from Redis is not
    heard, so that the commit's own is the one that wakes it (a thread
    race in this test; under gevent the commit's comes first)."""
    if mover == "here":
        real = Listener._handle

        def deaf(listener: Listener, message: dict) -> None:
            if message["type"] not in ("message", "smessage"):
                real(listener, message)

        monkeypatch.setattr(Listener, "_handle", deaf)
    app = app_for(redis_url, rate_limits)
    http = app.test_client()
    moving = http if mover == "here" else app_for(redis_url, rate_limits).test_client()
    hub = app.extensions["ludotheque.live"].hub
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 2}
    match = http.post("/v1/games/dekal/matches", json=body).get_json()
    url = f"/v1/games/dekal/matches/{match['id']}"
    tokens = [seat["token"] for seat in match["seats"]]
    spent = []
    for _ in range(2):
        seat, action = handing_over(app, http, url, match["id"], tokens)
        answers: list[Any] = []

        def poll(seat: int = 1 - seat, answers: list[Any] = answers) -> None:
            headers = {"Authorization": f"Bearer {tokens[seat]}"}
            me, first = threading.get_ident(), len(round_trips.sent)
            answers.append(http.get(url + "?wait=10", headers=headers))
            spent.append([sent for who, sent in round_trips.sent[first:] if who == me])

        poller = threading.Thread(target=poll)
        poller.start()
        deadline = time.monotonic() + 5
        while hub.count() < 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.05)  # past its read, into its wait
        headers = {"Authorization": f"Bearer {tokens[seat]}"}
        assert moving.post(url + "/actions", json=action, headers=headers).status_code == 200
        poller.join(timeout=15)
        assert answers and answers[0].status_code == 200
    assert len(spent[1]) == (3 if mover == "here" else 4), spent


def handing_over(app: Any, http: Any, url: str, match_id: str, tokens: list[str]) -> tuple:
    """Play on until one seat alone acts and has an action that makes the
    other seat the one to act: that seat and that action."""
    game = get_game("dekal")
    store = app.extensions["ludotheque.matches"].store
    for _ in range(100):
        state = store.load(match_id).match["state"]
        seat = game.to_act(state)[0]
        actions = game.legal_actions(state, seat)
        if game.to_act(state) == [seat]:
            for action in actions:
                after = copy.deepcopy(state)
                game.apply(after, seat, action)
                if game.to_act(after) == [1 - seat]:
                    return seat, action
        headers = {"Authorization": f"Bearer {tokens[seat]}"}
        assert http.post(url + "/actions", json=actions[0], headers=headers).status_code == 200
    raise AssertionError("no position hands the turn over")


def test_a_process_remembers_the_last_matches_it_saw_and_no_more(redis_url, monkeypatch):
    from service.store import matches as store_module

    monkeypatch.setattr(store_module, "REMEMBERED", 2)
    app = app_for(redis_url, False)
    http = app.test_client()
    store = app.extensions["ludotheque.matches"].store
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}]}
    ids = [http.post("/v1/games/dekal/matches", json=body).get_json()["id"] for _ in range(3)]
    assert store.remembered(ids[0]) is None  # the oldest, forgotten
    assert [store.remembered(i).version for i in ids[1:]] == [1, 1]
    http.get(f"/v1/games/dekal/matches/{ids[1]}")  # read again: now the newest
    http.post("/v1/games/dekal/matches", json=body)
    assert store.remembered(ids[1]) is not None and store.remembered(ids[2]) is None


def test_a_long_poll_woken_by_a_move_not_its_own_turn_still_holds_its_follower(redis_url):
    """When the move that woke a long poll was not the one that hands its
    seat the turn, the wait goes on, its follower still held against its
    token's cap."""
    app = app_for(redis_url, rate_limits=False)
    http = app.test_client()
    hub = app.extensions["ludotheque.live"].hub
    game = get_game("dekal")
    store = app.extensions["ludotheque.matches"].store
    body = {"players": [{"name": "Ada"}, {"name": "Bob"}, {"name": "Cy"}], "seed": 5}
    match = http.post("/v1/games/dekal/matches", json=body).get_json()
    url = f"/v1/games/dekal/matches/{match['id']}"
    tokens = [seat["token"] for seat in match["seats"]]
    # a position where one seat acts, and its move hands the turn to another
    # seat than the one that waits
    for _ in range(200):
        state = store.load(match["id"]).match["state"]
        (mover, *others) = game.to_act(state)
        action = game.legal_actions(state, mover)[0]
        after = copy.deepcopy(state)
        game.apply(after, mover, action)
        waiting = [s for s in range(3) if s != mover and s not in game.to_act(after)]
        if not others and waiting and game.to_act(after) != [mover]:
            break
        headers = {"Authorization": f"Bearer {tokens[mover]}"}
        assert http.post(url + "/actions", json=action, headers=headers).status_code == 200
    else:
        raise AssertionError("no such position")
    waiter = waiting[0]
    answers: list[Any] = []
    poller = threading.Thread(
        target=lambda: answers.append(
            http.get(url + "?wait=3", headers={"Authorization": f"Bearer {tokens[waiter]}"})
        )
    )
    poller.start()
    deadline = time.monotonic() + 5
    while hub.count() < 1 and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)
    headers = {"Authorization": f"Bearer {tokens[mover]}"}
    assert http.post(url + "/actions", json=action, headers=headers).status_code == 200
    time.sleep(0.3)  # woken, read, and waiting again
    client = redis.Redis.from_url(redis_url)
    # the long poll holds its follower under its token's hash (hashed again)
    key = holder_key("token", token_hash(token_hash(tokens[waiter])))
    assert poller.is_alive() and client.zcard(key) == 1
    poller.join(timeout=10)
    assert answers[0].status_code == 200
    assert client.zcard(key) == 0  # released when it answered
    client.close()
