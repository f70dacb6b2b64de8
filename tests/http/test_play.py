"""Every registered game, played at random over HTTP against a real Redis.

Each response is compared with what the engine gives when the same actions
are replayed locally, so the service neither loses, alters nor leaks
anything: views, legal actions, outcome and the redacted event log.
"""

from __future__ import annotations

import random

import orjson
import pytest
from flask import Flask

from engines import GAMES
from engines.core import Game, visible_to
from service.domain.problems import Problem
from service.http.actions import KEPT, ActionLoader
from service.store.matches import log_key
from tests.engines.conformance import new_match
from tests.support.client import ApiClient

GAME_NAMES = sorted(GAMES)
# Shorter matches where a game allows it, to keep the suite fast.
SHORT = {"ducale": {"target_score": 40}}


def create_full_match(api: ApiClient, game: Game, n_players: int, seed: int, options=None):
    body = {"players": [{"name": f"P{i}"} for i in range(n_players)], "seed": seed}
    if options is not None:
        body["options"] = options
    created = api.create(game.name, body)
    assert created.status_code == 201, created.text
    match = created.json()
    tokens = [seat["token"] for seat in match["seats"]]
    return match, tokens


def play_random(api: ApiClient, game: Game, n_players: int, seed: int, check_every: int = 1):
    """Play to the end; check each answer against a local replay of the engine."""
    rng = random.Random(seed)
    options = SHORT.get(game.name)
    match, tokens = create_full_match(api, game, n_players, seed, options)
    assert match["status"] == "active"
    state = new_match(game, n_players, seed, options)
    version = match["version"]
    for step in range(20_000):
        if step % check_every == 0:
            for seat in [None, *range(n_players)]:
                got = api.get(game.name, match["id"], None if seat is None else tokens[seat])
                assert got.status_code == 200, got.text
                viewer = "spectator" if seat is None else f"s{seat}"
                assert got.headers["ETag"] == f'"{version}-{viewer}"'
                body = got.json()
                assert body["view"] == orjson.loads(orjson.dumps(game.view(state, seat)))
                assert body["your_seat"] == seat
        to_act = game.to_act(state)
        if not to_act:
            break
        seat = rng.choice(to_act)
        legal = api.legal(game.name, match["id"], tokens[seat])
        assert legal.status_code == 200, legal.text
        actions = legal.json()["actions"]
        assert actions == orjson.loads(orjson.dumps(game.legal_actions(state, seat)))
        action = rng.choice(actions)
        played = api.act(game.name, match["id"], tokens[seat], action)
        assert played.status_code == 200, played.text
        game.apply(state, seat, action)
        version += 1
        assert played.json()["version"] == version
        assert played.json()["view"] == orjson.loads(orjson.dumps(game.view(state, seat)))
    final = api.get(game.name, match["id"]).json()
    assert final["status"] == "finished"
    assert final["to_act"] == []
    revealed = {k: final["outcome"].pop(k) for k in ("seeded", "seed", "salt")}
    assert revealed["seeded"] is True and revealed["seed"] == seed
    assert final["outcome"] == orjson.loads(orjson.dumps(game.outcome(state)))
    return match["id"], tokens


@pytest.mark.parametrize("name", GAME_NAMES)
def test_random_matches_over_http_agree_with_the_engine(live, name):
    game = GAMES[name]
    api = ApiClient(live.base, live.http)
    for n_players in sorted({game.min_players, game.max_players}):
        play_random(api, game, n_players, seed=1000 + n_players, check_every=7)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_event_log_is_redacted_per_seat(live, redis_client, name):
    game = GAMES[name]
    api = ApiClient(live.base, live.http)
    n_players = game.max_players
    match_id, tokens = play_random(api, game, n_players, seed=77, check_every=50)
    raw = [
        orjson.loads(fields[b"e"])
        for _, fields in redis_client.xrange(log_key(match_id), "-", "+")
    ]
    assert raw[-1]["type"] == "match_over"
    for seat in [None, *range(n_players)]:
        token = None if seat is None else tokens[seat]
        seen, after = [], 0
        while True:
            page = api.events(name, match_id, token, after=after).json()
            if page["next"] == after:
                break
            seen.extend(page["events"])
            after = page["next"]
        expected = [
            {k: v for k, v in event.items() if k != "to"}
            for event in raw
            if visible_to(event, seat)
        ]
        assert [{k: v for k, v in e.items() if k != "index"} for e in seen] == expected
        indexes = [e["index"] for e in seen]
        assert indexes == sorted(indexes) and len(set(indexes)) == len(indexes)


def test_an_action_body_met_again_loads_the_same_and_a_refused_one_is_refused_again():
    game = GAMES["dekal"]
    loader = ActionLoader({kind: schema() for kind, schema in game.action_schemas.items()})
    app = Flask(__name__)

    def load(body: bytes) -> dict:
        with app.test_request_context("/", method="POST", data=body):
            return loader.load()

    take = b'{"type": "take", "value": 5, "from": "right"}'
    first, again = load(take), load(take)
    assert first == again == {"type": "take", "value": 5, "from": "right"}
    assert first is not again and list(loader.loaded) == [take]
    again["value"] = 9  # a request's own copy
    assert load(take)["value"] == 5
    for refused in (b'{"type": "take", "value": 99, "from": "right"}', b'{"type": "x"}', b"[1]"):
        for _ in range(2):
            with pytest.raises(Problem):
                load(refused)
    assert list(loader.loaded) == [take]
    for value in range(KEPT + 5):
        body = b'{"type": "take", "value": %d, "from": "left"}' % (value % 8 + 1)
        assert load(body + b" " * (value // 8))["value"] == value % 8 + 1
    assert len(loader.loaded) <= KEPT
