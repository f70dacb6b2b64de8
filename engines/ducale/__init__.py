"""Ducale, the French rummy: the engine (RULES.md §4).

``GAME`` binds the rules (``rules.py``, melds in ``melds.py``) and the wire
schemas (``schemas.py``) into one object satisfying :class:`engines.core.Game`.
"""

from __future__ import annotations

import random
from typing import Any

from marshmallow import Schema

from engines.core import Action, Event, Seat, State
from engines.ducale import bots, rules, schemas


class DucaleGame:
    """Ducale rummy, 2 to 6 players."""

    name = rules.NAME
    title = rules.TITLE
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    options_schema: type[Schema] = schemas.DucaleOptionsSchema
    action_schemas: dict[str, type[Schema]] = schemas.ACTION_SCHEMAS
    view_schema: type[Schema] = schemas.DucaleViewSchema
    outcome_schema: type[Schema] = schemas.DucaleOutcomeSchema

    def setup(self, options: dict[str, Any], n_players: int, seed: int) -> State:
        return rules.setup(options, n_players, seed)

    def to_act(self, state: State) -> list[Seat]:
        return rules.to_act(state)

    def legal_actions(self, state: State, seat: Seat) -> list[Action]:
        return rules.legal_actions(state, seat)

    def apply(self, state: State, seat: Seat, action: Action) -> list[Event]:
        return rules.apply(state, seat, action)

    def view(self, state: State, seat: Seat | None) -> dict[str, Any]:
        return rules.view(state, seat)

    def outcome(self, state: State) -> dict[str, Any] | None:
        return rules.outcome(state)

    # The bots (engines/ai): what a seat cannot see, resampled; the game's
    # own heuristics and search hooks.

    def determinize(self, state: State, seat: Seat | None, rng: random.Random) -> State:
        return rules.determinize(state, seat, rng)

    state_from_view = staticmethod(rules.state_from_view)

    def evaluate(self, state: State, seat: Seat) -> float:
        return bots.evaluate(state, seat)

    def greedy(self, state: State, seat: Seat, rng: random.Random) -> Action:
        return bots.greedy(state, seat, rng)

    def search_actions(self, state: State, seat: Seat) -> list[Action]:
        return bots.search_actions(state, seat)

    def rollout_action(self, state: State, seat: Seat, rng: random.Random) -> Action:
        return bots.rollout_action(state, seat, rng)

    def playout_value(self, start: State, state: State) -> list[float] | None:
        return bots.playout_value(start, state)


GAME = DucaleGame()

__all__ = ["GAME", "DucaleGame"]
