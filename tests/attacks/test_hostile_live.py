"""Hostile clients of the live side (issue 31, points 2, 5 and 9), over
HTTP alone: each test is a reproduction that broke the server before the fix.

- a stream opened as a seat (with its token, or a ticket) kept delivering
  that seat's private events after the seat was left and taken by someone
  else; a ticket taken before leaving still opened a stream as the seat;
- a view's long poll (``GET ...?wait=``) waited on as the seat, then
  answered with the new holder's view (its hand);
- view long polls were not counted against the follower caps: 160 of them
  from one token filled a worker's 150 connections;
- a used ticket, stolen, replayed the whole log as its seat from
  ``Last-Event-ID: 0``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from service.store.embedded import free_port
from tests.support.client import ApiClient
from tests.support.servers import LiveServer, interrupt, start_serve
from tests.support.streams import read_events
from tests.support.waiting import wait_until


class Served:
    """``ludotheque serve`` (gunicorn, gevent): there the push hub writes a
    batch to an idle stream's socket itself (``service.live.followers.Shortcut``)."""

    def __init__(self, base: str) -> None:
        self.base = base

    def url(self, path: str) -> str:
        return self.base + path


@pytest.fixture(scope="module")
def served(tmp_path_factory, redis_url: str):
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "LUDOTHEQUE_RATE_LIMITS": "0"}
    server = start_serve(tmp_path_factory.mktemp("served"), port, env, workers=1)
    try:
        yield Served(f"http://127.0.0.1:{port}")
    finally:
        log = interrupt(server)
    assert "Traceback" not in log, log


@pytest.fixture(params=["live", "served"])
def server(request):
    """The test server (werkzeug, threads) and ``ludotheque serve``."""
    return request.getfixturevalue(request.param)


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def waiting_match(api: ApiClient, game: str, seats: int = 3) -> tuple[str, str | None, str]:
    """A match that waits for more players, whose seat 1 was joined by A:
    (id, seat 0's token if seat 0 is taken, A's token). Seats 2 and on
    (Pacal, two players at most: seat 0) stay open."""
    players = [{}, {}] if game == "pacal" else [{"name": "Host"}] + [{}] * (seats - 1)
    created = api.create(game, {"players": players})
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    joined = api.join(game, match_id, 1, "A")
    assert joined.status_code == 201, joined.text
    return match_id, created.json()["seats"][0].get("token"), joined.json()["token"]


def fill(api: ApiClient, game: str, match_id: str, tokens: list[str | None]) -> None:
    """Join every open seat (the match starts), noting the tokens by seat."""
    for seat in api.get(game, match_id).json()["seats"]:
        if seat["open"]:
            joined = api.join(game, match_id, seat["seat"], f"P{seat['seat']}")
            assert joined.status_code == 201, joined.text
            tokens[seat["seat"]] = joined.json()["token"]


def leave_and_replace(api: ApiClient, game: str, match_id: str, token: str) -> list[str]:
    """A leaves seat 1, B takes it, others take the open seats (the match
    starts): every seat's token but the host's, by seat (None for the host)."""
    assert api.leave(game, match_id, 1, token).status_code == 200
    joined = api.join(game, match_id, 1, "B")
    assert joined.status_code == 201, joined.text
    tokens: list[str | None] = [None] * len(api.get(game, match_id).json()["seats"])
    tokens[1] = joined.json()["token"]
    fill(api, game, match_id, tokens)
    return tokens


def play_until_seat_acted(api: ApiClient, game: str, match_id: str, tokens: list[str]) -> None:
    """Play first legal actions until seat 1 has acted (its own, private,
    ``action`` event is then in the log)."""
    for _ in range(40):
        view = api.get(game, match_id, tokens[1]).json()
        if view["status"] != "active":
            break
        seat = view["to_act"][0]
        legal = api.legal(game, match_id, tokens[seat]).json()["actions"]
        assert api.act(game, match_id, tokens[seat], legal[0]).status_code == 200
        if seat == 1:
            return
    raise AssertionError("seat 1 never acted")


class Reader:
    """Reads an event stream in a thread: its events, and whether it ended."""

    def __init__(self, response: requests.Response) -> None:
        self.response = response
        self.events: list[tuple[int, dict[str, Any]]] = []
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for _, event in read_events(self.response.iter_lines(decode_unicode=True)):
                self.events.append((event["index"], event))
        except (requests.RequestException, AttributeError, ValueError):
            pass  # closed by the test
        finally:
            self.ended.set()

    def hang_up(self) -> None:
        """Close the connection now: ``response.close()`` alone waits until
        the server next writes (up to a keep-alive, 10 s), the reader thread
        holding the socket."""
        with contextlib.suppress(AttributeError, OSError):  # already closed
            self.response.raw._fp.fp.raw._sock.shutdown(socket.SHUT_RDWR)
        self.response.close()

    def until(self, check, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while not check(self.events):
            assert time.monotonic() < deadline, self.events
            time.sleep(0.05)


def seat_stream(live: LiveServer | Served, game: str, match_id: str, token: str, how: str):
    url = live.url(f"/v1/games/{game}/matches/{match_id}/stream")
    if how == "token":
        return requests.get(url, headers=bearer(token), stream=True, timeout=30), None
    if how == "multi":  # one stream for many matches (here one, and a spectator's)
        other = requests.post(live.url(f"/v1/games/{game}/matches"), json={"players": [{}, {}]})
        body = {
            "matches": [
                {"game": game, "match": match_id, "token": token},
                {"game": game, "match": other.json()["id"]},
            ]
        }
        ticket = requests.post(live.url("/v1/stream-tickets"), json=body, timeout=10)
    else:
        ticket = requests.post(url + "-tickets", headers=bearer(token), timeout=10)
    assert ticket.status_code == 201, ticket.text
    stream_url = live.url(ticket.json()["stream"])
    return requests.get(stream_url, stream=True, timeout=30), stream_url


@pytest.mark.parametrize("how", ["token", "ticket", "multi"])
def test_a_stream_as_a_seat_ends_when_the_seat_is_left(server, how):
    """Point 2: A follows as seat 1, leaves; B takes seat 1 and plays. A's
    stream delivered B's private ``action`` events; now it ends with the
    ``seat_left`` of its seat, and its reconnection is refused."""
    game = "ducale"
    api = ApiClient(server.base)
    match_id, host, token_a = waiting_match(api, game, seats=4)
    response, url = seat_stream(server, game, match_id, token_a, how)
    assert response.status_code == 200
    reader = Reader(response)
    reader.until(lambda got: any(e["type"] == "seat_joined" for _, e in got))
    # someone takes seat 3 first: the hub then knows the match, and under
    # gevent writes the next batches to the idle stream itself (Shortcut)
    assert api.join(game, match_id, 3, "C").status_code == 201
    reader.until(lambda got: any(e["type"] == "seat_joined" and e["seat"] == 3 for _, e in got))
    others = {e.get("match") for _, e in reader.events} - {match_id, None}
    tokens = leave_and_replace(api, game, match_id, token_a)
    tokens[0] = host
    play_until_seat_acted(api, game, match_id, tokens)
    assert reader.ended.wait(5), "the stream went on after its seat was left"
    response.close()
    mine = [(i, e) for i, e in reader.events if e.get("match", match_id) == match_id]
    left = [i for i, e in mine if e["type"] == "seat_left" and e["seat"] == 1]
    assert left, reader.events
    assert mine[-1][0] == left[0], "events after the seat changed hands"
    assert not [e for _, e in mine if e["type"] == "action"]
    # EventSource reconnects with Last-Event-ID: refused (it stops for good)
    headers = {"Last-Event-ID": str(left[0]) if how != "multi" else f"{left[0]}.1"}
    assert others or how != "multi"
    if how == "token":
        url = server.url(f"/v1/games/{game}/matches/{match_id}/stream")
        headers |= bearer(token_a)
    again = requests.get(url, headers=headers, timeout=10)
    assert again.status_code in (401, 403), again.text
    assert again.json()["code"] in ("invalid_ticket", "invalid_token")


@pytest.mark.parametrize("multi", [False, True])
def test_a_ticket_taken_before_leaving_follows_nothing_as_the_seat(live, multi):
    """Point 2: A takes a ticket as seat 1 and leaves before using it; B
    takes seat 1. The ticket opened a stream as seat 1: B's events."""
    game = "pacal"
    api = ApiClient(live.base)
    match_id, host, token_a = waiting_match(api, game)
    if multi:
        body = {"matches": [{"game": game, "match": match_id, "token": token_a}]}
        ticket = requests.post(live.url("/v1/stream-tickets"), json=body, timeout=10)
    else:
        ticket = requests.post(
            live.url(f"/v1/games/{game}/matches/{match_id}/stream-tickets"),
            headers=bearer(token_a),
            timeout=10,
        )
    assert ticket.status_code == 201, ticket.text
    tokens = leave_and_replace(api, game, match_id, token_a)
    tokens[0] = tokens[0] or host
    play_until_seat_acted(api, game, match_id, tokens)
    with requests.get(live.url(ticket.json()["stream"]), stream=True, timeout=10) as opened:
        assert opened.status_code == 401, "the ticket still follows as the seat"
        assert opened.json()["code"] == "invalid_ticket"


def test_a_view_long_poll_ends_when_its_seat_is_left(live):
    """Point 2: A waits for seat 1's turn (``GET ...?wait=``), then leaves
    on another connection; B takes seat 1. The wait answered, at its end,
    with seat 1's view: B's hand. Now it ends at once, refused as any
    request with A's token is."""
    game = "ducale"
    api = ApiClient(live.base)
    match_id, _host, token_a = waiting_match(api, game)
    url = live.url(f"/v1/games/{game}/matches/{match_id}")
    with ThreadPoolExecutor(1) as pool:
        started = time.monotonic()
        waited = pool.submit(
            requests.get, url, params={"wait": 6}, headers=bearer(token_a), timeout=30
        )
        time.sleep(0.5)
        token_b = leave_and_replace(api, game, match_id, token_a)[1]
        answer = waited.result()
        elapsed = time.monotonic() - started
    hand_b = api.get(game, match_id, token_b).json()["view"]["hand"]
    assert hand_b
    assert answer.status_code == 403, answer.text[:300]
    assert answer.json()["code"] == "invalid_token"
    assert elapsed < 3, f"the wait went on for {elapsed:.1f} s"


def test_a_view_long_poll_counts_against_the_token_cap(live_server):
    """Point 5: a view's long poll holds a follower like a stream does."""
    server = live_server(FOLLOWERS_PER_TOKEN=1)
    api = ApiClient(server.base)
    match_id, _host, token_a = waiting_match(api, "dekal")
    stream = requests.get(
        server.url(f"/v1/games/dekal/matches/{match_id}/stream"),
        headers=bearer(token_a),
        stream=True,
        timeout=10,
    )
    assert stream.status_code == 200
    poll = requests.get(
        server.url(f"/v1/games/dekal/matches/{match_id}"),
        params={"wait": 2},
        headers=bearer(token_a),
        timeout=10,
    )
    stream.close()
    assert poll.status_code == 429, poll.text[:300]
    assert poll.json()["code"] == "too_many_followers"


WAITS = 160
CONNECTIONS = 150
HELD_S = 10  # how long the admitted waits hold their connections


def test_160_view_long_polls_from_one_token_leave_others_answered(tmp_path, redis_url):
    """Point 5 at the issue's scale: one gunicorn worker of 150 connections
    (the defaults otherwise: 8 followers per token); one token sends 160
    ``GET ...?wait=`` at once (10 s here: longer than the probes take). With
    30 they held every connection for 30 s, and nobody else was answered; now
    the token's 9th and later are refused at once (429) and another client is
    answered in under a second."""
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "LUDOTHEQUE_WORKER_CONNECTIONS": str(CONNECTIONS),
        "LUDOTHEQUE_RATE_LIMITS": "0",
    }
    server = start_serve(tmp_path, port, env, workers=1)
    try:
        base = f"http://127.0.0.1:{port}"
        api = ApiClient(base)
        # seat 2 stays open: the match waits, and so does every wait of seat 1
        created = api.create("dekal", {"players": [{"name": "Host"}, {}, {}]})
        match_id = created.json()["id"]
        token = api.join("dekal", match_id, 1, "A").json()["token"]
        url = f"{base}/v1/games/dekal/matches/{match_id}"

        def wait() -> int:
            try:
                return requests.get(
                    url, params={"wait": HELD_S}, headers=bearer(token), timeout=40
                ).status_code
            except requests.RequestException:
                return 0

        with ThreadPoolExecutor(WAITS) as pool:
            waits = [pool.submit(wait) for _ in range(WAITS)]
            # the token's 9th and later are refused; its first 8 wait
            wait_until(lambda: sum(w.done() for w in waits) >= WAITS - 8, timeout=HELD_S)
            slowest = 0.0
            for _ in range(5):
                started = time.monotonic()
                try:
                    assert requests.get(f"{base}/v1/games", timeout=5).status_code == 200
                    view = requests.get(url, timeout=5)
                    assert view.status_code == 200
                except requests.Timeout:
                    pytest.fail("another client was not answered within 5 s")
                slowest = max(slowest, time.monotonic() - started)
                time.sleep(0.2)
            assert sum(not w.done() for w in waits) == 8, "the probes ran while 8 waits held"
            statuses = [w.result() for w in waits]
        assert slowest < 1.0, f"another client waited {slowest:.2f} s"
        assert statuses.count(429) == WAITS - 8, sorted(set(statuses))
        assert statuses.count(200) == 8
    finally:
        log = interrupt(server)
    assert "Traceback" not in log, log


def test_a_used_ticket_does_not_replay_the_past(server):
    """Point 9: seat 0 follows with a ticket and sees its own private
    ``action`` event; a thief holding the used ticket reconnects with
    ``Last-Event-ID: 0`` (while the stream runs, then after it closed) and
    got the whole log as seat 0. Now a used ticket resumes only after what
    its stream has delivered."""
    game = "gaudi"
    api = ApiClient(server.base)
    created = api.create(game, {"players": [{"name": "Ada"}, {"name": "Bob"}]})
    match_id = created.json()["id"]
    tokens = [s["token"] for s in created.json()["seats"]]
    ticket = requests.post(
        server.url(f"/v1/games/{game}/matches/{match_id}/stream-tickets"),
        headers=bearer(tokens[0]),
        timeout=10,
    ).json()
    url = server.url(ticket["stream"])
    response = requests.get(url, stream=True, timeout=30)
    reader = Reader(response)
    reader.until(lambda got: any(e["type"] == "match_started" for _, e in got))
    first = reader.events[-1][0]
    # seat 0, 1, 0 act: the last one's batch, under gevent, reaches the idle
    # stream through the hub's Shortcut (the hub knows the match by then)
    for turn in range(3):
        seat = api.get(game, match_id).json()["to_act"][0]
        legal = api.legal(game, match_id, tokens[seat]).json()["actions"]
        assert api.act(game, match_id, tokens[seat], legal[0]).status_code == 200
        actions = turn // 2 + 1 if seat == 0 else None
        if actions:
            reader.until(lambda got, n=actions: sum(e["type"] == "action" for _, e in got) >= n)
        else:
            time.sleep(0.3)
    assert sum(e["type"] == "action" for _, e in reader.events) == 2
    private = max(i for i, e in reader.events if e["type"] == "action")
    time.sleep(0.3)
    delivered = reader.events[-1][0]

    def replayed() -> list[tuple[int, dict]]:
        thief = requests.get(url, headers={"Last-Event-ID": "0"}, stream=True, timeout=30)
        assert thief.status_code == 200, thief.text[:300]
        stolen = Reader(thief)
        time.sleep(1.0)
        stolen.hang_up()
        return stolen.events

    while_open = replayed()
    assert all(i > max(first, private) for i, _ in while_open), while_open
    reader.hang_up()
    reader.ended.wait(5)
    time.sleep(0.5)
    after_close = replayed()
    assert all(i > max(first, private) for i, _ in after_close), after_close
    assert not [e for i, e in after_close if i <= delivered and e["type"] == "action"]


def test_a_browser_eventsource_as_a_seat_stops_for_good_when_the_seat_changes_hands(live, browser):
    """Point 2, as a page sees it: Chromium follows seat 1 with a ticket;
    A leaves and B takes the seat. The EventSource got B's events; now its
    last message is its seat's ``seat_left``, its reconnection is refused and
    it closes for good (``readyState`` CLOSED): the page's ``onerror`` runs."""
    game = "ducale"
    api = ApiClient(live.base)
    match_id, host, token_a = waiting_match(api, game)
    ticket = requests.post(
        live.url(f"/v1/games/{game}/matches/{match_id}/stream-tickets"),
        headers=bearer(token_a),
        timeout=10,
    ).json()
    page = browser.new_page()
    try:
        page.goto(live.url("/v1/games"))
        page.evaluate(
            """(url) => {
                window.got = []; window.stopped = false;
                const source = new EventSource(url);
                source.onmessage = (m) => window.got.push(JSON.parse(m.data));
                source.onerror = () => {
                    if (source.readyState === EventSource.CLOSED) window.stopped = true;
                };
            }""",
            live.url(ticket["stream"]),
        )
        page.wait_for_function("() => window.got.some((e) => e.type === 'seat_joined')")
        tokens = leave_and_replace(api, game, match_id, token_a)
        tokens[0] = host
        play_until_seat_acted(api, game, match_id, tokens)
        page.wait_for_function("() => window.stopped", timeout=10_000)
        got = page.evaluate("() => window.got")
    finally:
        page.close()
    assert got[-1]["type"] == "seat_left" and got[-1]["seat"] == 1, got[-3:]
    assert not [e for e in got if e["type"] == "action"]


# -- the adversary's second round -------------------------------------------------
def test_a_ticket_follows_each_match_once(live):
    """A multi-match ticket naming one match twice (a hot-seat page following
    both seats of a table): one entry got no events, the stream outlived the
    match, and a stolen used ticket replayed the stuck entry's past."""
    api = ApiClient(live.base)
    created = api.create("ducale", {"players": [{"name": "A"}, {"name": "B"}]}).json()
    a, b = (s["token"] for s in created["seats"])
    body = {
        "matches": [
            {"game": "ducale", "match": created["id"], "token": a},
            {"game": "ducale", "match": created["id"], "token": b},
        ]
    }
    answer = requests.post(live.url("/v1/stream-tickets"), json=body, timeout=10)
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "invalid_request"


def test_a_resigned_seat_sees_and_follows_as_a_spectator(live):
    """A resigner in a three-seat Ducale kept its seat's view and stream: it
    could tell another player every card the bot that plays its seat drew.
    Resigning gives the seat to a bot: what the seat's holder had stops, as
    when a seat is left (its stream ends at its 'resigned', its tickets get
    401); it sees and follows on as a spectator."""
    api = ApiClient(live.base)
    players = [{"name": "A"}, {"name": "B"}, {"name": "C"}]
    created = api.create("ducale", {"players": players}).json()
    match_id, tokens = created["id"], [s["token"] for s in created["seats"]]
    url = live.url(f"/v1/games/ducale/matches/{match_id}/stream")
    ticket = requests.post(url + "-tickets", headers=bearer(tokens[0]), timeout=10).json()
    stream = Reader(requests.get(url, headers=bearer(tokens[0]), stream=True, timeout=30))
    stream.until(lambda events: events)
    assert api.resign("ducale", match_id, tokens[0]).status_code == 200
    assert stream.ended.wait(10), "the resigned seat's stream went on"
    assert stream.events[-1][1]["type"] == "resigned"
    for _ in range(50):  # a worker of another test may play the bot's turn meanwhile
        seen = api.get("ducale", match_id, tokens[0]).json()
        spectator = api.get("ducale", match_id).json()
        if seen["version"] == spectator["version"]:
            break
    assert seen["your_seat"] == 0 and seen["view"] == spectator["view"]
    for _ in range(30):  # until the bot is to act for seat 0: its hand is not listed
        if 0 in api.get("ducale", match_id).json()["to_act"]:
            break
        to_act = api.get("ducale", match_id).json()["to_act"][0]
        legal = api.legal("ducale", match_id, tokens[to_act]).json()["actions"]
        api.act("ducale", match_id, tokens[to_act], legal[0])
    assert api.legal("ducale", match_id, tokens[0]).json()["actions"] == []
    with requests.get(live.url(ticket["stream"]), stream=True, timeout=10) as opened:
        assert opened.status_code == 401, "a ticket taken before resigning follows as the seat"
    after = api.events("ducale", match_id, tokens[0]).json()["events"]
    spectators = api.events("ducale", match_id).json()["events"]  # a worker may play on
    assert after == spectators[: len(after)]


@pytest.mark.parametrize("ending", ["match_over", "seat_left"])
def test_a_cursor_past_the_logs_end_still_ends_with_the_match_or_the_seat(live, ending):
    """A stream opened with ?after=1000 sent nothing (right) but outlived the
    match's end, and a seat's change of hands: events past 1000 would have
    gone on as the seat (adversary, round 2)."""
    api = ApiClient(live.base)
    if ending == "match_over":
        created = api.create("ducale", {"players": [{"name": "A"}, {"name": "B"}]}).json()
        match_id, token = created["id"], created["seats"][0]["token"]
    else:
        match_id, _, token = waiting_match(api, "ducale")
    url = live.url(f"/v1/games/ducale/matches/{match_id}/stream")
    stream = Reader(
        requests.get(url, params={"after": 1000}, headers=bearer(token), stream=True, timeout=30)
    )
    time.sleep(0.3)
    if ending == "match_over":
        assert api.resign("ducale", match_id, token).status_code == 200
    else:
        seat = 1  # waiting_match: A holds seat 1
        assert api.leave("ducale", match_id, seat, token).status_code == 200
    assert stream.ended.wait(10), "the stream outlived its " + ending
    # taken as the log's end: what came after it, the seat's last event
    last = "resigned" if ending == "match_over" else "seat_left"
    assert [e["type"] for _, e in stream.events][-1:] == [last]
