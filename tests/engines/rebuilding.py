"""What every game's ``state_from_view`` tests share: the view as a bot
client receives it (through JSON), the state rebuilt from it, and the two
properties every game must keep: the rebuilt state gives back the same view
to every seat and a spectator, and the same turn and legal actions."""

from __future__ import annotations

import random
from typing import Any

import orjson

from engines.core import Game, Seat, State


def seats(players: int) -> list[Seat | None]:
    """Every seat, and a spectator (None) first."""
    return [None, *range(players)]


def wire_view(game: Game, state: State, seat: Seat | None) -> dict[str, Any]:
    """The view as the bot client gets it, through JSON."""
    return orjson.loads(orjson.dumps(game.view(state, seat)))


def rebuilt(game: Game, state: State, seat: Seat | None, rng: random.Random) -> State:
    again = game.state_from_view(wire_view(game, state, seat), seat, rng)
    assert orjson.loads(orjson.dumps(again)) == again, "a plain JSON state"
    return again


def assert_same_view(game: Game, state: State, players: int, rng: random.Random) -> None:
    for seat in seats(players):
        seen = wire_view(game, state, seat)
        assert game.view(game.state_from_view(seen, seat, rng), seat) == seen


def assert_same_legal_actions(game: Game, state: State, players: int, rng: random.Random) -> None:
    for seat in range(players):
        again = rebuilt(game, state, seat, rng)
        assert game.to_act(again) == game.to_act(state)
        assert game.legal_actions(again, seat) == game.legal_actions(state, seat)
