"""Hostile clients against the deal: nobody chooses the randomness others play.

The attack, as seen over HTTP against `ludotheque serve`: the creator sends
`seed` and leaves a seat open; whoever joins plays against someone who
computes every hidden card (the other hands, the stock order, the Gaudí
pile and objectives, Dékal's face-down values) by calling the engine's
`setup` offline. These tests make that attack and expect it refused; the
seed of a match with another player in it is always the server's.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from engines import GAMES
from service.domain.fairness import verify
from service.store.matches import match_key
from tests.attacks.test_secrets import hidden_cards
from tests.engines.conformance import new_match
from tests.support.client import ApiClient
from tests.support.problems import assert_problem

GAME_NAMES = sorted(GAMES)
OPTIONS = {"ducale": {"target_score": 1}}
SEED = 1_234_567_890_123
LUDOTHEQUE = str(Path(sys.executable).with_name("ludotheque"))


def plain(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value))


def body(game: str, players: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    found = {"players": players, **extra}
    if game in OPTIONS:
        found["options"] = OPTIONS[game]
    return found


def follow_offline(api: ApiClient, game_name: str, match_id: str, tokens: list[str]) -> Any:
    """The attack's second half: the creator rebuilds the match from the
    seed it chose, plays a few turns in step with the server, and shows that
    its offline state is the real one (the victim's own view, hand included,
    and every card revealed so far). Returns what the creator knew that it
    must not: the hidden cards as the match began."""
    game = GAMES[game_name]
    offline = new_match(game, 2, SEED, OPTIONS.get(game_name))
    predicted = hidden_cards(game_name, offline, 0)
    for _ in range(6):
        to_act = game.to_act(offline)
        if not to_act:
            break
        seat = to_act[0]
        action = plain(game.legal_actions(offline, seat)[0])
        played = api.act(game_name, match_id, tokens[seat], action)
        assert played.status_code == 200, played.text
        game.apply(offline, seat, copy.deepcopy(action))
        served = api.get(game_name, match_id, tokens[1]).json()["view"]
        assert served == plain(game.view(offline, 1)), "the offline state left the real one"
    return predicted


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_creator_cannot_choose_the_seed_of_a_match_with_an_open_seat(live, game):
    api = ApiClient(live.base, live.http)
    created = api.create(game, body(game, [{"name": "Mallory"}, {}], seed=SEED))
    if created.status_code == 201:
        match = created.json()
        joined = api.join(game, match["id"], 1, "Victim")
        assert joined.status_code == 201, joined.text
        tokens = [match["seats"][0]["token"], joined.json()["token"]]
        known = follow_offline(api, game, match["id"], tokens)
        pytest.fail(
            f"the creator chose the seed, left a seat open, and knew every hidden card "
            f"by the engine's setup offline: {str(known)[:300]}"
        )
    assert_problem(created, 422, "seed_not_allowed")


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_seed_is_allowed_when_every_seat_is_the_creators_or_a_bot(live, game):
    api = ApiClient(live.base, live.http)
    created = api.create(game, body(game, [{"name": "Me"}, {"bot": "random"}], seed=SEED))
    assert created.status_code == 201, created.text
    match = created.json()
    assert match["seeded"] is True
    assert api.get(game, match["id"]).json()["seeded"] is True
    first = api.events(game, match["id"]).json()["events"][0]
    assert first["type"] == "match_created" and first["seeded"] is True


def test_nobody_joins_a_seeded_match_even_if_a_seat_opens(live, redis_client):
    """However a seat of a seeded match comes to be open (a feature that
    frees seats, a hand-edited store), joining it is refused."""
    api = ApiClient(live.base, live.http)
    created = api.create("dekal", body("dekal", [{"name": "Me"}, {"name": "Me too"}], seed=SEED))
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    stored = orjson.loads(redis_client.hget(match_key(match_id), "d"))
    stored["seats"][1] = {"name": None, "token": None, "bot": None}
    redis_client.hset(match_key(match_id), "d", orjson.dumps(stored))
    assert api.get("dekal", match_id).json()["status"] == "waiting"
    joined = api.join("dekal", match_id, 1, "Victim")
    assert joined.status_code == 422, joined.text
    assert joined.json()["code"] == "seed_not_allowed"


def test_a_loser_cannot_doctor_the_record_into_a_win(live, tmp_path):
    """Mallory resigns against Victor, then edits the record she fetched:
    the names swapped (so "Mallory" won), the match's id changed to one she
    did win. The replay alone cannot see either: the server's signature
    over every field does, with the key it publishes."""
    api = ApiClient(live.base, live.http)
    created = api.create("pacal", body("pacal", [{"name": "Mallory"}, {"name": "Victor"}]))
    match = created.json()
    resign = f"{api.base}/v1/games/pacal/matches/{match['id']}/resign"
    auth = {"Authorization": f"Bearer {match['seats'][0]['token']}"}
    assert api.http.post(resign, headers=auth).status_code == 200
    record = api.http.get(f"{api.base}/v1/games/pacal/matches/{match['id']}/record").json()
    assert record["outcome"]["winners"] == [1]
    doctored = copy.deepcopy(record)
    doctored["seats"][0]["name"], doctored["seats"][1]["name"] = "Victor", "Mallory"
    doctored["id"] = "0" * 32
    key = bytes.fromhex(api.http.get(f"{api.base}/v1/record-key").json()["public_key"])
    assert verify(record, key) == []
    assert verify(doctored, key), "a record with swapped names and another id verified"
    path = tmp_path / "record.json"
    path.write_bytes(orjson.dumps(doctored))
    checked = subprocess.run(
        [LUDOTHEQUE, "verify", "--server", live.base, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 1, checked.stdout
    assert "FAILED: the signature does not hold" in checked.stderr
