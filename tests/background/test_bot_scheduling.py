"""Fair bot scheduling (issue 15, point 3; docs/operators/bot-scheduling.md): people
first, then the creating addresses and their matches in turn; a cap on live
bot seats per creating address; a bot time budget per match; several worker
processes under `ludotheque serve --bot-workers N`.

Matches are made over HTTP (clients name their address in X-Forwarded-For,
as behind one proxy); the tests then take turns from the queue exactly as a
worker does (claim, play, release) and look at the order, on a Redis of
their own so that no other test's match is queued."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
import redis
import requests

from service.background.turns import ServerTurns
from service.store.embedded import free_port
from service.store.matches import match_key
from service.store.scheduling import LEASES, READY_BOTS, READY_PEOPLE, live_key
from tests.support.servers import LiveServer

GAME = "dekal"
BOTS = {"players": [{"bot": "random"}, {"bot": "random"}]}
PERSON = {"players": [{"name": "Ada"}, {"bot": "random"}]}


def serve(redis_client: redis.Redis, **config: object) -> LiveServer:
    url = "redis://{host}:{port}/0".format(**redis_client.connection_pool.connection_kwargs)
    return LiveServer({"REDIS_URL": url, "TRUSTED_PROXIES": 1, **config})


@pytest.fixture
def server(private_redis) -> Iterator[LiveServer]:
    live = serve(private_redis)
    yield live
    live.stop()


def create(server: LiveServer, address: str, body: dict) -> requests.Response:
    return server.http.post(
        server.url(f"/v1/games/{GAME}/matches"),
        json=body,
        headers={"X-Forwarded-For": address},
        timeout=30,
    )


def created(server: LiveServer, address: str, body: dict) -> str:
    answer = create(server, address, body)
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def serve_turns(turns: ServerTurns, count: int) -> list[str]:
    """Take ``count`` turns from the queue as a worker does; the matches served."""
    served, rng = [], random.Random(1)
    for _ in range(count):
        match_id = turns.scheduler.claim(time.time(), 30)
        if match_id is None:
            break
        turns.play(match_id, 0.01, rng)
        turns.scheduler.release(match_id)
        served.append(match_id)
    return served


def turns_of(server: LiveServer) -> ServerTurns:
    return server.app.extensions["ludotheque.turns"]


def test_a_match_with_a_person_goes_before_matches_of_bots_only(server):
    flood = [created(server, "198.51.100.7", BOTS) for _ in range(5)]
    person = created(server, "203.0.113.9", PERSON)  # queued last
    served = serve_turns(turns_of(server), 3)
    assert served[0] == person
    assert set(served[1:]) <= set(flood)


def test_creating_addresses_take_turns_whatever_their_number_of_matches(server):
    flood = [created(server, "198.51.100.7", BOTS) for _ in range(4)]
    other = created(server, "203.0.113.9", BOTS)  # queued after the four
    served = serve_turns(turns_of(server), 10)
    # each address every other turn; first come, first served would give 2 of 10
    assert Counter(served)[other] == 5, served
    assert set(served) == {*flood, other}


def test_matches_of_one_address_take_turns_whatever_their_turns_came_due(server):
    ids = [created(server, "198.51.100.7", BOTS) for _ in range(3)]
    served = serve_turns(turns_of(server), 9)
    assert Counter(served) == Counter({match_id: 3 for match_id in ids}), served
    # a match played goes behind the others: no match twice in a row
    assert all(a != b for a, b in pairwise(served))


def test_a_match_whose_bot_budget_is_spent_gets_random_moves(private_redis):
    server = serve(private_redis, BOT_MATCH_BUDGET_S=0.05)
    try:
        match_id = created(server, "198.51.100.7", {"players": [{"bot": "mcts"}] * 2})
        turns = turns_of(server)
        rng = random.Random(3)
        for _ in range(6):
            assert turns.scheduler.claim(time.time(), 30) == match_id
            # one second of thinking per move, were the match's budget not spent
            assert turns.play(match_id, 1.0, rng)
            turns.scheduler.release(match_id)
        stored = turns.store.load(match_id)
        assert stored.version == 7
        # the first move thought for what was left (0.05 s), the others were random
        assert 0.04 <= stored.match["bot_time_s"] < 0.5, stored.match["bot_time_s"]
    finally:
        server.stop()


def test_live_bot_seats_are_capped_per_creating_address(private_redis):
    server = serve(private_redis, BOT_SEATS_PER_ADDRESS=3)
    try:
        first = created(server, "198.51.100.7", {"players": [{"bot": "random"}] * 2})
        waiting = created(server, "198.51.100.7", {"players": [{"bot": "random"}, {}, {}]})
        refused = create(server, "198.51.100.7", BOTS)
        assert refused.status_code == 429
        assert refused.headers["Content-Type"] == "application/problem+json"
        assert int(refused.headers["Retry-After"]) > 0
        assert refused.json()["code"] == "bot_seats_exceeded"
        # an open seat given to a bot counts against the joiner who gave it, not
        # against the match's creator (issue 31, point 6)
        join = server.http.post(
            server.url(f"/v1/games/{GAME}/matches/{waiting}/seats/1"),
            json={"bot": "random"},
            headers={"X-Forwarded-For": "203.0.113.9"},
        )
        assert join.status_code == 201, join.text
        assert private_redis.zcard(live_key("203.0.113.9")) == 1
        assert private_redis.zcard(live_key("198.51.100.7")) == 3
        # a person still joins, and another address still gets its bots
        joined = server.http.post(
            server.url(f"/v1/games/{GAME}/matches/{waiting}/seats/2"), json={"name": "Bob"}
        )
        assert joined.status_code == 201
        assert create(server, "203.0.113.9", BOTS).status_code == 201
        # once a match is over, its bot seats no longer count
        turns = turns_of(server)
        url = server.url(f"/v1/games/{GAME}/matches/{first}")
        for _ in range(100):
            if server.http.get(url).json()["status"] == "finished":
                break
            serve_turns(turns, 20)
        assert server.http.get(url).json()["status"] == "finished"
        assert private_redis.zscore(READY_BOTS, first) is None
        assert private_redis.zcard(live_key("198.51.100.7")) == 1
        assert create(server, "198.51.100.7", BOTS).status_code == 201
    finally:
        server.stop()


def test_a_dead_workers_turn_is_taken_over_and_the_queue_is_left_empty(server, private_redis):
    match_id = created(server, "198.51.100.7", PERSON)
    turns = turns_of(server)
    assert turns.scheduler.claim(time.time(), 0.5) == match_id  # then its worker dies
    assert turns.scheduler.claim(time.time(), 0.5) is None, "leased: nobody else takes it"
    time.sleep(0.6)
    assert turns.scheduler.claim(time.time(), 30) == match_id, "the lease ran out"
    assert turns.play(match_id, 0.01, random.Random(1))
    turns.scheduler.release(match_id)
    # the bot revealed; now only Ada is to act: nothing is owed
    assert private_redis.zscore(READY_PEOPLE, match_id) is None
    assert private_redis.zcard(LEASES) == 0
    assert int(private_redis.hget(match_key(match_id), "v")) == 2


def test_serve_runs_as_many_bot_workers_as_asked(tmp_path, private_redis):
    port = free_port()
    url = "redis://{host}:{port}/0".format(**private_redis.connection_pool.connection_kwargs)
    env = {**os.environ, "REDIS_URL": url}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    ludotheque = str(Path(sys.executable).with_name("ludotheque"))
    server = subprocess.Popen(
        [ludotheque, "serve", "--port", str(port), "--bot-workers", "3"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
            commands = [Path(f"/proc/{child}/cmdline").read_bytes() for child in children]
            workers = [c for c in commands if c.split(b"\0")[-3:-1] == [b"service.cli", b"worker"]]
            if len(workers) == 3:
                break
            time.sleep(0.1)
        assert len(workers) == 3, commands
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_an_action_in_a_match_with_a_bot_costs_two_round_trips_as_before(
    private_redis, monkeypatch
):
    """The write (one script, on a match this process remembers) and the
    schedule (one script): the scheduler adds no round trip to an action."""
    from service.app import create_app

    url = "redis://{host}:{port}/0".format(**private_redis.connection_pool.connection_kwargs)
    http = create_app({"REDIS_URL": url, "RATELIMIT_ENABLED": False}).test_client()
    sent = []
    original = redis.connection.AbstractConnection.send_packed_command

    def send(connection, command, check_health=True):
        sent.append(command)
        return original(connection, command, check_health)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", send)
    for _ in range(2):  # the first loads the scripts and opens the connections
        match = http.post(f"/v1/games/{GAME}/matches", json=PERSON).get_json()
        path = f"/v1/games/{GAME}/matches/{match['id']}"
        headers = {"Authorization": f"Bearer {match['seats'][0]['token']}"}
        action = http.get(path + "/legal-actions", headers=headers).get_json()["actions"][0]
        sent.clear()
        assert http.post(path + "/actions", json=action, headers=headers).status_code == 200
    assert len(sent) == 2


def test_a_late_nothing_owed_does_not_unqueue_the_turn_a_later_move_owes(server, private_redis):
    """Each write schedules after its commit, in a round trip of its own: the
    worker's "nothing owed" (after the bot's move, version 2) can arrive
    after the person's "the bot owes" (after their move, version 3)."""
    match_id = created(server, "203.0.113.9", PERSON)
    turns = turns_of(server)
    match = turns.store.load(match_id).match
    turns.scheduler.schedule(match, 3, time.time())  # the person's move
    turns.scheduler.schedule(match, 2, None)  # the bot's, late
    assert private_redis.zscore(READY_PEOPLE, match_id) is not None
    turns.scheduler.schedule(match, 4, None)  # the bot's next move: now nothing is owed
    assert private_redis.zscore(READY_PEOPLE, match_id) is None
