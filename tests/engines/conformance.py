"""Checks every engine must pass, shared by each game's tests.

``random_playout`` plays a match with uniformly random legal actions and
checks the engine contract at every step; games call it from their own
property tests, and ``test_conformance.py`` runs it over the registry.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson

from engines.core import Game, IllegalAction, State


def new_match(game: Game, n_players: int, seed: int, options: dict | None = None) -> State:
    loaded = game.options_schema().load(options or {})
    return game.setup(loaded, n_players, seed)


def assert_view_valid(game: Game, view: dict[str, Any]) -> None:
    errors = game.view_schema().validate(view)
    assert not errors, f"view does not match {game.view_schema.__name__}: {errors}"


def random_playout(
    game: Game,
    n_players: int,
    seed: int,
    options: dict | None = None,
    max_steps: int = 20_000,
    check_views: bool = True,
) -> tuple[State, list[tuple[int, dict]]]:
    """Play a random match to the end; return the final state and the log.

    At every step: someone is to act; every legal action loads through its
    schema unchanged; the state stays JSON-serialisable; views match the view
    schema. At the end: an outcome with winners and scores.
    """
    rng = random.Random(seed)
    state = new_match(game, n_players, seed, options)
    log: list[tuple[int, dict]] = []
    for _ in range(max_steps):
        if check_views:
            for viewer in [None, *range(n_players)]:
                assert_view_valid(game, game.view(state, viewer))
        seats = game.to_act(state)
        if not seats:
            break
        assert game.outcome(state) is None
        seat = rng.choice(seats)
        actions = game.legal_actions(state, seat)
        assert actions, f"seat {seat} must act but has no legal action"
        action = rng.choice(actions)
        loaded = game.action_schemas[action["type"]]().load(action)
        assert loaded == action, "a legal action must load through its schema unchanged"
        events = game.apply(state, seat, action)
        assert isinstance(events, list)
        if not game.to_act(state):
            assert events and events[-1]["type"] == "match_over", "the end is announced"
        assert orjson.loads(orjson.dumps(state)) == state, "state must be plain JSON"
        log.append((seat, action))
    else:
        raise AssertionError(f"no end after {max_steps} actions")
    outcome = game.outcome(state)
    assert outcome is not None and isinstance(outcome["winners"], list)
    assert len(outcome["scores"]) == n_players
    errors = game.outcome_schema().validate(outcome)
    assert not errors, errors
    return state, log


def replay(
    game: Game, n_players: int, seed: int, log: list[tuple[int, dict]], options: dict | None = None
) -> State:
    state = new_match(game, n_players, seed, options)
    for seat, action in log:
        game.apply(state, seat, action)
    return state


def assert_illegal_leaves_state(game: Game, state: State, seat: int, action: dict) -> str:
    """Apply an action expected to be illegal; return its code."""
    before = copy.deepcopy(state)
    try:
        game.apply(state, seat, action)
    except IllegalAction as refused:
        assert state == before, "a refused action must leave the state untouched"
        return refused.code
    raise AssertionError(f"{action} was accepted")
