"""Bot seats and turn clocks: the worker plays what the server owes, from
Redis, exactly once per turn, even when a worker dies mid-turn."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from service.background.turns import ServerTurns
from service.background.worker import Worker
from service.store.matches import match_key
from service.store.scheduling import LEASES, READY_BOTS, READY_PEOPLE, TIMERS
from tests.support.matches import replay_from_log
from tests.support.problems import assert_problem

GAME = "dekal"


@pytest.fixture
def turns(live) -> ServerTurns:
    return live.app.extensions["ludotheque.turns"]


@pytest.fixture
def workers(turns) -> Iterator[list[Worker]]:
    """Two workers in threads, sharing the due set as two processes would."""
    pool = [Worker(turns, budget_s=0.01, idle_s=0.01) for _ in range(2)]
    threads = [threading.Thread(target=w.run, daemon=True) for w in pool]
    for thread in threads:
        thread.start()
    yield pool
    for worker in pool:
        worker.stopping.set()
    for thread in threads:
        thread.join(timeout=10)


def wait_until(predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out")


def test_bots_fill_seats_and_a_match_of_bots_plays_itself_out(api, workers, redis_client):
    created = api.create(
        GAME, {"players": [{"bot": "random"}, {"bot": "greedy"}, {"bot": "mcts"}], "seed": 8}
    )
    assert created.status_code == 201, created.text
    match = created.json()
    assert match["status"] == "active"
    assert [s["bot"] for s in match["seats"]] == ["random", "greedy", "mcts"]
    assert all(not s["open"] and "token" not in s for s in match["seats"])
    finished = wait_until(
        lambda: (m := api.get(GAME, match["id"]).json())["status"] == "finished" and m, 120
    )
    assert finished["outcome"]["winners"]
    stored, state, events = replay_from_log(redis_client, match["id"])
    assert state == stored["state"], "the log replays to the stored state"
    versions = [e["version"] for e in events if e["type"] == "action"]
    assert len(versions) == len(set(versions)), "one action per version"
    for queue in (READY_PEOPLE, READY_BOTS, TIMERS, LEASES):
        assert redis_client.zscore(queue, match["id"]) is None


def test_a_human_plays_against_a_bot_and_never_waits_for_it(api, workers):
    created = api.create(GAME, {"players": [{"name": "Ada"}, {"bot": "mcts"}], "seed": 2}).json()
    match_id, token = created["id"], created["seats"][0]["token"]

    def my_turn_or_the_end():
        match = api.get(GAME, match_id, token).json()
        return match if match["status"] == "finished" or 0 in match["to_act"] else None

    while wait_until(my_turn_or_the_end)["status"] != "finished":
        action = api.legal(GAME, match_id, token).json()["actions"][0]
        started = time.monotonic()
        played = api.act(GAME, match_id, token, action)
        assert played.status_code == 200, played.text
        assert time.monotonic() - started < 1.0, "the answer does not wait for the bot"
    assert api.get(GAME, match_id).json()["outcome"]["winners"]


def test_an_open_seat_can_be_given_to_a_bot(api, workers):
    created = api.create(GAME, {"players": [{"name": "Ada"}, {}]}).json()
    given = api.join(GAME, created["id"], 1, None)
    assert given.status_code == 422  # a name or a bot is needed
    given = api.http.post(
        f"{api.base}/v1/games/{GAME}/matches/{created['id']}/seats/1", json={"bot": "random"}
    )
    assert given.status_code == 201, given.text
    assert given.json() == {"seat": 1, "name": None, "bot": "random"}
    # the bot reveals at once; then only Ada is to act
    wait_until(lambda: api.get(GAME, created["id"]).json()["to_act"] == [0])


@pytest.mark.parametrize(
    "player", [{"bot": "alphazero"}, {"bot": 3}, {"name": "Ada", "bot": "random"}]
)
def test_unknown_bots_are_refused(api, player):
    assert api.create(GAME, {"players": [player, {}]}).status_code == 422


def test_bots_offered_by_each_game_are_listed(api):
    games = api.http.get(f"{api.base}/v1/games").json()["games"]
    for game in games:
        assert "random" in game["bots"]
        assert set(game["bots"]) <= {"random", "greedy", "mcts"}


def test_a_turn_is_played_once_even_if_its_worker_dies(api, turns, redis_client):
    created = api.create(GAME, {"players": [{"name": "Ada"}, {"bot": "random"}]}).json()
    match_id = created["id"]
    version = int(redis_client.hget(match_key(match_id), "v"))
    # a worker claims the bot's turn (leasing it for 1 s), then dies
    while turns.scheduler.claim(time.time(), 1.0) != match_id:
        pass
    leased_until = redis_client.zscore(LEASES, match_id)
    survivor = Worker(turns, budget_s=0.01, idle_s=0.01)
    thread = threading.Thread(target=survivor.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: int(redis_client.hget(match_key(match_id), "v")) == version + 1)
        assert time.time() >= leased_until, "nobody plays a leased turn before the lease ends"
        time.sleep(0.3)
        assert int(redis_client.hget(match_key(match_id), "v")) == version + 1, "played once"
    finally:
        survivor.stopping.set()
        thread.join(timeout=10)


def test_turn_clock_plays_a_random_move_for_a_late_seat(api, workers, redis_client):
    created = api.create(
        GAME,
        {"players": [{"name": "Ada"}, {"name": "Bob"}], "options": {"turn_timeout_s": 1}},
    )
    assert created.status_code == 201, created.text
    match = created.json()
    assert match["options"]["turn_timeout_s"] == 1
    deadlines = match["deadlines"]
    assert all(d is not None and 0 < d - time.time() <= 1.1 for d in deadlines)
    token = match["seats"][0]["token"]
    action = api.legal(GAME, match["id"], token).json()["actions"][0]
    assert api.act(GAME, match["id"], token, action).status_code == 200
    after_ada = api.get(GAME, match["id"]).json()
    assert after_ada["deadlines"][0] is None and after_ada["deadlines"][1] == deadlines[1]
    # Bob does not act: the clock plays for him
    wait_until(lambda: api.get(GAME, match["id"]).json()["view"]["phase"] == "draft", 10)
    events = api.events(GAME, match["id"]).json()["events"]
    assert {"type": "timeout", "seat": 1} in [
        {k: e[k] for k in ("type", "seat") if k in e} for e in events
    ]


def test_invalid_turn_timeouts_are_refused(api):
    for value in (0, -1, "10", 10**9):
        body = {"players": [{}, {}], "options": {"turn_timeout_s": value}}
        assert_problem(api.create(GAME, body), 422, "invalid_request")


def test_a_table_of_bots_only_plays_ducale_with_a_bounded_stock(api):
    """Under the rulebook's stock, rebuilt without limit, uniformly random
    play of Ducale went on for hundreds of thousands of actions from 4 seeds
    in 15 (bench.engines), a log growing without end. A table of bots only
    gets the game's arena bound unless its creator sets one."""
    bots = {"players": [{"bot": "random"}, {"bot": "random"}]}
    assert api.create("ducale", bots).json()["options"]["max_stock_rebuilds"] == 3
    chosen = {**bots, "options": {"max_stock_rebuilds": 7}}
    assert api.create("ducale", chosen).json()["options"]["max_stock_rebuilds"] == 7
    person = {"players": [{"name": "Ada"}, {"bot": "random"}]}
    assert api.create("ducale", person).json()["options"]["max_stock_rebuilds"] is None
