"""Matches made and played over HTTP, as any client makes and plays them."""

from __future__ import annotations

import random
import time
from typing import Any

import orjson

from engines import GAMES
from service.domain.matches import engine_options
from service.store.matches import log_key, match_key
from tests.support.client import ApiClient

# Bounds on a random match: no game here lasts longer, and a bot that has
# not moved in this time is stuck.
MAX_ACTIONS = 20_000
BOT_PATIENCE_S = 40


def create_match(
    api: ApiClient, game: str, players: int | list[dict[str, Any]] = 2, **body: Any
) -> tuple[str, list[str | None]]:
    """Create a match and check it was created: its id and each seat's token
    (None for an open seat or a bot). ``players`` is a number of named seats
    (P0, P1, ...) or the seats themselves; ``body`` the rest (seed, options...)."""
    if isinstance(players, int):
        players = [{"name": f"P{i}"} for i in range(players)]
    created = api.create(game, {"players": players, **body})
    assert created.status_code == 201, created.text
    match = created.json()
    return match["id"], [seat.get("token") for seat in match["seats"]]


def play_out(
    api: ApiClient,
    game: str,
    match_id: str,
    tokens: list[str | None],
    rng: random.Random | int = 0,
    moves: int | None = None,
) -> dict[str, Any]:
    """Random legal actions by the seats whose tokens are given (bots play
    theirs) until the match ends, or ``moves`` of them; the match as it then
    is. Every action is accepted when no bot plays beside them."""
    rng = rng if isinstance(rng, random.Random) else random.Random(rng)
    with_bots = None in tokens
    match = api.get(game, match_id).json()
    played = 0
    bots_since = None
    for _ in range(MAX_ACTIONS * 10):
        if match["status"] == "finished" or played == moves:
            return match
        people = [seat for seat in match["to_act"] if tokens[seat] is not None]
        if not people:  # a bot's turn
            bots_since = bots_since or time.monotonic()
            waited = time.monotonic() - bots_since
            assert waited < BOT_PATIENCE_S, f"no bot move in {waited:.0f} s: {match}"
            time.sleep(0.01)
            match = api.get(game, match_id).json()
            continue
        bots_since = None
        seat = rng.choice(people)
        actions = api.legal(game, match_id, tokens[seat]).json()["actions"]
        answer = api.act(game, match_id, tokens[seat], rng.choice(actions)) if actions else None
        if answer is not None and answer.status_code == 200:
            match = answer.json()
            played += 1
            continue
        # a bot played in between (a simultaneous turn, or one that just began)
        assert with_bots, answer.text if answer is not None else f"seat {seat}: no legal action"
        match = api.get(game, match_id).json()
    raise AssertionError("the match did not end")


def replay_from_log(redis_client: Any, match_id: str) -> tuple[dict, dict, list[dict]]:
    """The stored match, the state its log replays to from its seed, and the
    log's events."""
    match = orjson.loads(redis_client.hget(match_key(match_id), "d"))
    game = GAMES[match["game"]]
    state = game.setup(engine_options(match["options"]), len(match["seats"]), match["seed"])
    entries = redis_client.xrange(log_key(match_id), "-", "+")
    events = [orjson.loads(fields[b"e"]) for _, fields in entries]
    for event in events:
        if event["type"] == "action":
            game.apply(state, event["seat"], event["action"])
    return match, state, events


def events_of(api: ApiClient, game: str, match_id: str, token: str | None = None) -> list[dict]:
    """Every event of the match's log that ``token``'s seat (None: a
    spectator) may see, from the first on."""
    answer = api.http.get(
        f"{api.base}/v1/games/{game}/matches/{match_id}/events",
        params={"limit": 1000},
        headers=api._auth(token),
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["events"]


def long_match(matches: Any, game: str, actions: int, options: dict | None = None) -> str:
    """A finished match of ``actions`` random legal actions between two
    people, played in-process (``Matches.play``: a long match made in
    seconds rather than over HTTP), ended by the first seat's resignation."""
    from service.domain import lifecycle

    engine = GAMES[game]
    options = engine.options_schema().load(options or {})
    players = [{"name": "Ada"}, {"name": "Bob"}]
    created = matches.create(engine, players, options, seed=35)
    match_id, tokens = created["id"], [seat["token"] for seat in created["seats"]]
    state = engine.setup(engine_options(created["options"]), 2, 35)
    rng = random.Random(35)
    for _ in range(actions):
        seat = rng.choice(engine.to_act(state))
        action = rng.choice(engine.legal_actions(state, seat))
        matches.play(engine, match_id, tokens[seat], action)
        engine.apply(state, seat, action)
        assert engine.outcome(state) is None, "the match ended by its rules: ask fewer actions"
    lifecycle.resign(matches, engine, match_id, tokens[0])
    return match_id
