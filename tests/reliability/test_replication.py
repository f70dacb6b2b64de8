"""LUDOTHEQUE_REDIS_MIN_REPLICAS: an action is confirmed only once replicas
have it; unconfirmed, it answers 503 and its Idempotency-Key retry returns
the one true outcome. Against a real primary, two replicas and three
Sentinels, the service connecting through a redis+sentinel:// URL."""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable, Iterator

import pytest
import redis

from service.store.matches import match_key
from service.store.scheduling import READY_BOTS, READY_PEOPLE, TIMERS
from service.store.sentinel import parse_sentinel_url
from tests.support.client import ApiClient
from tests.support.matches import create_match, play_out, replay_from_log
from tests.support.problems import assert_problem
from tests.support.sentinels import SentinelGroup
from tests.support.servers import LiveServer, bot_workers

# How long a write waits for its replicas: short where the test pauses them
# (each unconfirmed write waits it out), long where they must confirm on a
# loaded machine (a full run once saw 300 ms pass with both replicas up).
TIMEOUT_MS = 2000
PATIENT_MS = 20000


@pytest.fixture(scope="module")
def group(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SentinelGroup]:
    sentinels = SentinelGroup(tmp_path_factory.mktemp("sentinel")).start()
    yield sentinels
    sentinels.close()


GAME = "dekal"


def serve(
    live_server: Callable[..., LiveServer],
    group: SentinelGroup,
    min_replicas: int,
    timeout_ms: int = TIMEOUT_MS,
) -> LiveServer:
    return live_server(
        REDIS_URL=group.url,
        REDIS_MIN_REPLICAS=min_replicas,
        REDIS_REPLICAS_TIMEOUT_MS=timeout_ms,
    )


def next_move(api: ApiClient, match_id: str, tokens: list[str]) -> tuple[int, dict, int]:
    match = api.get(GAME, match_id).json()
    seat = match["to_act"][0]
    return seat, api.legal(GAME, match_id, tokens[seat]).json()["actions"][0], match["version"]


def actions_logged(group: SentinelGroup, match_id: str) -> list[dict]:
    with redis.Redis(port=group.primary()) as primary:
        stored, state, events = replay_from_log(primary, match_id)
    assert state == stored["state"], "the state is the replay of its log"
    return [event for event in events if event["type"] == "action"]


def retry_until_answered(api: ApiClient, call, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while True:
        answer = call()
        if answer.status_code != 503:
            return answer
        assert time.monotonic() < deadline, "still 503"
        time.sleep(0.2)


def test_a_sentinel_url_names_its_sentinels_service_and_database():
    found = parse_sentinel_url("redis+sentinel://:s%40cret@a:26380,b/games/2?sentinel_password=x")
    assert found["sentinels"] == [("a", 26380), ("b", 26379)]
    assert (found["service"], found["db"], found["password"]) == ("games", 2, "s@cret")
    assert found["sentinel_password"] == "x" and not found["ssl"]
    found = parse_sentinel_url("rediss+sentinel://[::1]:26381,[::1]")
    assert found["sentinels"] == [("::1", 26381), ("::1", 26379)]
    assert (found["service"], found["db"], found["ssl"]) == ("mymaster", 0, True)


def test_a_confirmed_action_is_already_on_the_replicas(group, live_server):
    server = serve(live_server, group, min_replicas=2, timeout_ms=PATIENT_MS)
    api = ApiClient(server.base)
    match_id, tokens = create_match(api, GAME, seed=1)
    for _ in range(5):
        seat, action, _ = next_move(api, match_id, tokens)
        answer = api.act(GAME, match_id, tokens[seat], action)
        assert answer.status_code == 200, answer.text
        for port in group.replicas():
            with redis.Redis(port=port) as replica:
                stored = replica.hget(match_key(match_id), "v")
                assert int(stored) == answer.json()["version"]


def test_an_action_the_replicas_do_not_confirm_answers_503_and_its_retry_applies_it_once(
    group, live_server
):
    server = serve(live_server, group, min_replicas=1)
    api = ApiClient(server.base)
    match_id, tokens = create_match(api, GAME, seed=2)
    play_out(api, GAME, match_id, tokens, random.Random(2), moves=3)
    before = len(actions_logged(group, match_id))
    seat, action, version = next_move(api, match_id, tokens)
    paused = group.replicas()
    for port in paused:
        group.signal(port, signal.SIGSTOP)
    try:
        started = time.monotonic()
        answer = api.act(GAME, match_id, tokens[seat], action, Idempotency_Key="k1")
        assert_problem(answer, 503, "store_unavailable")
        assert answer.headers["Retry-After"] == "1"
        assert time.monotonic() - started < 5, "a bounded wait"
        again = api.act(GAME, match_id, tokens[seat], action, Idempotency_Key="k1")
        assert_problem(again, 503, "store_unavailable")  # still not replicated
    finally:
        for port in paused:
            group.signal(port, signal.SIGCONT)
    answer = retry_until_answered(
        api, lambda: api.act(GAME, match_id, tokens[seat], action, Idempotency_Key="k1")
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["version"] == version + 1
    logged = actions_logged(group, match_id)
    assert len(logged) == before + 1, "applied once"
    assert (logged[-1]["seat"], logged[-1]["action"]) == (seat, action)


def test_a_failover_after_an_unconfirmed_action_leaves_it_applied_once_or_not_at_all(
    group, live_server
):
    server = serve(live_server, group, min_replicas=1)
    api = ApiClient(server.base)
    match_id, tokens = create_match(api, GAME, seed=3)
    play_out(api, GAME, match_id, tokens, random.Random(3), moves=3)
    before = len(actions_logged(group, match_id))
    seat, action, version = next_move(api, match_id, tokens)
    old_primary, paused = group.primary(), group.replicas()
    for port in paused:
        group.signal(port, signal.SIGSTOP)
    answer = api.act(GAME, match_id, tokens[seat], action, Idempotency_Key="k2")
    assert_problem(answer, 503, "store_unavailable")
    group.signal(old_primary, signal.SIGKILL)
    for port in paused:
        group.signal(port, signal.SIGCONT)
    answer = retry_until_answered(
        api, lambda: api.act(GAME, match_id, tokens[seat], action, Idempotency_Key="k2")
    )
    assert answer.status_code == 200, answer.text
    assert group.primary() != old_primary, "the Sentinels failed over"
    assert answer.json()["version"] == version + 1
    logged = actions_logged(group, match_id)
    assert len(logged) == before + 1, "applied once"
    assert (logged[-1]["seat"], logged[-1]["action"]) == (seat, action)
    play_out(api, GAME, match_id, tokens, random.Random(4), moves=3)
    group.restart(old_primary)
    group.wait_healthy()


def test_bots_play_to_the_end_when_every_write_waits_for_replicas(group, live_server):
    server = serve(live_server, group, min_replicas=2, timeout_ms=PATIENT_MS)
    api = ApiClient(server.base)
    with bot_workers(server.app):
        created = api.create(GAME, {"players": [{"bot": "random"}, {"bot": "random"}]}).json()
        deadline = time.monotonic() + 60
        while api.get(GAME, created["id"]).json()["status"] != "finished":
            assert time.monotonic() < deadline, "the bots did not finish"
            time.sleep(0.1)
    for port in group.replicas():
        with redis.Redis(port=port) as replica:
            for queue in (READY_PEOPLE, READY_BOTS, TIMERS):
                assert replica.zscore(queue, created["id"]) is None, "unscheduled everywhere"
    assert len(actions_logged(group, created["id"])) == 64
