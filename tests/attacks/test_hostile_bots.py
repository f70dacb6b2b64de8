"""Hostile clients against the bots (issue 15): a flood of bot-only matches
from one address must not delay another client's bot moves, and the cap of
live bot seats per address refuses the flood.

The attack of issue 15 was thirty Dékal matches of six ``mcts`` bots to
1,000 points created at once, which delayed the first bot moves of an
unrelated person-against-``random`` match from 0.21 s to 120 s: one worker
played every bot turn in due order, for everyone. Here the same attack runs
with less thinking (0.3 s per move instead of 1 s), two workers in threads
sharing the queue, on a Redis of its own. Served in turn with the thirty
matches, the victim's bot would wait about 30 x 0.3 / 2 = 4.5 s per move;
served first, at most the 0.3 s of a move already under way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
import requests

from service.store.embedded import EmbeddedRedis
from tests.support.problems import assert_problem
from tests.support.servers import LiveServer, bot_workers, create_from

GAME = "dekal"
ATTACKER = "198.51.100.7"
VICTIM = "203.0.113.9"
FLOOD = {"players": [{"bot": "mcts"}] * 6, "options": {"target_score": 1000}}
THINKING_S = 0.3  # per mcts move; issue 15's server used 1 s
DELAY_BOUND_S = 1.5  # the victim's bot waits at most this long


@pytest.fixture(scope="module")
def module_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis for this module alone: the flood stays out of other tests' queue."""
    with EmbeddedRedis(tmp_path_factory.mktemp("hostile-bots"), persist=False) as url:
        yield url


@pytest.fixture
def private_redis(module_redis: str) -> str:
    """That Redis, emptied: each test starts with no match and no bot seat."""
    with redis.Redis.from_url(module_redis) as client:
        client.flushdb()
    return module_redis


def serve(live_server: Callable[..., LiveServer], redis_url: str, **config: object) -> LiveServer:
    # Each client names its address in X-Forwarded-For, as behind one proxy.
    return live_server(REDIS_URL=redis_url, TRUSTED_PROXIES=1, **config)


def flood(server: LiveServer, count: int) -> list[requests.Response]:
    """``count`` bot-only matches from the attacker, created at once."""
    with ThreadPoolExecutor(max_workers=10) as pool:
        return list(pool.map(lambda _: create_from(server, ATTACKER, GAME, FLOOD), range(count)))


def bot_delays(server: LiveServer, moves: int) -> list[float]:
    """The victim (a person against a ``random`` bot) plays until its bot has
    moved ``moves`` times; each delay runs from the moment the victim sees
    its bot owe a move to the moment it sees the match move on without it."""
    http = requests.Session()
    http.headers["X-Forwarded-For"] = VICTIM
    created = create_from(
        server, VICTIM, GAME, {"players": [{"name": "victim"}, {"bot": "random"}]}
    )
    assert created.status_code == 201, created.text
    match = created.json()
    url = server.url(f"/v1/games/{GAME}/matches/{match['id']}")
    http.headers["Authorization"] = f"Bearer {match['seats'][0]['token']}"
    delays: list[float] = []
    owed_since, owed_version = None, -1
    deadline = time.monotonic() + 120
    while len(delays) < moves:
        now = time.monotonic()
        assert now < deadline, f"the victim's bot moved {len(delays)} times in 120 s"
        if owed_since is not None:
            if match["version"] != owed_version:
                delays.append(now - owed_since)
                owed_since = None
            else:
                assert now - owed_since < DELAY_BOUND_S, f"after {delays}, still waiting"
        if owed_since is None and 1 in match["to_act"]:
            owed_since, owed_version = now, match["version"]
        if 0 in match["to_act"]:
            legal = http.get(url + "/legal-actions", timeout=10).json()
            played = http.post(
                url + "/actions",
                json=legal["actions"][0],
                headers={"If-Match": str(match["version"])},
                timeout=10,
            )
            if played.status_code == 200:
                match = played.json()
                owed_version = match["version"]  # our move, not the bot's
                continue
        time.sleep(0.01)
        match = http.get(url, timeout=10).json()
        assert match["status"] == "active", match["status"]
    return delays


def test_a_flood_of_bot_matches_from_one_address_does_not_delay_another_clients_bots(
    private_redis, live_server
):
    # the cap lifted: the schedule alone must keep the victim's bot moving
    server = serve(live_server, private_redis, BOT_SEATS_PER_ADDRESS=0)
    created = flood(server, 30)
    assert [answer.status_code for answer in created] == [201] * 30
    with bot_workers(server.app, count=2, budget_s=THINKING_S):
        time.sleep(1)  # the workers are busy with the flood
        delays = bot_delays(server, moves=8)
    assert max(delays) < DELAY_BOUND_S, delays


def test_the_cap_of_live_bot_seats_per_address_refuses_the_flood(private_redis, live_server):
    server = serve(live_server, private_redis, BOT_SEATS_PER_ADDRESS=12)
    answers = flood(server, 30)
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [201] * 2 + [429] * 28, statuses
    refused = next(answer for answer in answers if answer.status_code == 429)
    problem = assert_problem(refused, 429, "bot_seats_exceeded")
    assert refused.headers["Retry-After"].isdigit()
    assert (problem["held"], problem["cap"]) == (12, 12)
    # another address is not refused
    victim = create_from(
        server, VICTIM, GAME, {"players": [{"name": "victim"}, {"bot": "random"}]}
    )
    assert victim.status_code == 201, victim.text
    # nor is a match without bots from the attacker
    assert create_from(server, ATTACKER, GAME, {"players": [{"name": "a"}, {}]}).status_code == 201
