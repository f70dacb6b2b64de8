"""Concurrency: many clients on one match, many matches at once. No accepted
action is lost or played twice, and every stored state equals a replay of
its log from the seed."""

from __future__ import annotations

import random
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import orjson
import pytest
import requests

from engines import GAMES
from service.store.matches import match_key
from tests.engines.conformance import new_match
from tests.support.client import ApiClient
from tests.support.matches import create_match, replay_from_log

GAME_NAMES = sorted(GAMES)
OPTIONS = {"ducale": {"target_score": 100}}


def create(api: ApiClient, game: str, players: int, seed: int) -> tuple[str, list[str]]:
    extra = {"options": OPTIONS[game]} if game in OPTIONS else {}
    return create_match(api, game, players, seed=seed, **extra)


def assert_replays(redis_client, match_id: str) -> tuple[dict, list[dict]]:
    """The stored match, checked against a replay of its log from its seed."""
    match, state, events = replay_from_log(redis_client, match_id)
    assert state == match["state"], "the stored state is not the replay of its log"
    return match, events


def test_fifty_clients_hammering_one_match(live, redis_client):
    """50 threads on one Dékal match, 25 a seat: plain, If-Match and retried
    Idempotency-Key requests all race; each accepted action lands once."""
    game, players, threads = "dekal", 2, 50
    api = ApiClient(live.base)
    match_id, tokens = create(api, game, players, seed=50)
    accepted: list[int] = []
    replayed: list[int] = []
    unexpected: list[str] = []
    deadline = time.monotonic() + 60

    def client(worker: int) -> None:
        mine = ApiClient(live.base)
        rng = random.Random(worker)
        token = tokens[worker % players]
        style = worker % 3
        while time.monotonic() < deadline:
            legal = mine.legal(game, match_id, token)
            if legal.status_code != 200:
                unexpected.append(legal.text)
                return
            actions = legal.json()["actions"]
            if not actions:
                if mine.get(game, match_id).json()["status"] == "finished":
                    return
                time.sleep(0.001)
                continue
            action = rng.choice(actions)
            headers = {}
            if style == 1:
                headers["If_Match"] = f'"{legal.json()["version"]}"'
            elif style == 2:
                headers["Idempotency_Key"] = uuid.uuid4().hex
            answer = mine.act(game, match_id, token, action, **headers)
            if answer.status_code == 200:
                accepted.append(answer.json()["version"])
                if style == 2:  # the client never saw the answer: it retries
                    again = mine.act(game, match_id, token, action, **headers)
                    assert again.status_code == 200, again.text
                    assert again.headers.get("Idempotent-Replayed") == "true"
                    assert again.json() == answer.json()
                    replayed.append(again.json()["version"])
            elif answer.status_code not in (409, 412, 422):
                unexpected.append(answer.text)

    pool = [threading.Thread(target=client, args=(w,)) for w in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert not unexpected, unexpected[:3]
    assert len(accepted) == len(set(accepted)), "two actions landed on one version"
    assert set(replayed) <= set(accepted)
    version = int(redis_client.hget(match_key(match_id), "v"))
    assert sorted(accepted) == list(range(2, version + 1)), "an accepted action was lost"
    match, events = assert_replays(redis_client, match_id)
    assert sum(event["type"] == "action" for event in events) == len(accepted)
    assert GAMES[game].outcome(match["state"]) is not None, "the match did not finish in time"


MATCHES = 1000
MOVES = 2  # per match: 3,000 requests in all, interleaved across every match


def test_a_thousand_matches_in_parallel(live, redis_client):
    """1,000 matches of every game, created together, then played move by
    move in rounds across all of them from a pool of 16 threads."""
    local = threading.local()

    def api() -> ApiClient:
        if not hasattr(local, "api"):
            local.api = ApiClient(live.base, requests.Session())
        return local.api

    def plan(index: int) -> tuple[str, int, list[tuple[int, dict]]]:
        """Each match's first moves, chosen at random by the engine itself."""
        game_name = GAME_NAMES[index % len(GAME_NAMES)]
        game = GAMES[game_name]
        state = new_match(game, 2, index, OPTIONS.get(game_name))
        rng = random.Random(index)
        moves = []
        for _ in range(MOVES):
            seat = rng.choice(game.to_act(state))
            action = rng.choice(game.legal_actions(state, seat))
            game.apply(state, seat, action)
            moves.append((seat, orjson.loads(orjson.dumps(action))))
        return game_name, index, moves

    plans = [plan(index) for index in range(MATCHES)]
    with ThreadPoolExecutor(16) as pool:
        created = list(pool.map(lambda p: create(api(), p[0], 2, p[1]), plans))

        def play(index: int, move: int) -> int:
            game_name, _, moves = plans[index]
            match_id, tokens = created[index]
            seat, action = moves[move]
            return api().act(game_name, match_id, tokens[seat], action).status_code

        for move in range(MOVES):
            statuses = list(pool.map(lambda i, m=move: play(i, m), range(MATCHES)))
            assert set(statuses) == {200}, sorted(set(statuses))
    ids = {match_id for match_id, _ in created}
    assert len(ids) == MATCHES
    for (game_name, _, moves), (match_id, _) in zip(plans, created, strict=True):
        match, events = assert_replays(redis_client, match_id)
        assert match["game"] == game_name
        assert int(redis_client.hget(match_key(match_id), "v")) == 1 + MOVES
        logged = [(e["seat"], e["action"]) for e in events if e["type"] == "action"]
        assert logged == moves, "a move is missing, doubled or in another match's log"


@pytest.mark.parametrize("game", GAME_NAMES)
def test_racing_identical_retries_play_once(live, redis_client, game):
    """Ten threads send the very same action with the same Idempotency-Key
    at once: it is played once, and every answer is that one answer."""
    api = ApiClient(live.base)
    match_id, tokens = create(api, game, 2, seed=3)
    seat = GAMES[game].to_act(new_match(GAMES[game], 2, 3, OPTIONS.get(game)))[0]
    action = api.legal(game, match_id, tokens[seat]).json()["actions"][0]
    barrier = threading.Barrier(10)
    answers: list[requests.Response] = []

    def retry() -> None:
        mine = ApiClient(live.base)
        barrier.wait()
        answers.append(mine.act(game, match_id, tokens[seat], action, Idempotency_Key="same"))

    pool = [threading.Thread(target=retry) for _ in range(10)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    played = [a for a in answers if a.status_code == 200]
    assert len(played) == 10, [a.text for a in answers if a.status_code != 200]
    assert len({a.content for a in played}) == 1
    assert sum(a.headers.get("Idempotent-Replayed") != "true" for a in played) == 1
    _, events = assert_replays(redis_client, match_id)
    assert sum(event["type"] == "action" for event in events) == 1


@pytest.mark.parametrize("game", GAME_NAMES)
def test_processes_playing_through_each_others_stale_memory(redis_url, redis_client, game):
    """Two server processes (two apps, one Redis), each remembering the
    matches it last read or wrote: every request goes to either at random,
    so most actions start from a remembered match that has moved on. Each
    legal action is accepted, If-Match naming the current version too, and
    the stored state is the replay of the log."""
    from service.app import create_app

    apps = [
        create_app({"REDIS_URL": redis_url, "RATELIMIT_ENABLED": False}).test_client()
        for _ in range(2)
    ]
    rng = random.Random(game)
    body = {"players": [{"name": "A"}, {"name": "B"}], "seed": 7, "options": OPTIONS.get(game, {})}
    match = apps[0].post(f"/v1/games/{game}/matches", json=body).get_json()
    url = f"/v1/games/{game}/matches/{match['id']}"
    tokens = [seat["token"] for seat in match["seats"]]
    version = match["version"]
    for _ in range(3000):
        current = rng.choice(apps).get(url).get_json()
        if current["status"] == "finished":
            break
        seat = rng.choice(current["to_act"])
        headers = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = rng.choice(apps).get(url + "/legal-actions", headers=headers).get_json()
        if rng.random() < 0.3:
            headers["If-Match"] = f'"{legal["version"]}"'
        played = rng.choice(apps).post(
            url + "/actions", json=rng.choice(legal["actions"]), headers=headers
        )
        assert played.status_code == 200, played.get_data(as_text=True)
        assert played.get_json()["version"] == legal["version"] + 1
        version = played.get_json()["version"]
    else:
        pytest.fail("the match did not end")
    assert_replays(redis_client, match["id"])
    assert int(redis_client.hget(match_key(match["id"]), "v")) == version
