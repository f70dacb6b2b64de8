"""Ducale, the French rummy: the engine (RULES.md §4).

``GAME`` binds the rules (``rules.py``, melds in ``melds.py``) and the wire
schemas (``schemas.py``) into one object satisfying :class:`engines.core.Game`.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema

from engines.core import Action, Event, Seat, State
from engines.ducale import rules, schemas


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


GAME = DucaleGame()

__all__ = ["GAME", "DucaleGame"]
