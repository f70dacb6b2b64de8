"""GET /v1/games/G/matches/{id}/replay: a finished match step by step, for
anyone, from its record; every hand at the end; never a token."""

from __future__ import annotations

import uuid

import pytest

from engines import GAMES
from service.domain.clocks import engine_options
from tests.support.matches import create_match, play_out, replay_from_log
from tests.support.problems import assert_problem

# Short matches: a person (random legal moves) against bots, seeded (practice).
MATCHES = {
    "dekal": ([{"name": "Ada"}, {"bot": "greedy"}], {}),
    "pacal": ([{"name": "Ada"}, {"bot": "greedy"}], {"manches_to_win": 1}),
    "gaudi": ([{"name": "Ada"}, {"bot": "greedy"}, {"bot": "random"}], {"short_game": True}),
    "ducale": ([{"name": "Ada"}, {"bot": "greedy"}], {"target_score": 1}),
}


def replay_of(api, game: str, match_id: str):
    return api.http.get(f"{api.base}/v1/games/{game}/matches/{match_id}/replay")


def keys_in(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


@pytest.mark.parametrize("game", list(MATCHES))
def test_a_finished_match_replays_step_by_step_with_every_hand_at_the_end(
    api, live_bots, redis_client, game
):
    players, options = MATCHES[game]
    match_id, tokens = create_match(api, game, players, options=options, seed=35)
    play_out(api, game, match_id, tokens, rng=35)
    record = api.http.get(f"{api.base}/v1/games/{game}/matches/{match_id}/record").json()

    answer = replay_of(api, game, match_id)
    assert answer.status_code == 200, answer.text
    assert answer.headers["Cache-Control"] == "public, max-age=86400"
    replay = answer.json()
    engine = GAMES[game]
    assert replay["id"] == match_id and replay["game"] == game
    assert replay["seats"] == record["seats"]
    assert replay["outcome"] == record["outcome"]
    assert replay["endings"] == record["endings"]
    steps = replay["steps"]
    assert len(steps) == len(record["actions"]) + 1 > 2
    assert [step["index"] for step in steps] == list(range(len(steps)))
    start = engine.setup(engine_options(record["options"]), len(players), record["seed"])
    assert steps[0] == {
        "index": 0,
        "seat": None,
        "action": None,
        "events": [],
        "view": engine.view(start, None),
    }
    for step, done in zip(steps[1:], record["actions"], strict=True):
        assert (step["seat"], step["action"], step["events"]) == (
            done["seat"],
            done["action"],
            done["events"],
        )
    assert steps[-1]["view"] == record["final_view"]
    # every seat's own view at the end: the person's as the API shows it to
    # its token, each seat's as the engine shows it from the stored state
    _, state, _ = replay_from_log(redis_client, match_id)
    assert replay["hands"] == [engine.view(state, seat) for seat in range(len(players))]
    assert replay["hands"][0] == api.get(game, match_id, tokens[0]).json()["view"]
    assert "token" not in keys_in(replay)
    assert tokens[0] not in answer.text
    # the second ask is served from the process's cache, the same
    assert replay_of(api, game, match_id).content == answer.content


def test_a_match_not_over_has_no_replay_yet(api):
    waiting, _ = create_match(api, "dekal", [{"name": "Ada"}, {}])
    assert_problem(replay_of(api, "dekal", waiting), 409, "match_not_over")
    active, tokens = create_match(api, "pacal", 2)
    play_out(api, "pacal", active, tokens, moves=1)
    assert_problem(replay_of(api, "pacal", active), 409, "match_not_over")


def test_an_unknown_match_or_game_has_no_replay(api):
    assert_problem(replay_of(api, "gaudi", uuid.uuid4().hex), 404, "match_not_found")
    assert_problem(replay_of(api, "gaudi", "not-an-id"), 404, "match_not_found")
    other, _ = create_match(api, "dekal", [{"name": "Ada"}, {}])
    assert_problem(replay_of(api, "ducale", other), 404, "match_not_found")
    assert replay_of(api, "chess", uuid.uuid4().hex).status_code == 404
